/**
 * Takeover (DESIGN.md §3): objects that a Python Kopf operator handled before
 * carry its state — the finalizer, the diff base, and progress records in
 * annotations or (older Kopf) in `status.kopf.progress`. An operator built
 * with this module continues from that state: finished handlers are not
 * re-run, unfinished ones continue with their stored retries, records are
 * purged at the end, a handled object only resumes, a changed one updates
 * with the exact diff. And what it writes is what Kopf writes.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import {
  annotations,
  FINALIZER,
  kopfAnnotations,
  LAST_HANDLED,
  type Obj,
  PY_TIMESTAMP,
  pyTime,
  setup,
  sleep,
} from "./_handling.ts";

Deno.test("takeover: finished handlers are not re-run, unfinished ones continue with their retries, records are purged", async () => {
  await using env = await setup();
  const started = pyTime(-600, 345317);
  const progress = {
    // Finished successfully by Python Kopf.
    "kopf.zalando.org/create_a": `{"started":"${started}","stopped":"${
      pyTime(-590)
    }","purpose":"create","retries":1,"success":true,"failure":false}`,
    // Retried twice, sleeping until a moment that has passed.
    "kopf.zalando.org/create_b": `{"started":"${started}","delayed":"${
      pyTime(-5)
    }","purpose":"create","retries":2,"success":false,"failure":false,"message":"not yet"}`,
    // Failed for good: not retried.
    "kopf.zalando.org/create_c": `{"started":"${started}","stopped":"${
      pyTime(-590)
    }","purpose":"create","retries":1,"success":false,"failure":true,"message":"boom"}`,
  };
  await env.create("kex", { field: "value", items: [1, 2] }, {
    finalizers: [FINALIZER],
    annotations: { ...progress, "example.com/keep": "me" },
  });

  const registry = new kopf.OperatorRegistry();
  const calls: Obj[] = [];
  kopf.on.create("kopfexamples", { registry, id: "create_a" }, () => {
    calls.push({ id: "create_a" });
  });
  kopf.on.create("kopfexamples", { registry, id: "create_b" }, ({ retry, started, runtime }) => {
    calls.push({ id: "create_b", retry, started, runtime, at: Date.now() });
    return { done: true };
  });
  kopf.on.create("kopfexamples", { registry, id: "create_c" }, () => {
    calls.push({ id: "create_c" });
  });
  kopf.on.delete("kopfexamples", { registry, id: "delete_fn" }, () => {});
  const runner = await env.operator(registry);
  await runner.waitFor("[default/kex] Creation is processed: 2 succeeded; 1 failed.");
  // The cycle's two writes: the diff base (main resource), then the result (/status).
  const obj = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED] && !!o.status);
  await runner.stop();

  assert.deepEqual(calls.map((c) => c.id), ["create_b"]);
  assert.equal(calls[0]!.retry, 2, "retry continues from the stored retries");
  assert.equal(
    (calls[0]!.started as Date).toISOString(),
    new Date(started.replace(/\d{3}\+00:00$/, "Z")).toISOString(),
    "started is the stored one",
  );
  // The stored start is ~600 s ago (to the second; its microseconds are made up).
  const sinceStored = (calls[0]!.at - (calls[0]!.started as Date).getTime()) / 1000;
  assert.ok(sinceStored > 598, `the stored start is old: ${sinceStored}`);
  assert.ok(
    Math.abs(calls[0]!.runtime - sinceStored) < 0.5,
    `runtime counts from the stored start: ${calls[0]!.runtime} vs ${sinceStored}`,
  );
  assert.deepEqual(obj.status?.create_b, { done: true });
  // Records purged; the diff base written; our finalizer and other annotations kept.
  assert.deepEqual(Object.keys(kopfAnnotations(obj)).sort(), ["last-handled-configuration"]);
  // The essence keeps other annotations, never Kopf's own.
  assert.equal(
    annotations(obj)[LAST_HANDLED],
    '{"spec":{"field":"value","items":[1,2]},"metadata":{"annotations":{"example.com/keep":"me"}}}\n',
  );
  assert.equal(annotations(obj)["example.com/keep"], "me");
  assert.deepEqual(obj.metadata.finalizers, [FINALIZER]);
  assert.doesNotMatch(runner.output, /Handler 'create_a'/);
  assert.doesNotMatch(runner.output, /Handler 'create_c'/);
  assert.match(runner.output, /\[default\/kex\] Handler 'create_b' succeeded\./);
});

Deno.test("takeover: legacy status.kopf.progress records are continued, new records go to annotations, both are purged", async () => {
  await using env = await setup();
  await env.create("kex", { field: "value" }, { finalizers: [FINALIZER] });
  const started = pyTime(-60);
  await env.patchStatus("kex", {
    status: {
      kopf: {
        progress: {
          create_a: {
            started,
            stopped: pyTime(-50),
            delayed: null,
            purpose: "create",
            retries: 1,
            success: true,
            failure: false,
            message: null,
          },
          create_b: {
            started,
            stopped: null,
            delayed: pyTime(-1),
            purpose: "create",
            retries: 3,
            success: false,
            failure: false,
            message: "not yet",
          },
        },
      },
    },
  });

  const registry = new kopf.OperatorRegistry();
  const retries: number[] = [];
  let aCalls = 0;
  kopf.on.create("kopfexamples", { registry, id: "create_a" }, () => {
    aCalls++;
  });
  kopf.on.create("kopfexamples", { registry, id: "create_b" }, ({ retry }) => {
    retries.push(retry);
    if (retry < 4) throw new kopf.TemporaryError("still not yet", { delay: 0.3 });
  });
  kopf.on.delete("kopfexamples", { registry, id: "delete_fn" }, () => {});
  const runner = await env.operator(registry);

  // The first retry fails again: its state goes to an annotation (Smart storage writes
  // annotations only), while the legacy status record stays until the end.
  const midway = await env.waitFor("kex", (o) => !!kopfAnnotations(o).create_b);
  const record = JSON.parse(kopfAnnotations(midway).create_b!);
  assert.equal(record.retries, 4);
  assert.equal(record.started, started, "the stored start is carried over byte for byte");
  assert.equal(record.message, "still not yet");
  assert.ok(midway.status.kopf.progress.create_b, "the legacy record is not rewritten");

  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  const obj = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  assert.equal(aCalls, 0);
  assert.deepEqual(retries, [3, 4]);
  assert.deepEqual(Object.keys(kopfAnnotations(obj)), ["last-handled-configuration"]);
  assert.deepEqual(obj.status.kopf?.progress ?? {}, {}, "legacy records purged");
});

Deno.test("takeover: an object with a diff base equal to its essence is resumed only, and nothing is written", async () => {
  await using env = await setup();
  await env.create("kex", { field: "value" }, {
    finalizers: [FINALIZER],
    labels: { app: "x" },
    annotations: {
      [LAST_HANDLED]: '{"spec":{"field":"value"},"metadata":{"labels":{"app":"x"}}}\n',
    },
  });
  const registry = new kopf.OperatorRegistry();
  const seen: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function create_fn() {
    seen.push("create");
  });
  kopf.on.update("kopfexamples", { registry }, function update_fn() {
    seen.push("update");
  });
  kopf.on.resume("kopfexamples", { registry }, function resume_fn({ reason }) {
    seen.push(`resume:${reason}`);
  });
  kopf.on.delete("kopfexamples", { registry }, function delete_fn() {});
  const before = env.patches();
  const runner = await env.operator(registry);
  await runner.waitFor("[default/kex] All handlers succeeded for resuming.");
  await sleep(0.3);
  await runner.stop();
  assert.deepEqual(seen, ["resume:resume"]);
  assert.equal(env.patches() - before, 0, "a resumed, unchanged object needs no writes");
});

Deno.test("takeover: a spec changed against the stored diff base triggers the update with the exact diff (and resume joins in)", async () => {
  await using env = await setup();
  await env.create("kex", { field: "new", size: 1, extra: { a: 1 } }, {
    finalizers: [FINALIZER],
    annotations: { [LAST_HANDLED]: '{"spec":{"field":"old","size":1,"gone":true}}\n' },
  });
  const registry = new kopf.OperatorRegistry();
  const seen: Obj[] = [];
  kopf.on.create("kopfexamples", { registry }, function create_fn() {
    seen.push({ id: "create" });
  });
  kopf.on.resume("kopfexamples", { registry }, function resume_fn({ reason }) {
    seen.push({ id: "resume", reason });
  });
  kopf.on.update("kopfexamples", { registry }, function update_fn({ reason, diff, old, new: now }) {
    seen.push({ id: "update", reason, diff, old, new: now });
  });
  kopf.on.delete("kopfexamples", { registry }, function delete_fn() {});
  const runner = await env.operator(registry);
  await runner.waitFor("[default/kex] All handlers succeeded for update.");
  const obj = await env.waitFor(
    "kex",
    (o) => annotations(o)[LAST_HANDLED]?.includes('"new"') ?? false,
  );
  await runner.stop();
  assert.deepEqual(seen, [
    { id: "resume", reason: "update" },
    {
      id: "update",
      reason: "update",
      diff: [
        // Kopf's grouping: additions, removals, changes.
        ["add", ["spec", "extra"], null, { a: 1 }],
        ["remove", ["spec", "gone"], true, null],
        ["change", ["spec", "field"], "old", "new"],
      ],
      old: { spec: { field: "old", size: 1, gone: true } },
      new: { spec: { field: "new", size: 1, extra: { a: 1 } } },
    },
  ]);
  assert.equal(
    annotations(obj)[LAST_HANDLED],
    '{"spec":{"field":"new","size":1,"extra":{"a":1}}}\n',
  );
});

Deno.test("takeover: an object deleted while no operator ran gets its delete handlers, not resume handlers", async () => {
  await using env = await setup();
  await env.create("kex", { field: "value" }, {
    finalizers: [FINALIZER],
    annotations: { [LAST_HANDLED]: '{"spec":{"field":"value"}}\n' },
  });
  await env.remove("kex");
  assert.ok((await env.get("kex"))?.metadata.deletionTimestamp, "blocked by the finalizer");
  const registry = new kopf.OperatorRegistry();
  const seen: string[] = [];
  kopf.on.resume("kopfexamples", { registry }, function resume_fn() {
    seen.push("resume");
  });
  kopf.on.resume("kopfexamples", { registry, deleted: true }, function resume_deleted() {
    seen.push("resume_deleted");
  });
  kopf.on.delete("kopfexamples", { registry }, function delete_fn() {
    seen.push("delete");
  });
  const runner = await env.operator(registry);
  await env.waitGone("kex");
  await runner.stop();
  assert.deepEqual(seen, ["resume_deleted", "delete"]);
});

Deno.test("takeover: what we write is what Kopf writes (compact JSON records, +00:00 timestamps, diff base with a newline)", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function create_fn({ retry }) {
    if (retry === 0) throw new kopf.TemporaryError("not yet", { delay: 0.5 });
  });
  kopf.on.delete("kopfexamples", { registry }, function delete_fn() {});
  const runner = await env.operator(registry);
  await env.create("kex", { field: "value", ünï: "cödé" }, { labels: { app: "x" } });
  const delayed = await env.waitFor("kex", (o) => !!kopfAnnotations(o).create_fn);
  const value = kopfAnnotations(delayed).create_fn!;
  const ts = PY_TIMESTAMP.source.slice(1, -1);
  assert.match(
    value,
    new RegExp(
      `^\\{"started":"${ts}","delayed":"${ts}","purpose":"create","retries":1,"success":false,"failure":false,"message":"not yet"\\}$`,
    ),
  );
  await runner.waitFor("[default/kex] All handlers succeeded for creation.");
  const done = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  await runner.stop();
  assert.deepEqual(Object.keys(kopfAnnotations(done)), ["last-handled-configuration"]);
  // Python's json.dumps escapes non-ASCII (ensure_ascii) and keeps the key order.
  assert.equal(
    annotations(done)[LAST_HANDLED],
    '{"spec":{"field":"value","\\u00fcn\\u00ef":"c\\u00f6d\\u00e9"},"metadata":{"labels":{"app":"x"}}}\n',
  );
  assert.deepEqual(done.metadata.finalizers, [FINALIZER]);
});
