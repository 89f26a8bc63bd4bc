import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, ROOT } from "./_setup.ts";

/** Polls until `check` passes (returns true), or fails after `seconds`. */
async function eventually(what: string, check: () => Promise<boolean>, seconds = 10) {
  const deadline = Date.now() + seconds * 1000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${seconds}s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

Deno.test("02-children: the creation handler creates an adopted pod with client-node; deleting the parent garbage-collects it", async () => {
  await using c = await cluster();
  // The example builds its client-node KubeConfig with loadFromDefault(), which reads KUBECONFIG.
  const previous = Deno.env.get("KUBECONFIG");
  Deno.env.set("KUBECONFIG", c.api.kubeconfig.path);
  try {
    const runner = await KopfRunner.start(
      ["run", "-A", "--verbose", `${ROOT}examples/02-children/example.ts`],
      { kubeconfig: c.api.kubeconfig.path },
    );
    try {
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await runner.waitFor("All handlers succeeded for creation.");

      const parent = JSON.parse(
        (await c.kubectl("get", "kopfexample", "kopf-example-1", "-o", "json")).stdout,
      );
      const pods = JSON.parse((await c.kubectl("get", "pods", "-o", "json")).stdout).items;
      assert.equal(pods.length, 1);
      const pod = pods[0];

      // Adopted: owned by the parent, named after it, in its namespace, with its labels.
      assert.deepEqual(pod.metadata.ownerReferences, [{
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        name: "kopf-example-1",
        uid: parent.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      }]);
      assert.equal(pod.metadata.generateName, "kopf-example-1-");
      assert.match(pod.metadata.name, /^kopf-example-1-.+/);
      assert.equal(pod.metadata.namespace, "default");
      assert.equal(pod.metadata.labels.somelabel, "somevalue");
      // Rendered from the parent's spec.
      const container = pod.spec.containers[0];
      assert.equal(container.name, "the-only-one");
      assert.deepEqual(container.env, [{ name: "FIELD", value: "value" }]);
      assert.match(container.args[0], /sleep 1m/);

      // The result lands in status.create_fn, shown in the "Children" printer column.
      assert.deepEqual(parent.status.create_fn, { children: [pod.metadata.name] });
      const table = await c.kubectl("get", "kopfexamples");
      assert.match(table.stdout, /CHILDREN/);
      assert.match(table.stdout, new RegExp(`kopf-example-1 .*${pod.metadata.name}`));
      assert.match(runner.output, new RegExp(`Pod child is created: ${pod.metadata.name}`));

      // Deleting the parent garbage-collects the pod (the API server's owner-reference GC).
      assert.equal((await c.kubectl("delete", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await runner.waitFor("Deleted, really deleted");
      await c.api.settled();
      await eventually("the pod is garbage-collected", async () => {
        const left = JSON.parse((await c.kubectl("get", "pods", "-o", "json")).stdout).items;
        return left.length === 0;
      });
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    assert.match(runner.output, /\[default\/kopf-example-1\] Handler 'create_fn' succeeded\./);
  } finally {
    if (previous === undefined) Deno.env.delete("KUBECONFIG");
    else Deno.env.set("KUBECONFIG", previous);
  }
});
