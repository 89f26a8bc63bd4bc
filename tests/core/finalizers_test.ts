/**
 * "Finalizers", end to end: the finalizer is added only when a non-optional
 * delete handler applies to the object, removed once the delete handlers
 * succeed (the object disappears), removed when no longer needed, never
 * touching other controllers' finalizers, and its name is configurable.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { addFinalizer, removeFinalizer } from "../../src/core/actions/application.ts";
import { annotations, FINALIZER, LAST_HANDLED, setup, sleep } from "./_handling.ts";

Deno.test("finalizers: none without delete handlers, none for optional delete handlers", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function create_fn() {});
  kopf.on.delete("kopfexamples", { registry, optional: true }, function delete_fn() {});
  const runner = await env.operator(registry);
  await env.create("kex");
  const obj = await env.waitFor("kex", (o) => !!annotations(o)[LAST_HANDLED]);
  assert.equal(obj.metadata.finalizers, undefined);
  await env.remove("kex");
  await env.waitGone("kex");
  await runner.stop();
  assert.doesNotMatch(runner.output, /Adding the finalizer/);
  assert.doesNotMatch(runner.output, /Handler 'delete_fn'/, "an optional handler does not block");
});

Deno.test("finalizers: a delete handler adds the finalizer; deletion waits for the handler, then the object disappears", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const deletes: number[] = [];
  kopf.on.delete("kopfexamples", { registry }, function delete_fn({ retry }) {
    deletes.push(retry);
    if (retry === 0) throw new kopf.TemporaryError("cleaning up", { delay: 0.5 });
  });
  const runner = await env.operator(registry);
  await env.create("kex");
  await env.waitFor("kex", (o) => o.metadata.finalizers?.includes(FINALIZER));
  await runner.waitFor("[default/kex] Adding the finalizer, thus preventing the actual deletion.");
  await env.remove("kex");
  await runner.waitFor("[default/kex] Handler 'delete_fn' failed temporarily: cleaning up");
  const blocked = await env.get("kex");
  assert.ok(blocked?.metadata.deletionTimestamp, "still there, marked for deletion");
  assert.deepEqual(blocked.metadata.finalizers, [FINALIZER]);
  await env.waitGone("kex");
  await runner.waitFor("[default/kex] Deleted, really deleted, and we are notified.");
  await runner.stop();
  assert.deepEqual(deletes, [0, 1]);
  assert.match(runner.output, /\[default\/kex\] All handlers succeeded for deletion\./);
  assert.match(
    runner.output,
    /\[default\/kex\] Removing the finalizer, thus allowing the actual deletion\./,
  );
});

Deno.test("finalizers: other controllers' finalizers are kept; the object lingers for them", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  let deletes = 0;
  kopf.on.delete("kopfexamples", { registry }, function delete_fn() {
    deletes++;
  });
  const runner = await env.operator(registry);
  await env.create("kex", {}, { finalizers: ["example.com/x"] });
  await env.waitFor("kex", (o) => o.metadata.finalizers?.length === 2);
  assert.deepEqual((await env.get("kex"))!.metadata.finalizers, ["example.com/x", FINALIZER]);
  await env.remove("kex");
  const left = await env.waitFor("kex", (o) => o.metadata.finalizers?.length === 1);
  assert.deepEqual(left.metadata.finalizers, ["example.com/x"]);
  await runner.waitFor("[default/kex] Deletion, but we are done with it, and we do not care.");
  assert.equal(deletes, 1);
  // The other controller finishes: the object goes away without us.
  await env.patch("kex", { metadata: { finalizers: null } });
  await env.waitGone("kex");
  await runner.waitFor("[default/kex] Deleted, really deleted, and we are notified.");
  await runner.stop();
  assert.equal(deletes, 1);
});

Deno.test("finalizers: removed when no longer needed (no delete handler applies), added when needed again", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  let creates = 0;
  kopf.on.create("kopfexamples", { registry }, function create_fn() {
    creates++;
  });
  kopf.on.delete("kopfexamples", { registry, labels: { protect: "yes" } }, function delete_fn() {});
  // Left by an earlier operator; no delete handler applies to this object now.
  await env.create("kex", {}, {
    finalizers: [FINALIZER, "example.com/x"],
    annotations: { [LAST_HANDLED]: '{"spec":{}}\n' },
  });
  const runner = await env.operator(registry);
  await runner.waitFor(
    "[default/kex] Removing the finalizer, as there are no handlers requiring it.",
  );
  const released = await env.waitFor("kex", (o) => o.metadata.finalizers?.length === 1);
  assert.deepEqual(released.metadata.finalizers, ["example.com/x"]);
  await env.patch("kex", { metadata: { labels: { protect: "yes" } } });
  const protectedObj = await env.waitFor("kex", (o) => o.metadata.finalizers?.length === 2);
  assert.deepEqual(protectedObj.metadata.finalizers, ["example.com/x", FINALIZER]);
  await env.patch("kex", { metadata: { labels: { protect: "no" } } });
  await env.waitFor("kex", (o) => o.metadata.finalizers?.length === 1);
  await sleep(0.2);
  await runner.stop();
  assert.equal(creates, 0, "the object was handled before: no creation");
});

Deno.test("finalizers: settings.persistence.finalizer names the finalizer", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  kopf.on.delete("kopfexamples", { registry }, function delete_fn() {});
  const settings = new kopf.OperatorSettings();
  settings.persistence.finalizer = "my-operator.example.com/kopf-finalizer";
  const runner = await env.operator(registry, settings);
  await env.create("kex");
  const obj = await env.waitFor("kex", (o) => !!o.metadata.finalizers);
  assert.deepEqual(obj.metadata.finalizers, ["my-operator.example.com/kopf-finalizer"]);
  await env.remove("kex");
  await env.waitGone("kex");
  await runner.stop();
  assert.match(runner.output, /\[default\/kex\] Handler 'delete_fn' succeeded\./);
});

Deno.test("finalizers: edits are JSON patches guarded by the resourceVersion; a stale view re-reads and keeps others' finalizers", async () => {
  await using env = await setup();
  const base = `${env.api.url}/apis/kopf.dev/v1/namespaces/default/kopfexamples`;
  const sent: unknown[] = [];
  const api = {
    async patch(name: string, _ns: string | undefined, body: unknown, type: "merge" | "json") {
      sent.push(body);
      const res = await fetch(`${base}/${name}`, {
        method: "PATCH",
        headers: {
          "content-type": type === "json"
            ? "application/json-patch+json"
            : "application/merge-patch+json",
        },
        body: JSON.stringify(body),
      });
      const answer = await res.json();
      if (res.status === 404) return undefined;
      if (res.status !== 200) throw Object.assign(new Error(answer.message), { code: res.status });
      return answer;
    },
    async get(name: string) {
      const res = await fetch(`${base}/${name}`);
      return res.status === 200 ? await res.json() : (await res.body?.cancel(), undefined);
    },
  };
  const stale = await env.create("kex");
  // Another controller adds its finalizer after we have read the object.
  await env.patch("kex", { metadata: { finalizers: ["example.com/x"] } });
  const added = await addFinalizer(api, stale, FINALIZER);
  assert.deepEqual(added!.metadata.finalizers, ["example.com/x", FINALIZER]);
  assert.equal(sent.length, 2, "one conflict, one retry after a fresh read");
  assert.deepEqual((sent[0] as unknown[])[0], {
    op: "test",
    path: "/metadata/resourceVersion",
    value: stale.metadata.resourceVersion,
  });
  // And the other way: the other controller adds another finalizer meanwhile; ours goes, theirs stay.
  await env.patch("kex", {
    metadata: { finalizers: ["example.com/x", FINALIZER, "example.com/y"] },
  });
  const removed = await removeFinalizer(api, added!, FINALIZER);
  assert.deepEqual(removed!.metadata.finalizers, ["example.com/x", "example.com/y"]);
});
