import assert from "node:assert/strict";
import { cluster, type Obj, runRecorded } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const PREFIX = "kopf.zalando.org/";
const DIFFBASE = `${PREFIX}last-handled-configuration`;

/** The progress records (annotations) of an object version, by annotation key suffix. */
function progressOf(body: Obj): Record<string, Obj> {
  const out: Record<string, Obj> = {};
  for (const [key, value] of Object.entries(body.metadata?.annotations ?? {})) {
    if (key.startsWith(PREFIX) && key !== DIFFBASE) {
      out[key.slice(PREFIX.length)] = JSON.parse(value as string);
    }
  }
  return out;
}

testWithKubectl(
  "07-subhandlers: kopf.subhandler and kopf.register per item with ids parent/item and their own progress; a temporary failure retries only that sub-handler",
  async () => {
    await using c = await cluster();
    const { runner, versions } = await runRecorded(
      c,
      "07-subhandlers/example.ts",
      "All handlers succeeded for creation.",
      10,
    );
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    const out = runner.output;

    // Each sub-handler ran until it succeeded, and never again after that.
    const calls = (re: RegExp) => out.match(re) ?? [];
    assert.deepEqual(calls(/=== Handling creation for item\d \(retry \d\)\. ===/g).sort(), [
      "=== Handling creation for item1 (retry 0). ===",
      "=== Handling creation for item2 (retry 0). ===",
      "=== Handling creation for item2 (retry 1). ===",
    ]);
    assert.deepEqual(calls(/=== Registered handling for item\d \(retry \d\)\. ===/g).sort(), [
      "=== Registered handling for item1 (retry 0). ===",
      "=== Registered handling for item2 (retry 0). ===",
    ]);
    // Log lines name the sub-handlers by their ids: parent/item.
    for (
      const line of [
        "Handler 'create_fn/item1' succeeded.",
        "Handler 'create_fn/item2' failed temporarily: item2 is not ready yet.",
        "Handler 'create_fn/item2' succeeded.",
        "Handler 'create_fn' succeeded.",
        "Handler 'register_fn/item1' succeeded.",
        "Handler 'register_fn/item2' succeeded.",
        "Handler 'register_fn' succeeded.",
      ]
    ) {
      assert.equal(out.split(line).length - 1, 1, `once: ${line}\n${out}`);
    }
    assert.ok(
      out.indexOf("Handler 'create_fn' succeeded.") >
        out.indexOf("Handler 'create_fn/item2' succeeded."),
      "the parent succeeds after its last sub-handler",
    );

    // While item2 waited for its retry, every handler had its own progress record on the object.
    const waiting = versions.map(progressOf).find((p) => p["create_fn.item2"]);
    assert.ok(waiting, "a version with the sub-handler's progress");
    const parent = waiting["create_fn"];
    assert.deepEqual(parent.subrefs, ["create_fn/item1", "create_fn/item2"]);
    assert.equal(parent.success, false);
    assert.equal(parent.failure, false);
    assert.equal(parent.purpose, "create");
    const item1 = waiting["create_fn.item1"];
    assert.ok(item1, "the finished sub-handler is remembered, so that it is not run again");
    assert.equal(item1.success, true);
    const item2 = waiting["create_fn.item2"];
    assert.deepEqual(
      {
        retries: item2.retries,
        success: item2.success,
        failure: item2.failure,
        message: item2.message,
      },
      { retries: 1, success: false, failure: false, message: "item2 is not ready yet." },
    );
    assert.ok(item2.delayed, "delayed until the retry");
    const register = waiting["register_fn"];
    assert.equal(register.success, true);
    assert.deepEqual(register.subrefs, ["register_fn/item1", "register_fn/item2"]);

    // Once all are done, all the records are purged.
    assert.deepEqual(progressOf(versions.at(-1)), {});
  },
);
