/**
 * 14-daemons on a fake clock (KopfRunner's `clock`): the async daemon's pings a second apart, the
 * sync daemon's three failures a second apart before it pings, and the deletion that waits for
 * both — on the operator's clock, advanced by the test, not in seconds of real time; the I/O
 * (kubectl, the watch, the patches) stays real. `advanceUntil` steps the clock by 10 ms and gives
 * each step a few real timer turns, so a step's watch events and patches are in before the next
 * (the fake times asserted below keep a margin of a second for them).
 *
 * @module
 */
import assert from "node:assert/strict";
import { FakeClock, KopfRunner } from "../../testing.ts";
import { cluster, eventually, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

testWithKubectl(
  "14-daemons: async and sync daemons ping; the deletion waits for them, then the object is gone",
  async () => {
    await using c = await cluster();
    const clock = new FakeClock({ start: new Date() });
    const runner = await KopfRunner.start(
      ["run", "-A", "--verbose", `${ROOT}examples/14-daemons/example.ts`],
      { kubeconfig: c.api.kubeconfig.path, clock },
    );
    const until = async (what: string, text: string, seconds = 10) => {
      const seen = () => runner.output.includes(text);
      assert.ok(await clock.advanceUntil(seen, seconds), `${what}: ${runner.output}`);
    };
    try {
      // Created at `created` of the fake time: nobody advances the clock during kubectl's call.
      const created = clock.now();
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await until("the async ping", '=> Ping from an async daemon: field="value"');
      await until("a failure", "Daemon 'backgroundSync' failed temporarily: Simulated failure.");
      // Three failures, each retried after its 1 s delay, then the ping (retry 3) at 3 s.
      await until("the sync ping", '=> Ping from a sync daemon: field="value", retry=3');
      // The line comes over real I/O (the operator's output): meanwhile the clock may have
      // stepped on to a later timer (the async daemon's), as it did once in CI (4000 ms). What is
      // tested: three retries of 1 s before the ping, not fewer (< 3 s), not 2 s each (≥ 6 s).
      const pinged = clock.now() - created;
      assert.ok(pinged >= 3000 && pinged < 6000, `the sync ping at ${pinged} ms`);
      const message = await eventually(
        "the sync daemon's failures in the status",
        async () =>
          (await c.kubectl(
            "get",
            "kopfexample",
            "kopf-example-1",
            "-o",
            "jsonpath={.status.message}",
          )).stdout,
        (m) => m === "Failed 3 times.",
      );
      assert.equal(message, "Failed 3 times.");
      assert.equal((await c.kubectl("delete", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await until("the async daemon's exit", "Daemon 'backgroundAsync' has exited gracefully.");
      await until("the sync daemon's exit", "Daemon 'backgroundSync' has exited gracefully.");
      await until("the deletion", "Deleted, really deleted", 30);
      const gone = await c.kubectl("get", "kopfexample", "kopf-example-1");
      assert.notEqual(gone.code, 0);
    } finally {
      const stopping = runner.stop();
      let stopped = false;
      void stopping.finally(() => (stopped = true));
      await clock.advanceUntil(() => stopped, 60); // the exit's waits are on the fake clock too
      await stopping;
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    assert.match(runner.output, /Removing the finalizer, thus allowing the actual deletion\./);
  },
);
