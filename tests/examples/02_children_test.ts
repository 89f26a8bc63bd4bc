/**
 * 02-children, end to end.
 *
 * The example's handler creates the pod with its `api` (the operator's own
 * client). The operator runs as `kopf run` in a process of its own, logged in
 * by its own `KUBECONFIG` (see `_process.ts`), as a user runs it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { cluster, eventually, ROOT } from "./_setup.ts";
import { OperatorProcess } from "./_process.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

testWithKubectl(
  "02-children: the creation handler creates an adopted pod with its api; deleting the parent garbage-collects it",
  async () => {
    await using c = await cluster();
    const operator = new OperatorProcess(
      ["run", "-A", "--verbose", `${ROOT}examples/02-children/example.ts`],
      { KUBECONFIG: c.api.kubeconfig.path },
    );
    let exitCode: number | undefined;
    try {
      await operator.waitFor("Starting the watch-stream for kopfexamples", 20);
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await operator.waitFor("All handlers succeeded for creation.");

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
      assert.match(operator.output, new RegExp(`Pod child is created: ${pod.metadata.name}`));

      // Deleting the parent garbage-collects the pod (the API server's owner-reference GC).
      assert.equal((await c.kubectl("delete", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await operator.waitFor("Deleted, really deleted");
      await c.api.settled();
      await eventually("the pod is garbage-collected", async () => {
        const left = JSON.parse((await c.kubectl("get", "pods", "-o", "json")).stdout).items;
        return left.length === 0;
      });
    } finally {
      exitCode = await operator.stop("SIGINT");
    }
    assert.equal(exitCode, 0, operator.output);
    assert.match(operator.output, /\[default\/kopf-example-1\] Handler 'create_fn' succeeded\./);
  },
);
