/**
 * The docs' "Operator testing" section, in TypeScript: `KopfRunner` runs the
 * operator in the background while the test manipulates objects with kubectl;
 * when the `await using` block ends, the operator stops, and its exit code,
 * exception and output are there for assertions.
 *
 * @module
 */
import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const EXAMPLE = `${ROOT}examples/09-testing/example.ts`;
const OBJ = `${ROOT}examples/obj.yaml`;

testWithKubectl(
  "09-testing: the docs' test — exit code 0, no exception, the expected output",
  async () => {
    await using c = await cluster();
    let runner: KopfRunner;
    {
      await using r = await KopfRunner.start(["run", "-A", "--verbose", EXAMPLE], {
        kubeconfig: c.api.kubeconfig.path,
      });
      runner = r;
      // Do something while the operator is running; wait for its reactions
      // (instead of the docs' sleeps, so the test is fast and deterministic).
      assert.equal((await c.kubectl("apply", "-f", OBJ)).code, 0);
      await r.waitFor("All handlers succeeded for creation.", 10);
      assert.equal((await c.kubectl("delete", "-f", OBJ)).code, 0);
      await r.waitFor("Deleted, really deleted", 10);
    } // The operator stops here.

    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    assert.ok(runner.stdout.includes("And here we are!"));
    assert.ok(runner.stdout.includes("Deleted, really deleted"));
    // The example's own checks (Kopf's test of this example).
    assert.ok(runner.stdout.includes("[default/kopf-example-1] Something was logged here."));
    assert.ok(runner.stdout.includes("[default/kopf-example-1] Handler 'createFn' succeeded."));
  },
);

testWithKubectl(
  "09-testing: an operator that cannot start gives the exception and a non-zero exit code",
  async () => {
    await using c = await cluster();
    const runner = await KopfRunner.start(
      ["run", "-A", "--verbose", `${ROOT}examples/09-testing/no-such-file.ts`],
      { kubeconfig: c.api.kubeconfig.path, reraise: false },
    );
    await runner.stop(); // With reraise: false, stopping does not throw the operator's error.
    assert.equal(runner.exitCode, 1);
    assert.ok(runner.exception instanceof Error);
    assert.match(runner.exception.message, /no-such-file\.ts: no such file/);
  },
);

testWithKubectl(
  "09-testing: by default, stopping the runner re-raises the operator's exception",
  async () => {
    await using c = await cluster();
    const runner = await KopfRunner.start(
      ["run", "-A", `${ROOT}examples/09-testing/no-such-file.ts`],
      { kubeconfig: c.api.kubeconfig.path },
    );
    await assert.rejects(() => runner.stop(), /no such file/);
    assert.equal(runner.exitCode, 1);
  },
);
