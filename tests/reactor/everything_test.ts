/**
 * EVERYTHING within an API group (and version), as the docs' "Resource
 * specification" writes it: `("kopf.dev", "v1", EVERYTHING)`,
 * `("kopf.dev/v1", EVERYTHING)`, `("kopf.dev", EVERYTHING)`,
 * `{ group: "kopf.dev", plural: EVERYTHING }` serve every resource of that
 * group — not the whole cluster.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { EVERYTHING, Resource, Selector } from "../../src/cogs/structs/references.ts";
import { cluster, crd, until } from "./_setup.ts";

const kex = new Resource({ group: "kopf.dev", version: "v1", plural: "kopfexamples" });
const kexBeta = new Resource({
  group: "kopf.dev",
  version: "v1beta1",
  plural: "kopfexamples",
  preferred: false,
});
const peerings = new Resource({ group: "kopf.dev", version: "v1", plural: "kopfpeerings" });
const pods = new Resource({ group: "", version: "v1", plural: "pods" });
const events = new Resource({ group: "", version: "v1", plural: "events" });
const widgets = new Resource({ group: "other.example.com", version: "v1", plural: "widgets" });
const all = [kex, kexBeta, peerings, pods, events, widgets];

Deno.test("everything: EVERYTHING in the name's place is scoped to the group and version", () => {
  const names = (s: Selector) => s.select(all).map(String);
  const group = ["kopfexamples.v1.kopf.dev", "kopfpeerings.v1.kopf.dev"];
  assert.deepEqual(names(new Selector("kopf.dev", "v1", EVERYTHING)), group);
  assert.deepEqual(names(new Selector("kopf.dev/v1", EVERYTHING)), group);
  assert.deepEqual(names(new Selector("kopf.dev", EVERYTHING)), group); // preferred versions
  assert.deepEqual(names(new Selector("kopf.dev", "v1beta1", EVERYTHING)), [
    "kopfexamples.v1beta1.kopf.dev",
  ]);
  assert.deepEqual(names(new Selector({ group: "kopf.dev", plural: EVERYTHING })), group);
  assert.deepEqual(names(new Selector({ group: "kopf.dev", any: EVERYTHING })), group);
  assert.deepEqual(names(new Selector("v1", EVERYTHING)), ["pods.v1"]); // never events
  assert.deepEqual(names(new Selector("", "v1", EVERYTHING)), ["pods.v1"]);
  assert.equal(new Selector("kopf.dev", "v1", EVERYTHING).isSpecific, false);
  assert.equal(String(new Selector("kopf.dev", "v1", EVERYTHING)), "EVERYTHING.v1.kopf.dev");
  assert.throws(
    () => new Selector({ group: "kopf.dev", plural: EVERYTHING, kind: "X" }),
    /give only one of/,
  );
});

Deno.test("everything: an operator with EVERYTHING of kopf.dev serves that group only", async () => {
  await using c = await cluster({ clusterCrd: true });
  await c.createCrd(
    crd({ group: "other.example.com", plural: "widgets", kind: "Widget", scope: "Namespaced" }),
  );
  const registry = new kopf.OperatorRegistry();
  const seen = new Set<string>();
  const record = (id: string) => ({ body }: { body: kopf.AnyObject }) =>
    void seen.add(`${id}:${body.kind}/${body.metadata.name}`);
  // Every form of the docs, through kopf.on.event as a user writes it.
  kopf.on.event(
    { group: "kopf.dev", plural: kopf.EVERYTHING },
    { registry, id: "byObject" },
    record("byObject"),
  );
  kopf.on.event(
    "kopf.dev",
    "v1",
    kopf.EVERYTHING,
    { registry, id: "groupVersion" },
    record("groupVersion"),
  );
  kopf.on.event(
    "kopf.dev/v1",
    kopf.EVERYTHING,
    { registry, id: "apiVersion" },
    record("apiVersion"),
  );
  kopf.on.event("kopf.dev", kopf.EVERYTHING, { registry, id: "group" }, record("group"));
  const forms = [["groupVersion"], ["apiVersion"], ["group"]];
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.createKex("default", "kex1");
    await c.call("POST", "/apis/kopf.dev/v1/kopfclusterexamples", {
      apiVersion: "kopf.dev/v1",
      kind: "KopfClusterExample",
      metadata: { name: "kcx1" },
    });
    await c.call("POST", "/apis/other.example.com/v1/namespaces/default/widgets", {
      apiVersion: "other.example.com/v1",
      kind: "Widget",
      metadata: { name: "w1" },
    });
    await c.call("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "cm1" } });
    const ids = ["byObject", ...forms.map(([id]) => id)];
    const expected = ids.flatMap((id) => [
      `${id}:KopfExample/kex1`,
      `${id}:KopfClusterExample/kcx1`,
    ]);
    await until(() => expected.every((e) => seen.has(e)), `all of ${expected.join(", ")}`);
    // A marker created last: by the time it is seen, the others were seen (if they would be).
    await c.createKex("default", "marker");
    await until(() => ids.every((id) => seen.has(`${id}:KopfExample/marker`)), "the marker");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  const outside = [...seen].filter((s) => !/:(KopfExample|KopfClusterExample)\//.test(s));
  assert.deepEqual(outside, [], "nothing outside kopf.dev is served");
  assert.doesNotMatch(runner.output, /configmaps|widgets/);
});
