/**
 * 11-filtering-handlers: only the handlers whose filters match run; the
 * others leave no trace. And the stealth mode: an object that matches no
 * handler of its kind is not handled at all until it comes into the scope.
 *
 * @module
 */
import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const EXAMPLE = `${ROOT}examples/11-filtering-handlers/example.ts`;
const OBJ = `${ROOT}examples/obj.yaml`;
const P = "[default/kopf-example-1] ";

testWithKubectl(
  "11-filtering-handlers: matching handlers run, non-matching ones do not",
  async () => {
    await using c = await cluster();
    const runner = await KopfRunner.start(["run", "-A", "--verbose", EXAMPLE], {
      kubeconfig: c.api.kubeconfig.path,
    });
    try {
      assert.equal((await c.kubectl("apply", "-f", OBJ)).code, 0);
      await runner.waitFor(`${P}All handlers succeeded for creation.`);
      const patched = await c.kubectl(
        "patch",
        "-f",
        OBJ,
        "--type=merge",
        "-p",
        '{"spec":{"field":"changed"}}',
      );
      assert.equal(patched.code, 0, patched.stderr);
      await runner.waitFor(`${P}All handlers succeeded for update.`);
      const result = await c.kubectl("get", "-f", OBJ, "-o", "json");
      assert.deepEqual(JSON.parse(result.stdout).status["fieldChange/spec.field"], {
        old: "value",
        new: "changed",
      });
      assert.equal((await c.kubectl("delete", "-f", OBJ)).code, 0);
      await runner.waitFor(`${P}Deleted, really deleted`);
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);

    const ran = [
      "Label is matching.",
      "Label is present.",
      "Label is absent.",
      "Label callback matching.",
      "Annotation is matching.",
      "Annotation is present.",
      "Annotation is absent.",
      "Filter satisfied.",
      "Field value is satisfied.",
      "Field presence is satisfied.",
      "Field absence is satisfied.",
      "Field change is satisfied: value -> changed.",
      "Field had or got the value (either side of the change).",
      "All callbacks are satisfied.",
      "Any callback is satisfied.",
      "None of the callbacks is satisfied.",
    ];
    const skipped = [
      "Label is not matching.",
      "Annotation callback mismatch.",
      "Filter not satisfied.",
      "Field value is not satisfied.",
      "Field presence is not satisfied.",
      "Field change is not satisfied.",
      "Untouched field is affected.",
      "Negated callback is satisfied.",
    ];
    for (const line of ran) assert.ok(runner.output.includes(P + line), `ran: ${line}`);
    for (const line of skipped) assert.ok(!runner.output.includes(line), `skipped: ${line}`);
    // Non-matching handlers are not mentioned at all: neither run nor skipped nor failed.
    for (
      const id of [
        "createWithLabelsNotMatching",
        "createWithAnnotationsCallbackMismatch",
        "createWithFilterNotSatisfied",
        "createWithFieldValueNotSatisfied/spec.field",
        "createWithFieldPresenceNotSatisfied/spec.inexistent",
        "updateWithFieldChangeNotSatisfied/spec.field",
        "updateOfUntouchedField/spec.items",
        "createWithNegatedCallback",
      ]
    ) {
      assert.ok(!runner.output.includes(`'${id}'`), `not mentioned: ${id}`);
    }
    assert.ok(runner.output.includes(`${P}Handler 'fieldChange/spec.field' succeeded.`));
    assert.ok(
      runner.output.includes(`${P}Handler 'createWithFieldValueSatisfied/spec.field' succeeded.`),
    );
  },
);

testWithKubectl(
  "11-filtering-handlers: stealth mode — unmatched objects are not handled until they match",
  async () => {
    await using c = await cluster();
    const runner = await KopfRunner.start(["run", "-A", "--verbose", EXAMPLE], {
      kubeconfig: c.api.kubeconfig.path,
    });
    const annotations = async (name: string) =>
      (await c.kubectl("get", "configmap", name, "-o", "jsonpath={.metadata.annotations}")).stdout;
    try {
      // An unlabelled configmap, created and changed: out of every handler's scope.
      assert.equal(
        (await c.kubectl("create", "configmap", "hidden", "--from-literal=a=1")).code,
        0,
      );
      const change = await c.kubectl(
        "patch",
        "configmap",
        "hidden",
        "--type=merge",
        "-p",
        '{"data":{"a":"2"}}',
      );
      assert.equal(change.code, 0, change.stderr);

      // A labelled configmap created after it: once it is handled, the hidden one was seen too
      // (one watch stream, in order); a short pause covers the batching window of the other queue.
      assert.equal(
        (await c.kubectl("create", "configmap", "visible", "--from-literal=a=1")).code,
        0,
      );
      assert.equal(
        (await c.kubectl("label", "configmap", "visible", "kopf.dev/example=11")).code,
        0,
      );
      await runner.waitFor("[default/visible] A configmap came into the scope.");
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.ok(!runner.output.includes("[default/hidden]"), "no log lines about the hidden one");
      assert.equal(await annotations("hidden"), "", "no annotations stored on the hidden one");
      assert.match(await annotations("visible"), /kopf\.zalando\.org\/last-handled-configuration/);

      // Labelled later, it suddenly appears in sight with no diff-base: a creation, not an update.
      assert.equal(
        (await c.kubectl("label", "configmap", "hidden", "kopf.dev/example=11")).code,
        0,
      );
      await runner.waitFor("[default/hidden] A configmap came into the scope.");
      await runner.waitFor("[default/hidden] All handlers succeeded for creation.");
      assert.ok(!runner.output.includes("[default/hidden] A configmap in the scope is updated."));

      // From now on, it is in the scope: changes are updates.
      const update = await c.kubectl(
        "patch",
        "configmap",
        "hidden",
        "--type=merge",
        "-p",
        '{"data":{"a":"3"}}',
      );
      assert.equal(update.code, 0, update.stderr);
      await runner.waitFor("[default/hidden] A configmap in the scope is updated.");
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
  },
);
