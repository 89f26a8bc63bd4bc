import assert from "node:assert/strict";
import {
  CRDS,
  EVENTS,
  EVERYTHING,
  matchNamespace,
  NAMESPACES,
  Resource,
  ResourceSelectorError,
  Selector,
  selectSpecificNamespaces,
} from "../../src/cogs/structs/references.ts";
import { SelectorError } from "../../src/cogs/structs/selector_error.ts";

const kex1 = new Resource({
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
  singular: "kopfexample",
  shortcuts: ["kex", "kexes"],
  categories: ["all", "kopf"],
  subresources: ["status"],
  namespaced: true,
});
const kex1beta1 = new Resource({ ...kex1, version: "v1beta1", preferred: false });
const pods = new Resource({
  group: "",
  version: "v1",
  plural: "pods",
  kind: "Pod",
  singular: "pod",
  shortcuts: ["po"],
  categories: ["all"],
  namespaced: true,
});
const podMetrics = new Resource({
  group: "metrics.k8s.io",
  version: "v1beta1",
  plural: "pods",
  kind: "PodMetrics",
  singular: "podmetrics",
  namespaced: true,
});
const deployments = new Resource({
  group: "apps",
  version: "v1",
  plural: "deployments",
  kind: "Deployment",
  singular: "deployment",
  shortcuts: ["deploy"],
  categories: ["all"],
  namespaced: true,
});
const oldDeployments = new Resource({ ...deployments, group: "extensions", version: "v1beta1" });
const events = new Resource({
  group: "",
  version: "v1",
  plural: "events",
  kind: "Event",
  namespaced: true,
});
const k8sEvents = new Resource({
  group: "events.k8s.io",
  version: "v1",
  plural: "events",
  kind: "Event",
  namespaced: true,
});
const namespaces = new Resource({
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
});
const crds = new Resource({
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  namespaced: false,
});
const ALL = [
  kex1,
  kex1beta1,
  pods,
  podMetrics,
  deployments,
  oldDeployments,
  events,
  k8sEvents,
  namespaces,
  crds,
];

const names = (selector: Selector) => selector.select(ALL).map(String);

Deno.test("Resource: apiVersion, string form, equality, URLs", () => {
  assert.equal(pods.apiVersion, "v1");
  assert.equal(kex1.apiVersion, "kopf.dev/v1");
  assert.equal(String(pods), "pods.v1");
  assert.equal(String(kex1beta1), "kopfexamples.v1beta1.kopf.dev");
  assert.ok(kex1.equals(new Resource("kopf.dev", "v1", "kopfexamples")));
  assert.ok(!kex1.equals(kex1beta1));
  assert.equal(pods.getUrl(), "/api/v1/pods");
  assert.equal(pods.getUrl({ namespace: "ns" }), "/api/v1/namespaces/ns/pods");
  assert.equal(pods.getUrl({ namespace: "ns", name: "p" }), "/api/v1/namespaces/ns/pods/p");
  assert.equal(
    kex1.getUrl({ namespace: "ns", name: "k", subresource: "status", server: "https://k8s/" }),
    "https://k8s/apis/kopf.dev/v1/namespaces/ns/kopfexamples/k/status",
  );
  assert.equal(namespaces.getUrl({ name: "default" }), "/api/v1/namespaces/default");
  assert.equal(
    crds.getUrl({ params: { labelSelector: "a=b,c", limit: 5, continue: undefined } }),
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?labelSelector=a%3Db%2Cc&limit=5",
  );
  assert.equal(
    pods.getUrl({ namespace: "ns", name: "p", params: { fieldManager: undefined, force: null } }),
    "/api/v1/namespaces/ns/pods/p",
    "no query when no parameter has a value",
  );
  const inherited = Object.assign(Object.create({ watch: true }), { limit: 0, "a b": "c&d" });
  assert.equal(pods.getUrl({ params: inherited }), "/api/v1/pods?limit=0&a+b=c%26d");
  assert.throws(() => pods.getUrl({ subresource: "status" }), /needs an object name/);
  assert.throws(() => namespaces.getUrl({ namespace: "x" }), /cluster-scoped/);
  assert.throws(() => pods.getUrl({ name: "p" }), /namespaced: give the namespace/);
  assert.throws(() => new Resource("only-group" as string, "v1"), TypeError);
  assert.ok(Object.isFrozen(pods));
});

Deno.test("Selector: one name — any of plural, singular, kind, short names; preferred versions only", () => {
  for (const name of ["kopfexamples", "kopfexample", "KopfExample", "kex", "kexes"]) {
    assert.deepEqual(names(new Selector(name)), ["kopfexamples.v1.kopf.dev"], name);
  }
  assert.deepEqual(names(new Selector("deployments")), [
    "deployments.v1.apps",
    "deployments.v1beta1.extensions",
  ]);
  assert.deepEqual(names(new Selector("StatefulSet")), []);
});

Deno.test("Selector: kubectl's name.group and name.version.group", () => {
  assert.deepEqual(names(new Selector("kopfexamples.kopf.dev")), ["kopfexamples.v1.kopf.dev"]);
  assert.deepEqual(names(new Selector("deployments.apps")), ["deployments.v1.apps"]);
  assert.deepEqual(names(new Selector("kopfexamples.v1beta1.kopf.dev")), [
    "kopfexamples.v1beta1.kopf.dev",
  ]);
  assert.deepEqual(names(new Selector("pods.metrics.k8s.io")), ["pods.v1beta1.metrics.k8s.io"]);
  const s = new Selector("pods.v1");
  assert.equal(s.version, "v1");
  assert.equal(s.group, undefined);
  // A non-conventional version is read as a group.
  assert.equal(new Selector("things.foo1.example.com").group, "foo1.example.com");
});

Deno.test("Selector: group + name, group/version + name, group + version + name, v1 + name", () => {
  assert.deepEqual(names(new Selector("kopf.dev", "kopfexamples")), ["kopfexamples.v1.kopf.dev"]);
  assert.deepEqual(names(new Selector("kopf.dev/v1", "kopfexamples")), [
    "kopfexamples.v1.kopf.dev",
  ]);
  assert.deepEqual(names(new Selector("kopf.dev/v1beta1", "kex")), [
    "kopfexamples.v1beta1.kopf.dev",
  ]);
  assert.deepEqual(names(new Selector("kopf.dev", "v1beta1", "KopfExample")), [
    "kopfexamples.v1beta1.kopf.dev",
  ]);
  assert.deepEqual(names(new Selector("apps", "v1", "deployments")), ["deployments.v1.apps"]);
  assert.deepEqual(names(new Selector("apps/v1", "deployments")), ["deployments.v1.apps"]);
  assert.deepEqual(names(new Selector("v1", "pods")), ["pods.v1"]);
  assert.deepEqual(names(new Selector("", "v1", "pods")), ["pods.v1"]);
  const core = new Selector("v1", "pods");
  assert.equal(core.group, "");
  assert.equal(core.version, "v1");
});

Deno.test("Selector: the object form", () => {
  assert.deepEqual(names(new Selector({ group: "kopf.dev", plural: "kopfexamples" })), [
    "kopfexamples.v1.kopf.dev",
  ]);
  assert.deepEqual(names(new Selector({ kind: "PodMetrics" })), ["pods.v1beta1.metrics.k8s.io"]);
  assert.deepEqual(names(new Selector({ singular: "pod" })), ["pods.v1"]);
  assert.deepEqual(names(new Selector({ shortcut: "deploy", group: "apps" })), [
    "deployments.v1.apps",
  ]);
  assert.deepEqual(names(new Selector({ apiVersion: "kopf.dev/v1beta1", kind: "KopfExample" })), [
    "kopfexamples.v1beta1.kopf.dev",
  ]);
  assert.deepEqual(names(new Selector({ apiVersion: "v1", plural: "pods" })), ["pods.v1"]);
  assert.deepEqual(names(new Selector({ any: "po" })), ["pods.v1"]);
  // Categories are not "specific": all matches are kept, the core group hides nothing.
  assert.deepEqual(names(new Selector({ category: "all" })), [
    "kopfexamples.v1.kopf.dev",
    "pods.v1",
    "deployments.v1.apps",
    "deployments.v1beta1.extensions",
  ]);
});

Deno.test("Selector: the core group takes precedence for ambiguous names (pods vs pods.metrics.k8s.io)", () => {
  assert.deepEqual(names(new Selector("pods")), ["pods.v1"]);
  assert.equal(new Selector("pods").selectOne(ALL), pods);
  assert.deepEqual(names(new Selector("events")), ["events.v1"]);
  assert.equal(
    new Selector("pods").check(podMetrics),
    true,
    "check() itself does not apply precedence",
  );
});

Deno.test("Selector: EVERYTHING and callable filters match all but events", () => {
  const everything = names(new Selector(EVERYTHING));
  assert.ok(everything.includes("pods.v1"));
  assert.ok(everything.includes("pods.v1beta1.metrics.k8s.io"), "not specific: no core precedence");
  assert.ok(!everything.includes("kopfexamples.v1beta1.kopf.dev"), "preferred versions only");
  assert.ok(!everything.includes("events.v1") && !everything.includes("events.v1.events.k8s.io"));
  const namespacedOnes = names(new Selector((r) => r.namespaced === true));
  assert.ok(namespacedOnes.includes("kopfexamples.v1beta1.kopf.dev"), "filters see all versions");
  assert.ok(!namespacedOnes.includes("events.v1"));
  assert.ok(!namespacedOnes.includes("namespaces.v1"));
  assert.equal(new Selector(EVERYTHING).isSpecific, false);
  assert.equal(new Selector("pods").isSpecific, true);
});

Deno.test("Selector.selectOne(): one-line errors for unknown and ambiguous resources", () => {
  assert.throws(() => new Selector("kopfexamples").selectOne([pods]), (e: Error) => {
    assert.ok(e instanceof ResourceSelectorError);
    assert.ok(e instanceof SelectorError);
    assert.equal(e.name, "ResourceSelectorError");
    assert.equal(
      e.message,
      `Resource "kopfexamples" is not served by the cluster: create its CRD first, or check the name with "kubectl api-resources"`,
    );
    return true;
  });
  assert.throws(() => new Selector("deployments").selectOne(ALL), (e: Error) => {
    assert.equal(
      e.message,
      `Resource "deployments" is ambiguous: it matches deployments.v1.apps, deployments.v1beta1.extensions; ` +
        `specify the API group, e.g. "deployments.apps"`,
    );
    return true;
  });
  assert.equal(new Selector("deployments.apps").selectOne(ALL), deployments);
});

Deno.test("Selector: invalid specifications are ResourceSelectorErrors", () => {
  const bad: unknown[][] = [
    [],
    ["a", "b", "c", "d"],
    [{ kind: "A", plural: "as" }],
    [{ kind: "" }],
    [""],
    ["kopf.dev", "", "kopfexamples"],
    [{ plural: "x", colour: "red" }],
    [{ apiVersion: "v1", group: "", plural: "pods" }],
    [{ group: "kopf.dev" }],
    [1],
  ];
  for (const args of bad) {
    assert.throws(
      () => new Selector(...(args as ConstructorParameters<typeof Selector>)),
      ResourceSelectorError,
      JSON.stringify(args),
    );
  }
});

Deno.test("Selector: string forms for messages; well-known selectors", () => {
  assert.equal(String(new Selector("kopf.dev", "v1", "kopfexamples")), "kopfexamples.v1.kopf.dev");
  assert.equal(String(new Selector("v1", "pods")), "pods.v1");
  assert.equal(String(new Selector({ kind: "Pod" })), "kind=Pod");
  assert.equal(String(new Selector({ category: "all" })), "category=all");
  assert.equal(String(new Selector(EVERYTHING)), "EVERYTHING");
  assert.equal(CRDS.selectOne(ALL), crds);
  assert.equal(EVENTS.selectOne(ALL), events);
  assert.equal(NAMESPACES.selectOne(ALL), namespaces);
});

Deno.test("matchNamespace(): globs, negations, several patterns, regexps", () => {
  assert.ok(matchNamespace("ns-*", "ns-1"));
  assert.ok(!matchNamespace("ns-*", "other"));
  assert.ok(matchNamespace("ns-?", "ns-1"));
  assert.ok(!matchNamespace("ns-?", "ns-12"));
  assert.ok(matchNamespace("ns-[ab]", "ns-a"));
  assert.ok(!matchNamespace("ns-[!ab]", "ns-a"));
  assert.ok(matchNamespace("!kube-*", "default"));
  assert.ok(!matchNamespace("!kube-*", "kube-system"));
  assert.ok(matchNamespace("exact", "exact"));
  assert.ok(!matchNamespace("exact", "exactly"));
  assert.ok(matchNamespace("a.b", "a.b") && !matchNamespace("a.b", "axb"), "dots are literal");
  assert.ok(matchNamespace(["ns-1", "ns-2"], "ns-2"));
  assert.ok(!matchNamespace([], "ns-2"));
  assert.ok(matchNamespace(/ns-\d+/, "ns-12"));
  assert.ok(!matchNamespace(/ns-\d+/, "xns-12"));
  // The docs' example: the first glob is decisive; the rightmost matching glob wins.
  const p = "myapp-*,!*-pr-*,*-pr-123";
  assert.ok(matchNamespace(p, "myapp-live"));
  assert.ok(!matchNamespace(p, "myapp-pr-456"));
  assert.ok(matchNamespace(p, "myapp-pr-123"));
  assert.ok(!matchNamespace(p, "otherapp-live"));
  assert.ok(!matchNamespace(p, "otherapp-pr-123"));
  // A leading negation implies "*" first: now otherapp-pr-123 is re-included.
  const q = "!*-pr-*, *pr-123";
  assert.ok(matchNamespace(q, "otherapp-pr-123"));
  assert.ok(matchNamespace(q, "anything"));
  assert.ok(!matchNamespace(q, "myapp-pr-456"));
});

Deno.test("selectSpecificNamespaces() keeps only plain names", () => {
  assert.deepEqual(selectSpecificNamespaces(["a", "b-*", "!c", "d,e", "f?", /g/, "a"]), ["a"]);
});
