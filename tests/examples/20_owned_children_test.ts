/**
 * 20-owned-children, end to end with kubectl against the embedded API server: the reconciler
 * creates the KopfExample's ConfigMap (adopted); a deleted ConfigMap is re-created at once (by
 * the child's watch event, not the 10-minute resync), a drifted one repaired; deleting the KopfExample takes the ConfigMap with it (the
 * API server's garbage collector) and calls the reconciler no more. Also: the snippet of
 * docs/reconcilers.md is this example's code.
 *
 * @module
 */
import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, eventually, type Obj, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const EXAMPLE = `${ROOT}examples/20-owned-children/example.ts`;

testWithKubectl(
  "20-owned-children: the child is created, re-created at once when deleted, repaired when drifted, collected with its parent",
  async () => {
    await using c = await cluster();
    const runner = await KopfRunner.start(["run", "-A", "--verbose", EXAMPLE], {
      kubeconfig: c.api.kubeconfig.path,
    });
    let outputBefore = Infinity;
    const configOf = async (): Promise<Obj> => {
      const got = await c.kubectl("get", "configmap", "kopf-example-1-config", "-o", "json");
      return got.code === 0 ? JSON.parse(got.stdout) : undefined;
    };
    try {
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      const first = await eventually("the ConfigMap", configOf);
      const parent = JSON.parse(
        (await c.kubectl("get", "kopfexample", "kopf-example-1", "-o", "json")).stdout,
      );
      assert.equal(first.metadata.ownerReferences[0].uid, parent.metadata.uid);
      assert.deepEqual(first.data, { field: "value" });
      assert.equal(first.metadata.labels.somelabel, "somevalue", "adopted: the parent's labels");
      await eventually("status.config", async () => {
        const got = await c.kubectl(
          "get",
          "kopfexample",
          "kopf-example-1",
          "-o",
          "jsonpath={.status.config}",
        );
        return got.stdout === "kopf-example-1-config";
      });

      // Deleted by someone: re-created within a second.
      assert.equal((await c.kubectl("delete", "configmap", "kopf-example-1-config")).code, 0);
      const deleted = Date.now();
      await eventually(
        "a new ConfigMap",
        configOf,
        (cm) => cm?.metadata?.uid !== undefined && cm.metadata.uid !== first.metadata.uid,
      );
      // Real time (an operator and kubectl processes, end to end): the child's watch event brings
      // the reconciler back at once (the README says "within a second"); without it, the
      // 10-minute resync would. 5 s holds that apart on a loaded 2-core machine, where kubectl
      // alone takes a few hundred ms per call.
      assert.ok(Date.now() - deleted < 5000, `re-created after ${Date.now() - deleted} ms`);
      await runner.waitFor("Created kopf-example-1-config.");

      // Drifted: repaired.
      const drift = '{"data":{"field":"drift"}}';
      const patched = await c.kubectl(
        "patch",
        "configmap",
        "kopf-example-1-config",
        "--type=merge",
        "-p",
        drift,
      );
      assert.equal(patched.code, 0, patched.stderr);
      await eventually("the repair", configOf, (cm) => cm?.data?.field === "value");
      await runner.waitFor("Repaired kopf-example-1-config.");

      // The parent deleted: the garbage collector deletes the ConfigMap; no calls any more.
      await new Promise((resolve) => setTimeout(resolve, 300)); // the repair's own events settle
      outputBefore = runner.output.length;
      assert.equal((await c.kubectl("delete", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await c.api.settled();
      await eventually("the ConfigMap collected", configOf, (cm) => cm === undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    assert.match(
      runner.output,
      /\[default\/kopf-example-1\] Reconciler 'ensureConfig' succeeded\./,
    );
    assert.doesNotMatch(runner.output.slice(outputBefore), /Reconciler 'ensureConfig'/);
  },
);

Deno.test("20-owned-children: the docs' reconcilers snippet is the example's code", async () => {
  const page = await Deno.readTextFile(`${ROOT}docs/reconcilers.md`);
  const snippet = page.split("```ts\n")[1]!.split("```")[0]!;
  const example = (await Deno.readTextFile(EXAMPLE)).split("// README: Owned children\n")[1]!
    .split("// README: end")[0]!;
  const body = (code: string) => code.split("\n").slice(1).join("\n"); // all but the import
  assert.match(snippet, /^import \* as kopf from "\.\.\/mod\.ts";/);
  assert.equal(body(snippet), body(example));
});
