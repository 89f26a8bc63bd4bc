import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

testWithKubectl(
  "01-minimal: the creation handler runs, its result lands in the status, deletion is noticed",
  async () => {
    await using c = await cluster();
    const runner = await KopfRunner.start(
      ["run", "-A", "--verbose", `${ROOT}examples/01-minimal/example.ts`],
      { kubeconfig: c.api.kubeconfig.path },
    );
    try {
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await runner.waitFor("All handlers succeeded for creation.");
      const got = await c.kubectl(
        "get",
        "kopfexample",
        "kopf-example-1",
        "-o",
        "jsonpath={.status.create_fn.message}",
      );
      assert.equal(got.stdout, "hello world");
      // The README's quick start: the MESSAGE printer column shows the handler's result.
      const table = await c.kubectl("get", "kopfexamples");
      const [header, row] = table.stdout.trim().split("\n");
      assert.match(header!, /^NAME\s+DURATION\s+CHILDREN\s+MESSAGE$/);
      assert.match(row!, /^kopf-example-1\s+1m\s+.*\s+hello world$/);
      assert.equal((await c.kubectl("delete", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await runner.waitFor("Deleted, really deleted");
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    assert.match(runner.output, /And here we are! Created kopf-example-1/);
    assert.match(runner.output, /\[default\/kopf-example-1\] Handler 'create_fn' succeeded\./);
  },
);
