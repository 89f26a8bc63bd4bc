import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, eventually, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

testWithKubectl(
  "14-daemons: async and sync daemons ping; the deletion waits for them, then the object is gone",
  async () => {
    await using c = await cluster();
    const runner = await KopfRunner.start(
      ["run", "-A", "--verbose", `${ROOT}examples/14-daemons/example.ts`],
      { kubeconfig: c.api.kubeconfig.path },
    );
    try {
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await runner.waitFor('=> Ping from an async daemon: field="value"');
      await runner.waitFor("Daemon 'backgroundSync' failed temporarily: Simulated failure.");
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
      await runner.waitFor('=> Ping from a sync daemon: field="value", retry=3', 10);
      assert.equal((await c.kubectl("delete", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await runner.waitFor("Daemon 'backgroundAsync' has exited gracefully.");
      await runner.waitFor("Daemon 'backgroundSync' has exited gracefully.");
      await runner.waitFor("Deleted, really deleted");
      const gone = await c.kubectl("get", "kopfexample", "kopf-example-1");
      assert.notEqual(gone.code, 0);
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    assert.match(runner.output, /Removing the finalizer, thus allowing the actual deletion\./);
  },
);
