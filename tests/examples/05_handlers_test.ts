import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const EXAMPLE = `${ROOT}examples/05-handlers/example.ts`;

/** Asserts that the lines occur in the text in this order. */
function assertInOrder(text: string, lines: string[]): void {
  let at = -1;
  for (const line of lines) {
    const found = text.indexOf(line, at + 1);
    assert.ok(found > at, `expected after the previous line: ${line}\nin:\n${text}`);
    at = found;
  }
}

testWithKubectl(
  "05-handlers: handlers run in order per cause; field and update get old/new/diff; resume runs once after a restart, creation does not; deletion",
  async () => {
    await using c = await cluster();

    // The first operator process: creation and update.
    const first = await KopfRunner.start(["run", "-A", "--verbose", EXAMPLE], {
      kubeconfig: c.api.kubeconfig.path,
    });
    try {
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await first.waitFor("All handlers succeeded for creation.");
      assertInOrder(first.output, [
        "CREATED 1st",
        "Handler 'create_fn_1' succeeded.",
        "CREATED 2nd",
        "Handler 'create_fn_2' succeeded.",
        // The field handler sees the field appear: no old value, the new one, the field's own diff.
        'FIELD CHANGED: undefined -> value; diff: [["add",[],null,"value"]]',
        // Kopf's id of a field handler: the function's name and the field.
        "Handler 'field_fn/spec.field' succeeded.",
        "All handlers succeeded for creation.",
      ]);
      // A new object is created, not resumed.
      assert.doesNotMatch(first.output, /RESUMED/);

      const patched = await c.kubectl(
        "patch",
        "kopfexample",
        "kopf-example-1",
        "--type=merge",
        "-p",
        '{"spec":{"field":"value2"}}',
      );
      assert.equal(patched.code, 0, patched.stderr);
      await first.waitFor("All handlers succeeded for update.");
      const update = first.output.slice(
        first.output.indexOf("All handlers succeeded for creation."),
      );
      assertInOrder(update, [
        'UPDATED: value -> value2; diff: [["change",["spec","field"],"value","value2"]]',
        "Handler 'update_fn' succeeded.",
        'FIELD CHANGED: value -> value2; diff: [["change",[],"value","value2"]]',
        // Kopf's id of a field handler: the function's name and the field.
        "Handler 'field_fn/spec.field' succeeded.",
        "All handlers succeeded for update.",
      ]);
      assert.doesNotMatch(update, /CREATED|RESUMED|DELETED/);
    } finally {
      await first.stop();
    }
    assert.equal(first.exitCode, 0);

    // The second operator process finds the object: resuming, once; no creation, no update.
    const second = await KopfRunner.start(["run", "-A", "--verbose", EXAMPLE], {
      kubeconfig: c.api.kubeconfig.path,
    });
    try {
      await second.waitFor("All handlers succeeded for resuming.");
      assertInOrder(second.output, [
        "RESUMED 1st (reason: resume)",
        "Handler 'resume_fn_1' succeeded.",
        "RESUMED 2nd (reason: resume)",
        "Handler 'resume_fn_2' succeeded.",
        "All handlers succeeded for resuming.",
      ]);
      assert.doesNotMatch(second.output, /CREATED|UPDATED|FIELD CHANGED/);

      // Deletion: both deletion handlers in order, then the finalizer is released.
      const deleted = await c.kubectl("delete", "kopfexample", "kopf-example-1", "--wait=false");
      assert.equal(deleted.code, 0, deleted.stderr);
      await second.waitFor("Deleted, really deleted");
      const deletion = second.output.slice(
        second.output.indexOf("All handlers succeeded for resuming."),
      );
      assertInOrder(deletion, [
        "DELETED 1st",
        "Handler 'delete_fn_1' succeeded.",
        "DELETED 2nd",
        "Handler 'delete_fn_2' succeeded.",
        "All handlers succeeded for deletion.",
        "Removing the finalizer, thus allowing the actual deletion.",
        "Deleted, really deleted, and we are notified.",
      ]);
      // Resumed only once per process, and never during the deletion.
      assert.equal(second.output.match(/RESUMED 1st/g)?.length, 1);
      assert.doesNotMatch(deletion, /RESUMED|CREATED|UPDATED|FIELD CHANGED/);
    } finally {
      await second.stop();
    }
    assert.equal(second.exitCode, 0);
    const gone = await c.kubectl("get", "kopfexample", "kopf-example-1");
    assert.match(gone.stderr, /NotFound/);
  },
);
