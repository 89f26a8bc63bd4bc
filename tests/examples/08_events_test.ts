import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, eventually, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

testWithKubectl(
  "08-events: raw event handlers see every event; an error in one is logged, the other runs on",
  async () => {
    await using c = await cluster();
    const runner = await KopfRunner.start(
      ["run", "-A", "--verbose", `${ROOT}examples/08-events/example.ts`],
      { kubeconfig: c.api.kubeconfig.path },
    );
    try {
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await runner.waitFor("Event received: ADDED kopf-example-1");
      const patched = await c.kubectl(
        "patch",
        "kopfexample",
        "kopf-example-1",
        "--type=merge",
        "-p",
        '{"spec":{"field":"changed"}}',
      );
      assert.equal(patched.code, 0, patched.stderr);
      await runner.waitFor("Event received: MODIFIED kopf-example-1");
      assert.equal((await c.kubectl("delete", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await runner.waitFor("Event received: DELETED kopf-example-1");
      await eventually(
        "the failures are logged",
        () => runner.output.match(/Handler 'event_fn_with_error' failed with an exception/g),
        (m) => (m?.length ?? 0) >= 3,
      );
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    // Each failure is logged with the error, once per event; nothing is stored or retried.
    assert.match(runner.output, /\[default\/kopf-example-1\] Handler 'event_fn_with_error' failed/);
    assert.match(runner.output, /Oops!/);
    assert.match(
      runner.output,
      /\[default\/kopf-example-1\] Handler 'normal_event_fn' succeeded\./,
    );
    assert.doesNotMatch(runner.output, /Will retry/);
  },
);
