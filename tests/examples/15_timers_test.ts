/**
 * 15-timers on a fake clock (KopfRunner's `clock`): the example's schedules — the sharp async
 * timer every 2 s, the sync timer only after 2 s without a change (`idle`), the counted pings
 * every 3 s — pass when the test advances the operator's clock, not in seconds of real time;
 * the I/O (kubectl, the watch, the patches) stays real. `advanceUntil` steps the clock by 10 ms
 * and gives each step a few real timer turns, so the watch events and patches of a step are in
 * before the next (the fake times asserted below keep a margin for them: a few steps).
 *
 * @module
 */
import assert from "node:assert/strict";
import { FakeClock, KopfRunner } from "../../testing.ts";
import { cluster, eventually, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

testWithKubectl(
  "15-timers: sharp and idle timers ping; a timer's result lands in the status",
  async () => {
    await using c = await cluster();
    const clock = new FakeClock({ start: new Date() });
    const runner = await KopfRunner.start(
      ["run", "-A", "--verbose", `${ROOT}examples/15-timers/example.ts`],
      { kubeconfig: c.api.kubeconfig.path, clock },
    );
    const count = (text: string) => runner.output.split(text).length - 1;
    const until = async (what: string, check: () => boolean, seconds: number) => {
      assert.ok(await clock.advanceUntil(check, seconds), `${what}: ${runner.output}`);
    };
    const ASYNC = 'Ping from an async timer: field="value"';
    const SYNC = 'Ping from a sync timer: field="value"';
    try {
      // Created at `created` of the fake time: nobody advances the clock during kubectl's call.
      const created = clock.now();
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await until("the first async ping", () => count(ASYNC) === 1, 10);
      assert.equal(count(SYNC), 0, "idle: not yet");
      // The sync timer: once the object has not changed for 2 s.
      await until("the first sync ping", () => count(SYNC) === 1, 10);
      const idle = clock.now() - created;
      assert.ok(idle >= 2000, `the first sync ping ${idle} ms after the creation`);
      // Sharp: the async timer's third ping 4 s after its first (which came once the creation
      // was processed: a batch window and the I/O's steps after it).
      await until("three async pings", () => count(ASYNC) === 3, 10);
      const third = clock.now() - created;
      assert.ok(third >= 4000 && third < 5000, `the third async ping at ${third} ms`);
      const pings = await eventually(
        "the counted pings in the status",
        async () => {
          await clock.advance(0.05);
          return Number(
            (await c.kubectl(
              "get",
              "kopfexample",
              "kopf-example-1",
              "-o",
              "jsonpath={.status.countedPings}",
            )).stdout,
          );
        },
        (n) => n >= 1,
      );
      assert.ok(pings >= 1);
      assert.equal((await c.kubectl("delete", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await until("the deletion", () => runner.output.includes("Deleted, really deleted"), 30);
    } finally {
      const stopping = runner.stop();
      let stopped = false;
      void stopping.finally(() => (stopped = true));
      await clock.advanceUntil(() => stopped, 60); // the exit's waits are on the fake clock too
      await stopping;
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    assert.match(
      runner.output,
      /\[default\/kopf-example-1\] Timer 'everyFewSecondsAsync' succeeded\./,
    );
  },
);
