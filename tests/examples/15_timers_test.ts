import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, eventually, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

testWithKubectl(
  "15-timers: sharp and idle timers ping; a timer's result lands in the status",
  async () => {
    await using c = await cluster();
    const runner = await KopfRunner.start(
      ["run", "-A", "--verbose", `${ROOT}examples/15-timers/example.ts`],
      { kubeconfig: c.api.kubeconfig.path },
    );
    try {
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await runner.waitFor('Ping from an async timer: field="value"');
      assert.doesNotMatch(runner.output, /Ping from a sync timer/, "idle: not yet");
      await runner.waitFor('Ping from a sync timer: field="value"', 10);
      const pings = await eventually(
        "the counted pings in the status",
        async () =>
          Number(
            (await c.kubectl(
              "get",
              "kopfexample",
              "kopf-example-1",
              "-o",
              "jsonpath={.status.countedPings}",
            )).stdout,
          ),
        (n) => n >= 1,
      );
      assert.ok(pings >= 1);
      assert.equal((await c.kubectl("delete", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await runner.waitFor("Deleted, really deleted");
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    assert.match(
      runner.output,
      /\[default\/kopf-example-1\] Timer 'everyFewSecondsAsync' succeeded\./,
    );
  },
);
