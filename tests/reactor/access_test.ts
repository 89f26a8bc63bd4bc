/**
 * The access table (core/reactor/access.ts) without a server: which rows apply
 * for which handlers and settings, and what `kopf.uses()` declares. (That the
 * rows are the requests the code makes is proven with operators running under
 * RBAC: tests/cli/rbac_proof_test.ts.)
 *
 * @module
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { type AccessNeed, operatorAccess } from "../../src/core/reactor/access.ts";
import { Resource, type Selector } from "../../src/cogs/structs/references.ts";

const KNOWN = [
  new Resource({
    group: "kopf.dev",
    version: "v1",
    plural: "kopfexamples",
    kind: "KopfExample",
    namespaced: true,
    subresources: ["status"],
  }),
  new Resource({
    group: "",
    version: "v1",
    plural: "configmaps",
    kind: "ConfigMap",
    namespaced: true,
  }),
  new Resource({ group: "", version: "v1", plural: "nodes", kind: "Node", namespaced: false }),
  new Resource({
    group: "apps",
    version: "v1",
    plural: "deployments",
    kind: "Deployment",
    namespaced: true,
    subresources: ["status"],
  }),
];

function needs(
  registry: kopf.OperatorRegistry,
  configure: (s: kopf.OperatorSettings) => void = () => {},
  namespaces?: string[],
): AccessNeed[] {
  const settings = new kopf.OperatorSettings();
  settings.peering.standalone = true;
  configure(settings);
  return operatorAccess(registry, settings, {
    namespaces,
    accountNamespace: "operators",
    resolve: (selector: Selector) => selector.select(KNOWN),
  });
}

/** `row: verbs resource [names] @scope`, with conditional verbs marked `?`. */
function lines(list: AccessNeed[]): string[] {
  return list.map((n) => {
    const verbs = n.verbs.map((v) => n.conditionalVerbs?.[v] ? `${v}?` : v).join(",");
    const scope = n.scope.kind === "namespace" ? `ns:${n.scope.namespace}` : n.scope.kind;
    const names = n.names ? ` [${n.names.join(",")}]` : "";
    return `${n.row}${n.conditional ? "?" : ""}: ${verbs} ${n.resource}${names} @${scope}`;
  });
}

Deno.test("access: change handlers write (patch, get, status); raw-event handlers and indices only read", () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, () => {});
  kopf.on.event("configmaps", { registry }, () => {});
  kopf.index("nodes", { registry }, ({ name }) => name);
  assert.deepEqual(lines(needs(registry)), [
    "watching: list?,watch kopfexamples @served",
    "watching: list?,watch configmaps @served",
    "watching: list?,watch nodes @cluster",
    "patching: patch kopfexamples @served",
    "rereading?: get kopfexamples @served",
    "status?: patch kopfexamples/status @served",
    // Events of namespaced objects in their namespaces; of cluster-scoped ones, in the pod's.
    "events?: create,patch events @served",
    "events?: create,patch events @ns:operators",
    "crds: list?,watch customresourcedefinitions @cluster",
  ]);
});

Deno.test("access: with sharding, every watched resource is re-read (an object gained from another replica is read first)", () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, () => {});
  kopf.on.event("configmaps", { registry }, () => {});
  const rereading = (on: boolean) =>
    lines(needs(registry, (s) => (s.sharding.enabled = on))).filter((l) =>
      l.startsWith("rereading")
    );
  assert.deepEqual(rereading(false), ["rereading?: get kopfexamples @served"]);
  assert.deepEqual(rereading(true), [
    "rereading?: get kopfexamples @served",
    "rereading?: get configmaps @served",
  ]);
});

Deno.test("access: daemons, timers and reconcilers write too; owned children are only watched", () => {
  const registry = new kopf.OperatorRegistry();
  kopf.daemon("kopfexamples", { registry }, () => {});
  kopf.on.reconcile("deployments.apps", { registry, owns: ["configmaps"] }, () => {});
  const rows = lines(needs(registry, (s) => (s.posting.enabled = false)));
  assert.deepEqual(rows.filter((l) => l.startsWith("patching")), [
    "patching: patch kopfexamples @served",
    "patching: patch deployments @served",
  ]);
  assert.ok(rows.includes("watching: list?,watch configmaps @served"));
  assert.ok(!rows.some((l) => l.includes("events")), "posting disabled: no events");
});

Deno.test("access: streamingLists decides list — always: none, never: unconditional", () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.event("configmaps", { registry }, () => {});
  const always = needs(registry, (s) => (s.watching.streamingLists = "always"));
  assert.deepEqual(lines(always).filter((l) => l.startsWith("watching")), [
    "watching: watch configmaps @served",
  ]);
  const never = needs(registry, (s) => (s.watching.streamingLists = "never"));
  assert.deepEqual(lines(never).filter((l) => l.startsWith("watching")), [
    "watching: list,watch configmaps @served",
  ]);
});

Deno.test("access: -n follows namespaces; scanning disabled follows neither namespaces nor CRDs", () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.event("configmaps", { registry }, () => {});
  const namespaced = lines(needs(registry, () => {}, ["shop"]));
  assert.ok(namespaced.includes("namespaces: list?,watch namespaces @cluster"));
  assert.ok(namespaced.includes("crds: list?,watch customresourcedefinitions @cluster"));
  const off = lines(needs(registry, (s) => (s.scanning.disabled = true), ["shop"]));
  assert.ok(!off.some((l) => l.startsWith("namespaces") || l.startsWith("crds")));
});

Deno.test("access: peering — automatic (get too), mandatory, standalone, and standalone with sharding unless mandatory", () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.event("configmaps", { registry }, () => {});
  const peering = (configure: (s: kopf.OperatorSettings) => void, namespaces?: string[]) =>
    lines(needs(registry, (s) => {
      s.peering.standalone = false;
      configure(s);
    }, namespaces)).filter((l) => l.startsWith("peering"));
  assert.deepEqual(peering(() => {}), [
    "peering?: list?,watch,patch clusterkopfpeerings [default] @cluster",
    "peering-lookup?: get clusterkopfpeerings [default] @cluster",
  ]);
  assert.deepEqual(
    peering((s) => {
      s.peering.name = "mine";
      s.peering.mandatory = true;
    }, ["shop"]),
    ["peering?: list?,watch,patch kopfpeerings [mine] @served"],
  );
  assert.deepEqual(peering((s) => (s.peering.standalone = true)), []);
  assert.deepEqual(peering((s) => (s.sharding.enabled = true)), []);
  assert.deepEqual(
    peering((s) => {
      s.sharding.enabled = true;
      s.peering.mandatory = true;
    }),
    ["peering?: list?,watch,patch clusterkopfpeerings [default] @cluster"],
  );
});

Deno.test("access: leader election's Lease by name in its namespace (the setting, the one -n, else the pod's)", () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.event("configmaps", { registry }, () => {});
  const lease = (configure: (s: kopf.OperatorSettings) => void, namespaces?: string[]) =>
    lines(needs(registry, (s) => {
      s.leaderElection.enabled = true;
      configure(s);
    }, namespaces)).filter((l) => l.startsWith("leader"));
  assert.deepEqual(lease(() => {}), [
    "leader-election: get,update leases [kopf-leader-default] @ns:operators",
    "leader-election-create: create leases @ns:operators",
  ]);
  assert.deepEqual(lease(() => {}, ["shop"]), [
    "leader-election: get,update leases [kopf-leader-default] @ns:shop",
    "leader-election-create: create leases @ns:shop",
  ]);
  assert.deepEqual(
    lease((s) => {
      s.leaderElection.name = "lock";
      s.leaderElection.namespace = "leases";
    }, ["shop", "backoffice"]),
    [
      "leader-election: get,update leases [lock] @ns:leases",
      "leader-election-create: create leases @ns:leases",
    ],
  );
});

Deno.test("access: managed admission — configurations by name, create unnamed, converters' CRDs by name", () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.validate("kopfexamples", { registry }, () => {});
  kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v2" }, ({ body }) => body);
  const rows = lines(needs(registry, (s) => {
    s.admission.server = new kopf.WebhookServer({ port: 0 });
    s.admission.managed = "auto.kopf.dev";
  }));
  assert.deepEqual(rows, [
    "crds: list?,watch customresourcedefinitions @cluster",
    "webhook-configurations: patch validatingwebhookconfigurations [auto.kopf.dev] @cluster",
    "webhook-configurations: patch mutatingwebhookconfigurations [auto.kopf.dev] @cluster",
    "webhook-configurations-create: create validatingwebhookconfigurations @cluster",
    "webhook-configurations-create: create mutatingwebhookconfigurations @cluster",
    "conversion: get,patch customresourcedefinitions [kopfexamples.kopf.dev] @cluster",
  ]);
  // Not managed: the server runs, nothing is asked of the API.
  const unmanaged = needs(registry, (s) => (s.admission.server = new kopf.WebhookServer()));
  assert.deepEqual(lines(unmanaged), []);
});

Deno.test("kopf.uses: the client's methods as Kubernetes verbs, subresources, cluster-scoped resources cluster-wide", () => {
  const registry = new kopf.OperatorRegistry();
  kopf.uses("configmaps", ["apply", "replace", "watch", "delete"], { registry });
  kopf.uses("deployments.apps", ["patch"], { registry, subresource: "scale" });
  kopf.uses("nodes", ["get"], { registry });
  assert.deepEqual(lines(needs(registry)), [
    "uses: create,patch,update,list,watch,delete configmaps @served",
    "uses: patch deployments/scale @served",
    "uses: get nodes @cluster",
  ]);
  assert.throws(
    () => kopf.uses("configmaps", [], { registry }),
    /give the verbs as a list, e\.g\. \["create", "patch"\]/,
  );
  assert.throws(
    () => kopf.uses("configmaps", ["get"], { registry, subresource: "Bad/Sub" }),
    /the subresource "Bad\/Sub" is not a name/,
  );
});
