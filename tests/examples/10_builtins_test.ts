/**
 * 10-builtins: handlers on Pods (a built-in resource) of the embedded API
 * server, where pods are only objects (there is no kubelet to start them).
 *
 * @module
 */
import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, eventually, ROOT } from "./_setup.ts";
import { OperatorProcess } from "./_process.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const EXAMPLE = `${ROOT}examples/10-builtins/example.ts`;
const FINALIZER = "kopf.zalando.org/KopfFinalizerMarker";

testWithKubectl(
  "10-builtins: pod handlers fire; only the non-optional delete handler adds a finalizer",
  async () => {
    await using c = await cluster();
    const runner = await KopfRunner.start(["run", "-A", "--verbose", EXAMPLE], {
      kubeconfig: c.api.kubeconfig.path,
    });
    try {
      const finalizers = async (name: string) =>
        (await c.kubectl("get", "pod", name, "-o", "jsonpath={.metadata.finalizers}")).stdout;

      // A special (labelled) pod: the creation handler starts its killer; the labelled event handler fires.
      const run1 = await c.kubectl(
        "run",
        "pod1",
        "--image=busybox",
        "--labels=application=kopf-example-10",
      );
      assert.equal(run1.code, 0, run1.stderr);
      await runner.waitFor("[default/pod1] Handler 'podInSight' succeeded.");
      await runner.waitFor("[default/pod1] This pod is special for us (ADDED).");
      assert.match(runner.output, /\[default\/pod1\] === Pod killing happens in 30s\./);
      // The optional delete handler does not block the deletion: no finalizer.
      assert.equal(await finalizers("pod1"), "");

      // An unlabelled pod: handled, but the labelled event handler keeps silent.
      assert.equal((await c.kubectl("run", "pod3", "--image=busybox")).code, 0);
      await runner.waitFor("[default/pod3] Handler 'podInSight' succeeded.");
      assert.equal(await finalizers("pod3"), "");

      // A guarded pod: the non-optional delete handler matches it, so the finalizer is added.
      const run2 = await c.kubectl(
        "run",
        "pod2",
        "--image=busybox",
        "--labels=kopf.dev/guarded=yes",
      );
      assert.equal(run2.code, 0, run2.stderr);
      await runner.waitFor(
        "[default/pod2] Adding the finalizer, thus preventing the actual deletion.",
      );
      await runner.waitFor("[default/pod2] Handler 'podInSight' succeeded.");
      assert.equal(await finalizers("pod2"), JSON.stringify([FINALIZER]));

      // Deleting a pod without the finalizer: gone at once; the killer is cancelled by the DELETED event;
      // the optional delete handler had no chance to run (Kopf's semantics: nothing blocked the deletion).
      assert.equal((await c.kubectl("delete", "pod", "pod1", "--wait=false")).code, 0);
      await runner.waitFor("[default/pod1] === Pod killing is cancelled!");
      await runner.waitFor("[default/pod1] Deleted, really deleted");
      assert.doesNotMatch(runner.output, /\[default\/pod1\] The pod's deletion is noticed/);

      // Deleting the guarded pod: it waits for the handlers; both delete handlers run, then it goes.
      assert.equal((await c.kubectl("delete", "pod", "pod2", "--wait=false")).code, 0);
      await runner.waitFor("[default/pod2] A guarded pod is released.");
      await runner.waitFor("[default/pod2] Handler 'podDeleted' succeeded.");
      await runner.waitFor("[default/pod2] Deleted, really deleted");
      assert.equal((await c.kubectl("get", "pod", "pod2")).code, 1, "pod2 is gone");
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    // Only the labelled pod triggered the labelled event handler.
    assert.doesNotMatch(runner.output, /\[default\/pod[23]\] This pod is special for us/);
    // The remaining killers (pod3's) are cancelled at exit.
    assert.match(runner.output, /1 pod killer\(s\) cancelled\./);
    assert.match(runner.output, /\[default\/pod3\] === Pod killing is cancelled!/);
  },
);

testWithKubectl(
  "10-builtins: the killer deletes the pod after its time (the operator as `kopf run` in a process)",
  async () => {
    await using c = await cluster();
    // The operator in its own process, logged in by its own KUBECONFIG (as a user runs it); the
    // killer deletes with kopf.api(), the operator's client.
    const operator = new OperatorProcess(["run", "-A", "--verbose", EXAMPLE], {
      KUBECONFIG: c.api.kubeconfig.path,
    });
    let exitCode: number | undefined;
    try {
      const created = await c.kubectl(
        "run",
        "short-lived",
        "--image=busybox",
        "--annotations=kopf.dev/kill-after=1",
      );
      assert.equal(created.code, 0, created.stderr);
      await eventually(
        "the pod is deleted by its killer",
        async () => (await c.kubectl("get", "pod", "short-lived")).code,
        (code) => code !== 0,
        20,
      );
    } finally {
      exitCode = await operator.stop();
    }
    const text = operator.output;
    assert.equal(exitCode, 0, text);
    assert.match(text, /\[default\/short-lived\] === Pod killing happens in 1s\./);
    assert.match(text, /\[default\/short-lived\] === Pod killing happens NOW!/);
  },
);
