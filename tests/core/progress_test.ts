/**
 * "Handling progress" and "Change detection", end to end: the progress
 * storages (Annotations with a custom prefix, Status in a custom field, Multi
 * with precedence, Smart by default) write records only when there is
 * something to remember and purge them when the cycle completes; the
 * diff-base storages (Annotations with a custom key, Status) keep the last
 * handled essence and detect updates against it.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { State } from "../../src/core/actions/progression.ts";
import {
  annotations,
  kopfAnnotations,
  LAST_HANDLED,
  type Obj,
  pyTime,
  setup,
} from "./_handling.ts";

/** One create handler that fails once (so that a record must be kept), then succeeds. */
function failingOnce(registry: kopf.OperatorRegistry, retries: number[] = []): void {
  kopf.on.create("kopfexamples", { registry }, function create_fn({ retry }) {
    retries.push(retry);
    if (retry === 0) throw new kopf.TemporaryError("not yet", { delay: 0.5 });
  });
}

Deno.test("progress: a handler that succeeds at once leaves no record: one patch for the whole creation", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function create_fn() {});
  const runner = await env.operator(registry);
  await env.create("kex");
  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  const obj = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  assert.equal(env.patches(), 1, "only the diff base is written");
  assert.deepEqual(Object.keys(kopfAnnotations(obj)), ["last-handled-configuration"]);
});

Deno.test("progress: AnnotationsProgressStorage with a prefix keeps records in <prefix>/<id>, marks the prefix, purges at the end", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  failingOnce(registry);
  const settings = new kopf.OperatorSettings();
  settings.persistence.progressStorage = new kopf.AnnotationsProgressStorage({
    prefix: "my-op.example.com",
  });
  const runner = await env.operator(registry, settings);
  await env.create("kex");
  const midway = await env.waitFor("kex", (o) => !!annotations(o)["my-op.example.com/create_fn"]);
  const record = JSON.parse(annotations(midway)["my-op.example.com/create_fn"]!);
  assert.equal(record.retries, 1);
  assert.equal(record.message, "not yet");
  assert.equal(annotations(midway)["my-op.example.com/kopf-managed"], "yes");
  assert.deepEqual(kopfAnnotations(midway), {}, "nothing under kopf.zalando.org yet");
  assert.equal(midway.status, undefined, "nothing in the status");
  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  const done = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  assert.equal(annotations(done)["my-op.example.com/create_fn"], undefined, "purged");
  // The marked prefix is Kopf's own: its annotations are not part of the essence.
  assert.equal(annotations(done)[LAST_HANDLED], '{"spec":{}}\n');
  assert.deepEqual(Object.keys(kopfAnnotations(done)), ["last-handled-configuration"]);
});

Deno.test("progress: StatusProgressStorage keeps records as objects in a status field (preserved by the CRD), purges at the end", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  failingOnce(registry);
  const settings = new kopf.OperatorSettings();
  settings.persistence.progressStorage = new kopf.StatusProgressStorage({
    field: "status.my-operator",
  });
  const runner = await env.operator(registry, settings);
  await env.create("kex");
  const midway = await env.waitFor("kex", (o) => !!o.status?.["my-operator"]?.create_fn);
  const record: Obj = midway.status["my-operator"].create_fn;
  assert.deepEqual(Object.keys(record), [
    "started",
    "delayed",
    "purpose",
    "retries",
    "success",
    "failure",
    "message",
  ]);
  assert.equal(record.retries, 1);
  assert.equal(record.purpose, "create");
  assert.deepEqual(kopfAnnotations(midway), {}, "no progress annotations");
  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  const done = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  assert.deepEqual(done.status?.["my-operator"] ?? {}, {}, "purged");
  assert.deepEqual(Object.keys(kopfAnnotations(done)), ["last-handled-configuration"]);
});

Deno.test("progress: MultiProgressStorage writes to all storages, reads the first found, purges all", async () => {
  await using env = await setup();
  const started = pyTime(-10);
  // Conflicting records: the first storage (annotations) takes precedence.
  await env.create("kex", {}, {
    annotations: {
      "my-op.example.com/create_fn": `{"started":"${started}","delayed":"${
        pyTime(-1)
      }","purpose":"create","retries":5,"success":false,"failure":false}`,
    },
  });
  await env.patchStatus("kex", {
    status: {
      "my-operator": {
        create_fn: { started, purpose: "create", retries: 1, success: false, failure: false },
        // Found only in the second storage: finished, so not re-run.
        other_fn: { started, stopped: started, purpose: "create", retries: 1, success: true },
      },
    },
  });
  const registry = new kopf.OperatorRegistry();
  const retries: number[] = [];
  let otherCalls = 0;
  kopf.on.create("kopfexamples", { registry }, function create_fn({ retry }) {
    retries.push(retry);
    if (retries.length === 1) throw new kopf.TemporaryError("not yet", { delay: 0.5 });
  });
  kopf.on.create("kopfexamples", { registry }, function other_fn() {
    otherCalls++;
  });
  const settings = new kopf.OperatorSettings();
  settings.persistence.progressStorage = new kopf.MultiProgressStorage([
    new kopf.AnnotationsProgressStorage({ prefix: "my-op.example.com" }),
    new kopf.StatusProgressStorage({ field: "status.my-operator" }),
  ]);
  const runner = await env.operator(registry, settings);
  const midway = await env.waitFor(
    "kex",
    (o) => o.status?.["my-operator"]?.create_fn?.retries === 6,
  );
  assert.equal(JSON.parse(annotations(midway)["my-op.example.com/create_fn"]!).retries, 6);
  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  const done = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  assert.deepEqual(retries, [5, 6]);
  assert.equal(otherCalls, 0);
  assert.equal(annotations(done)["my-op.example.com/create_fn"], undefined);
  assert.deepEqual(done.status?.["my-operator"] ?? {}, {}, "both storages purged");
});

Deno.test("progress: SmartProgressStorage (the default) writes annotations only and purges both places", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const retries: number[] = [];
  failingOnce(registry, retries);
  const runner = await env.operator(registry);
  await env.create("kex");
  const midway = await env.waitFor("kex", (o) => !!kopfAnnotations(o).create_fn);
  assert.equal(midway.status?.kopf, undefined, "no status records");
  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  const done = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  assert.deepEqual(retries, [0, 1]);
  assert.deepEqual(Object.keys(kopfAnnotations(done)), ["last-handled-configuration"]);
});

Deno.test("change detection: AnnotationsDiffBaseStorage with a custom prefix and key", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const diffs: unknown[] = [];
  kopf.on.create("kopfexamples", { registry }, function create_fn() {});
  kopf.on.update("kopfexamples", { registry }, function update_fn({ diff }) {
    diffs.push(diff);
  });
  const settings = new kopf.OperatorSettings();
  settings.persistence.diffbaseStorage = new kopf.AnnotationsDiffBaseStorage({
    prefix: "my-op.example.com",
    key: "last-state",
  });
  const runner = await env.operator(registry, settings);
  await env.create("kex", { size: 1 });
  const created = await env.waitFor("kex", (o) => !!annotations(o)["my-op.example.com/last-state"]);
  assert.equal(annotations(created)["my-op.example.com/last-state"], '{"spec":{"size":1}}\n');
  assert.equal(annotations(created)[LAST_HANDLED], undefined);
  await env.patch("kex", { spec: { size: 2 } });
  await runner.waitFor("[default/kex] All handlers succeeded for update.");
  const updated = await env.waitFor(
    "kex",
    (o) => annotations(o)["my-op.example.com/last-state"] === '{"spec":{"size":2}}\n',
  );
  await runner.stop();
  assert.deepEqual(diffs, [[["change", ["spec", "size"], 1, 2]]]);
  assert.ok(updated);
});

Deno.test("change detection: StatusDiffBaseStorage keeps the essence as compact JSON in a status field", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const seen: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function create_fn() {
    seen.push("create");
  });
  kopf.on.update("kopfexamples", { registry }, function update_fn({ old, new: now }) {
    seen.push(`update ${JSON.stringify(old)} -> ${JSON.stringify(now)}`);
    return { ok: 1 };
  });
  const settings = new kopf.OperatorSettings();
  settings.persistence.diffbaseStorage = new kopf.StatusDiffBaseStorage({
    field: "status.diff-base",
  });
  const runner = await env.operator(registry, settings);
  await env.create("kex", { size: 1 });
  const created = await env.waitFor("kex", (o) => !!o.status?.["diff-base"]);
  assert.equal(created.status["diff-base"], '{"spec":{"size":1}}');
  assert.deepEqual(kopfAnnotations(created), {}, "no annotations at all");
  await env.patch("kex", { spec: { size: 2 } });
  await runner.waitFor("[default/kex] All handlers succeeded for update.");
  const updated = await env.waitFor(
    "kex",
    (o) => o.status?.["diff-base"] === '{"spec":{"size":2}}',
  );
  // The status itself (results, the diff base) is never part of the essence: no further updates.
  await new Promise((r) => setTimeout(r, 300));
  await runner.stop();
  assert.deepEqual(seen, ["create", 'update {"spec":{"size":1}} -> {"spec":{"size":2}}']);
  assert.deepEqual(updated.status.update_fn, { ok: 1 });
});

Deno.test("progress: State reads sub-handlers' records by subrefs once each, and purges known ones first, each once", async () => {
  const calls: string[] = [];
  class Recording extends kopf.ProgressStorage {
    records: Record<string, kopf.ProgressRecord> = {
      a: { retries: 1, subrefs: ["a/x", "a/y"] },
      "a/x": { retries: 1, subrefs: ["a/y"] },
      "a/y": { retries: 1 },
    };
    fetch(key: string) {
      calls.push(`fetch ${key}`);
      return this.records[key] ?? null;
    }
    store() {}
    purge(key: string) {
      calls.push(`purge ${key}`);
    }
    touch() {}
  }
  const storage = new Recording();
  const state = await State.fromStorage({}, storage, ["a", "b", "a"], "create");
  assert.deepEqual(calls, ["fetch a", "fetch b", "fetch a/x", "fetch a/y"]);
  calls.length = 0;
  await state.purge({}, new kopf.Patch(), storage, ["b", "a", "c", "c"]);
  assert.deepEqual(calls, ["purge a", "purge a/x", "purge a/y", "purge b", "purge c"]);
});

Deno.test("progress: State.read and purgeNow answer at once from a synchronous storage, and go on in order through an asynchronous one", async () => {
  const calls: string[] = [];
  const records: Record<string, kopf.ProgressRecord> = {
    a: { retries: 1, subrefs: ["a/x"] },
    "a/x": { retries: 2 },
  };
  class Storage extends kopf.ProgressStorage {
    constructor(readonly async: boolean) {
      super();
    }
    fetch(key: string) {
      calls.push(`fetch ${key}`);
      const record = records[key] ?? null;
      return this.async ? Promise.resolve(record) : record;
    }
    store() {}
    purge(key: string) {
      calls.push(`purge ${key}`);
      return this.async ? Promise.resolve() : undefined;
    }
    touch() {}
  }
  for (const async of [false, true]) {
    calls.length = 0;
    const storage = new Storage(async);
    const read = State.read({}, storage, ["a", "b"], "create");
    assert.equal(read instanceof Promise, async);
    const state = await read;
    assert.deepEqual(calls, ["fetch a", "fetch b", "fetch a/x"]);
    assert.deepEqual([state.get("a")?.retries, state.get("a/x")?.retries, state.get("b")], [
      1,
      2,
      undefined,
    ]);
    calls.length = 0;
    const purged = state.purgeNow({}, new kopf.Patch(), storage, ["b", "c", "c"]);
    assert.equal(purged instanceof Promise, async);
    await purged;
    assert.deepEqual(calls, ["purge a", "purge a/x", "purge b", "purge c"]);
  }
});
