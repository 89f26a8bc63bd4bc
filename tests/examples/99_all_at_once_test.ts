/**
 * 99-all-at-once: one object created, updated and deleted; every handler's
 * effect checked — results and patches in the status, events, the adopted
 * child pod, retries, diffs, sub-handlers, the probe, startup and cleanup.
 *
 * The operator runs as `kopf run` in its own process, logged in by its own
 * `KUBECONFIG`, as a user runs it (its `createPod` handler's `api` follows
 * that login).
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Cluster, cluster, eventually, ROOT } from "./_setup.ts";
import { servedAt } from "../engines/_metrics.ts";
import { OperatorProcess } from "./_process.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const EXAMPLE = `${ROOT}examples/99-all-at-once/example.ts`;
const OBJ = `${ROOT}examples/obj.yaml`;
const P = "[default/kopf-example-1] ";

async function json(c: Cluster, ...args: string[]) {
  const got = await c.kubectl("get", ...args, "-o", "json");
  assert.equal(got.code, 0, got.stderr);
  return JSON.parse(got.stdout);
}

interface KubeEvent {
  type: string;
  reason: string;
  message: string;
}

testWithKubectl("99-all-at-once: create, update, delete — every handler's effect", async () => {
  await using c = await cluster();
  const operator = new OperatorProcess(
    ["run", "-A", "--verbose", "--liveness=http://127.0.0.1:0/healthz", EXAMPLE],
    { KUBECONFIG: c.api.kubeconfig.path },
  );
  let exitCode: number | undefined;
  try {
    // Startup: the retried activity is waited for before anything is watched.
    await operator.waitFor("Starting the watch-stream for kopfexamples", 20);
    assert.match(operator.output, /Starting in 0\.5s\.\.\./);
    assert.equal(
      operator.output.match(/Activity 'startupFnRetried' failed temporarily/g)?.length,
      3,
    );
    assert.match(operator.output, /Activity 'startupFnRetried' succeeded\./);

    // Creation: three handlers; create2 fails once and is retried after its backoff.
    assert.equal((await c.kubectl("apply", "-f", OBJ)).code, 0);
    await operator.waitFor(`${P}All handlers succeeded for creation.`, 20);
    assert.match(operator.output, /Handler 'create2' failed with an exception\. Will retry\./);
    assert.match(operator.output, /Whoops!/);
    const created = await json(c, "kopfexample", "kopf-example-1");
    assert.deepEqual(created.status.create1, { "job1-status": 100 });
    assert.deepEqual(created.status.create2, { "job2-status": 100 });
    assert.equal(created.status.phase, "Created");
    assert.deepEqual(created.metadata.finalizers, ["kopf.zalando.org/KopfFinalizerMarker"]);

    // The child pod: adopted (owner reference, namespace, name prefix) and labelled.
    const podName: string = created.status.createPod.pod;
    assert.match(podName, /^kopf-example-1-/);
    const pod = await json(c, "pod", podName);
    assert.equal(pod.metadata.labels.application, "kopf-example-10");
    assert.equal(pod.metadata.labels.somelabel, "somevalue", "the parent's labels are inherited");
    assert.deepEqual(
      pod.metadata.ownerReferences.map((r: { kind: string; name: string; uid: string }) => [
        r.kind,
        r.name,
        r.uid,
      ]),
      [["KopfExample", "kopf-example-1", created.metadata.uid]],
    );
    await operator.waitFor(`[default/${podName}] This pod is special for us.`);

    // The events posted by create1 (and by the logger: the failure of create2).
    const events = await eventually(
      "the events of create1",
      async (): Promise<KubeEvent[]> =>
        (await json(c, "events", "--field-selector", "involvedObject.name=kopf-example-1")).items,
      (items: KubeEvent[]) =>
        items.some((e) => e.reason === "AnyReason") && items.some((e) => e.reason === "SomeReason"),
    );
    const byReason = (r: string) => events.find((e) => e.reason === r);
    assert.equal(byReason("AnyReason")?.type, "Normal");
    assert.equal(byReason("SomeReason")?.type, "Warning");
    assert.equal(byReason("SomeReason")?.message, "Cannot do something");

    // Update: the diff handler, the field handler, its sub-handlers.
    const patched = await c.kubectl(
      "patch",
      "kopfexample",
      "kopf-example-1",
      "--type=merge",
      "-p",
      '{"spec":{"field":"changed","lst":["a","b"]}}',
    );
    assert.equal(patched.code, 0, patched.stderr);
    await operator.waitFor(`${P}All handlers succeeded for update.`);
    assert.match(operator.output, /Handling the diff/);
    assert.match(operator.output, /change spec\.field: "value" -> "changed"/);
    assert.match(operator.output, /add spec\.lst: null -> \["a","b"\]/);
    assert.match(operator.output, /Handling the FIELD = undefined -> \["a","b"\]/);
    assert.equal(
      operator.output.match(/Handling the FIELD/g)?.length,
      1,
      "not on creation: no spec.lst",
    );
    for (const item of ["a", "b"]) {
      assert.ok(operator.output.includes(`${P}Handling the item ${item}.`));
      assert.ok(
        operator.output.includes(`${P}Handler 'updateLst/spec.lst/item-${item}' succeeded.`),
      );
    }
    const updated = await json(c, "kopfexample", "kopf-example-1");
    assert.equal(updated.status.phase, "Updated");

    // The probe: the memo's count of created pods.
    const liveness = servedAt(operator.output); // the port the system picked, from the log
    assert.ok(liveness, operator.output);
    const health = await (await fetch(liveness)).json();
    assert.deepEqual(health, { createdPods: 1 });

    // Deletion: the handler runs, the finalizer goes, the object and its child are gone.
    const deleted = await c.kubectl("delete", "-f", OBJ, "--timeout=20s");
    assert.equal(deleted.code, 0, deleted.stderr);
    await operator.waitFor(`${P}Deleting kopf-example-1: the children pods go with it`);
    await operator.waitFor(`${P}Deleted, really deleted`);
    await eventually(
      "the child pod is garbage-collected",
      async () => (await c.kubectl("get", "pod", podName)).code,
      (code) => code !== 0,
    );
  } finally {
    exitCode = await operator.stop();
  }
  assert.equal(exitCode, 0, operator.output);
  assert.match(operator.output, /Cleaning up in 0\.5s\.\.\. \(1 pods were created\)/);
  assert.match(operator.output, /Activity 'cleanupFn' succeeded\./);
});
