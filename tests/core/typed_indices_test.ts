/**
 * Typed indices: `kopf.index(...)` returns the index's handle — the function (still callable),
 * its id, and `of(indices)`, the index in any handler's `indices`, typed by what the function
 * returns. Untyped access by id (`indices.byApp`) stays as in Kopf. The type level is proven by
 * fixtures that must pass or fail `deno check` (type_level_test.ts).
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { OperatorIndexers } from "../../src/core/engines/indexing.ts";

const pods = new kopf.Resource({ group: "", version: "v1", plural: "pods", kind: "Pod" });

function indexersOf(registry: kopf.OperatorRegistry): OperatorIndexers {
  return new OperatorIndexers({
    registry,
    settings: new kopf.OperatorSettings(),
    memo: {},
    sink: () => {},
  });
}

Deno.test("kopf.index() returns a handle: the function, its id, and of(indices) — the same index as indices[id]", async () => {
  const registry = new kopf.OperatorRegistry();
  const byApp = kopf.index("pods", { registry }, function byApp({ labels, name }) {
    return { [labels.app ?? ""]: name };
  });
  const renamed = kopf.index("pods", { registry, id: "apps" }, ({ labels }) => labels.app);
  assert.equal(byApp.id, "byApp");
  assert.equal(byApp.name, "byApp");
  assert.equal(renamed.id, "apps");
  assert.deepEqual(registry.indexingHandlers().map((h) => h.id), ["byApp", "apps"]);
  // Still the function: callable with a context, as the function it wraps.
  assert.deepEqual(
    byApp({ labels: { app: "web" }, name: "p1" } as unknown as kopf.IndexingContext),
    {
      web: "p1",
    },
  );

  const indexers = indexersOf(registry);
  const obj = (name: string, app: string) => ({
    metadata: { namespace: "ns", name, uid: name, labels: { app } },
  });
  await indexers.index(pods, "pods@ns", { type: null, object: obj("p1", "web") });
  await indexers.index(pods, "pods@ns", { type: null, object: obj("p2", "web") });
  await indexers.index(pods, "pods@ns", { type: null, object: obj("p3", "db") });
  const index = byApp.of(indexers.indices);
  assert.equal(index, indexers.indices.byApp);
  assert.deepEqual([...(index.get("web") ?? [])].sort(), ["p1", "p2"]);
  assert.deepEqual([...index.keys()].sort(), ["db", "web"]);
  assert.deepEqual(renamed.of(indexers.indices).toJSON().map(([k, v]) => [k, v.length]), [
    [null, 3],
  ]);
});

Deno.test("IndexHandle.of() on indices without its index says which registry to use", () => {
  const registry = new kopf.OperatorRegistry();
  const byApp = kopf.index("pods", { registry }, function byApp({ name }) {
    return name;
  });
  assert.throws(
    () => byApp.of({ other: new kopf.Index() }),
    (e: Error) =>
      e instanceof kopf.RegistrationError &&
      e.message ===
        "No index 'byApp' in these indices: register kopf.index(...) in the registry the " +
          "operator runs (indices: other)",
  );
});
