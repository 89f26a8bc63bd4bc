/**
 * Timers: functions run on a schedule for each object while it exists.
 *
 * - `everyFewSecondsSync` runs every second, but only once the object has not changed for
 *   2 seconds (`idle`); a change makes it wait for the next quiet period.
 * - `everyFewSecondsAsync` runs every 2 seconds sharp: on the grid of its first run, however
 *   long each run takes.
 * - `countedPings` returns a value: it lands in `status.countedPings` (and, as it changes
 *   the object, it would reset idle timers — so this one has none).
 *
 * The intervals are short so that the demo (and its test) show several runs quickly.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/15-timers/example.ts`
 * then `kubectl apply -f examples/obj.yaml`.
 */
import * as kopf from "../../mod.ts";

kopf.timer(
  "kopfexamples",
  { idle: 2, interval: 1 },
  function everyFewSecondsSync({ spec, logger }) {
    logger.info(`Ping from a sync timer: field=${JSON.stringify(spec.field)}`);
  },
);

kopf.timer(
  "kopfexamples",
  { interval: 2, sharp: true },
  async function everyFewSecondsAsync({ spec, logger, signal }) {
    logger.info(`Ping from an async timer: field=${JSON.stringify(spec.field)}`);
    await kopf.sleep(0.5, signal); // takes a while; the next run is still 2 s after this one's start
  },
);

let pings = 0;
kopf.timer("kopfexamples", { interval: 3 }, function countedPings() {
  return ++pings;
});
