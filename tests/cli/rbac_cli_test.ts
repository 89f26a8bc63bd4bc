/**
 * `kopf rbac` and `kopf manifests` as a user runs them: where the rules go
 * for each scope and mode (a ClusterRole for -A, Roles per namespace for -n,
 * patterns granted cluster-wide, Leases in their namespace's Role), the rules
 * themselves with their reasons, the one-line mistakes; and the manifests —
 * the same RBAC, the CRD, the Deployment — applied with
 * `kubectl apply --dry-run=server` on the embedded API server, which stores
 * none of them. (The rules are proven against a running operator in
 * rbac_proof_test.ts and tests/examples/19_rbac_test.ts.)
 *
 * @module
 */

import assert from "node:assert/strict";
import { loadAll } from "js-yaml";
import { startApiServer } from "../../testing.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const EVC = `${ROOT}examples/19-typed/example.ts`;
const MINIMAL = `${ROOT}examples/01-minimal/example.ts`;

// deno-lint-ignore no-explicit-any
type Obj = any;

async function kopf(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}cli.ts`, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

function docs(yaml: string): Obj[] {
  return loadAll(yaml) as Obj[];
}

/** Rules as `group resources [names] verbs` lines, for comparing. */
function rules(obj: Obj): string[] {
  return obj.rules.map((r: Obj) =>
    `${r.apiGroups.join(",") || '""'} ${r.resources.join(",")}${
      r.resourceNames ? ` [${r.resourceNames.join(",")}]` : ""
    }: ${r.verbs.join(",")}`
  );
}

function find(objects: Obj[], kind: string, namespace?: string): Obj {
  return objects.find((o) => o.kind === kind && o.metadata.namespace === namespace);
}

const EVC_RULES = [
  "kopf.dev ephemeralvolumeclaims: list,watch",
  "kopf.dev ephemeralvolumeclaims: patch",
  "kopf.dev ephemeralvolumeclaims: get",
  "kopf.dev ephemeralvolumeclaims/status: patch",
  '"" events: create,patch',
];

Deno.test("kopf rbac -A: one ClusterRole with the handlers' rules and their reasons, bound to the service account", async () => {
  const r = await kopf("rbac", "-A", "--name=evc-operator", "--account-namespace=operators", EVC);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const objects = docs(r.stdout);
  assert.deepEqual(objects.map((o) => o.kind), ["ClusterRole", "ClusterRoleBinding"]);
  assert.deepEqual(rules(objects[0]), [
    ...EVC_RULES,
    "apiextensions.k8s.io customresourcedefinitions: list,watch",
    "kopf.dev clusterkopfpeerings [default]: list,watch,patch",
    "kopf.dev clusterkopfpeerings [default]: get",
    '"" persistentvolumeclaims: create,patch', // kopf.uses in the example
  ]);
  assert.deepEqual(objects[1].subjects, [
    { kind: "ServiceAccount", name: "evc-operator", namespace: "operators" },
  ]);
  assert.deepEqual(objects[1].roleRef, {
    apiGroup: "rbac.authorization.k8s.io",
    kind: "ClusterRole",
    name: "evc-operator",
  });
  // Each rule says why, as a comment kubectl ignores.
  assert.ok(
    r.stdout.includes(
      "  # Framework: watching the served resources (handlers, indices, owned children).\n" +
        "  - apiGroups: [kopf.dev]\n    resources: [ephemeralvolumeclaims]\n    verbs: [list, watch]\n",
    ),
  );
  assert.ok(
    r.stdout.includes("  # Application: what the handlers do through the API client (kopf.uses)."),
  );
});

Deno.test("kopf rbac -n a -n b --leader-election: Roles in each served namespace, the Lease's rules in its namespace, a ClusterRole for CRDs and namespaces", async () => {
  const r = await kopf(
    "rbac",
    "-n",
    "shop",
    "-n",
    "backoffice",
    "--leader-election=evc-leader",
    "--account-namespace=operators",
    EVC,
  );
  assert.equal(r.code, 0, r.stderr);
  const objects = docs(r.stdout);
  assert.deepEqual(objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ""}`), [
    "ClusterRole/",
    "ClusterRoleBinding/",
    "Role/shop",
    "RoleBinding/shop",
    "Role/backoffice",
    "RoleBinding/backoffice",
    "Role/operators",
    "RoleBinding/operators",
  ]);
  assert.deepEqual(rules(find(objects, "ClusterRole")), [
    "apiextensions.k8s.io customresourcedefinitions: list,watch",
    '"" namespaces: list,watch',
  ]);
  for (const ns of ["shop", "backoffice"]) {
    assert.deepEqual(rules(find(objects, "Role", ns)), [
      ...EVC_RULES,
      "kopf.dev kopfpeerings [default]: list,watch,patch",
      "kopf.dev kopfpeerings [default]: get",
      '"" persistentvolumeclaims: create,patch',
    ]);
  }
  // Several -n: the Lease is in the pod's namespace (the login's), by name where it can be.
  assert.deepEqual(rules(find(objects, "Role", "operators")), [
    "coordination.k8s.io leases [evc-leader]: get,update",
    "coordination.k8s.io leases: create",
  ]);
  assert.deepEqual(find(objects, "RoleBinding", "operators").subjects, [
    { kind: "ServiceAccount", name: "kopf-operator", namespace: "operators" },
  ]);
});

Deno.test("kopf rbac -n PATTERN: the served namespaces' rules go cluster-wide, and it says so", async () => {
  const r = await kopf("rbac", "-n", "team-*", "--standalone", EVC);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stderr,
    "kopf: -n team-*: a pattern is not a namespace, so the rules of the served namespaces are " +
      "granted cluster-wide (ClusterRole)\n",
  );
  const objects = docs(r.stdout);
  assert.deepEqual(objects.map((o) => o.kind), ["ClusterRole", "ClusterRoleBinding"]);
  assert.deepEqual(rules(objects[0]), [
    ...EVC_RULES,
    "apiextensions.k8s.io customresourcedefinitions: list,watch",
    '"" namespaces: list,watch',
    '"" persistentvolumeclaims: create,patch',
  ]);
});

Deno.test("kopf rbac --shards: the member Leases' rules in their namespace; the peering is standalone with sharding", async () => {
  const r = await kopf("rbac", "-A", "--shards", "--shards-namespace=shards", EVC);
  assert.equal(r.code, 0, r.stderr);
  const objects = docs(r.stdout);
  assert.deepEqual(rules(find(objects, "Role", "shards")), [
    "coordination.k8s.io leases: get,list,watch,create,update,delete",
  ]);
  assert.doesNotMatch(r.stdout, /kopfpeerings/);
});

Deno.test("kopf rbac: untyped resources resolve with --crd; without it, one line says what to do", async () => {
  const missing = await kopf("rbac", "-A", MINIMAL);
  assert.equal(missing.code, 1);
  assert.equal(
    missing.stderr,
    "kopf: Cannot tell which resource kopfexamples is without a cluster: give its CRD with " +
      "--crd FILE, name it with its group (e.g. kopfexamples.kopf.dev), or define it with " +
      "kopf.resource()\n",
  );
  const r = await kopf("rbac", "-A", "--standalone", "--crd", `${ROOT}examples/crd.yaml`, MINIMAL);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(rules(docs(r.stdout)[0]), [
    "kopf.dev kopfexamples: list,watch",
    "kopf.dev kopfexamples: patch",
    "kopf.dev kopfexamples: get",
    "kopf.dev kopfexamples/status: patch",
    '"" events: create,patch',
    "apiextensions.k8s.io customresourcedefinitions: list,watch",
  ]);
});

Deno.test("kopf rbac: mistakes are one line — both scopes, sharding with leader election, a bad name, a bad kopf.uses verb", async () => {
  const cases: Array<[string[], number, string]> = [
    [
      ["-A", "-n", "x", EVC],
      2,
      "kopf: The operator can be either cluster-wide or namespaced, not both: " +
      "use -A/--all-namespaces or -n/--namespace\n",
    ],
    [
      ["--shards", "--leader-election", EVC],
      2,
      "kopf: Sharding and leader election exclude each other (all replicas active vs. one): " +
      "use --shards or --leader-election, not both\n",
    ],
    [
      ["--name", "Bad_Name", EVC],
      2,
      "kopf: --name 'Bad_Name' is invalid: use lowercase letters, digits and '-' (at most 63), " +
      "starting and ending with a letter or digit.\n",
    ],
    [
      ["-A", `${ROOT}tests/fixtures/rbac/bad_uses.ts`],
      1,
      `kopf: cannot load handlers from ${ROOT}tests/fixtures/rbac/bad_uses.ts: RegistrationError: ` +
      'kopf.uses(...): unknown verb "frobnicate": use get, list, watch, create, update, replace, ' +
      "patch, apply, delete, deletecollection\n",
    ],
  ];
  for (const [args, code, stderr] of cases) {
    const r = await kopf("rbac", ...args);
    assert.equal(r.stderr, stderr, args.join(" "));
    assert.equal(r.code, code, args.join(" "));
    assert.equal(r.stdout, "");
  }
});

testWithKubectl(
  "kopf manifests: ServiceAccount, CRD, the RBAC of kopf rbac and a Deployment — applied with kubectl apply --dry-run=server, nothing stored",
  async () => {
    const flags = [
      "-A",
      "--leader-election",
      "--name=evc-operator",
      "--account-namespace=operators",
    ];
    const r = await kopf(
      "manifests",
      ...flags,
      "--image=registry.example.com/evc-operator:1.0",
      "--replicas=2",
      "--create-namespace",
      EVC,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    const objects = docs(r.stdout);
    assert.deepEqual(objects.map((o) => o.kind), [
      "Namespace",
      "ServiceAccount",
      "CustomResourceDefinition",
      "ClusterRole",
      "ClusterRoleBinding",
      "Role",
      "RoleBinding",
      "Deployment",
    ]);
    // The RBAC is kopf rbac's for the same flags, and the CRD kopf crd's.
    const rbac = await kopf("rbac", ...flags, EVC);
    assert.deepEqual(objects.slice(3, 7), docs(rbac.stdout));
    const crd = await kopf("crd", EVC);
    assert.deepEqual(objects[2], docs(crd.stdout)[0]);
    assert.deepEqual(objects[1].metadata, {
      name: "evc-operator",
      namespace: "operators",
      labels: { "app.kubernetes.io/name": "evc-operator" },
    });
    const deployment = objects[7];
    assert.equal(deployment.metadata.namespace, "operators");
    assert.equal(deployment.spec.replicas, 2);
    assert.equal(deployment.spec.strategy, undefined); // leader election: rolling updates are safe
    const pod = deployment.spec.template.spec;
    assert.equal(pod.serviceAccountName, "evc-operator");
    const [container] = pod.containers;
    assert.equal(container.image, "registry.example.com/evc-operator:1.0");
    assert.deepEqual(container.args, [
      "--all-namespaces",
      "--leader-election",
      "--liveness=http://0.0.0.0:8080/healthz",
      "handlers.ts",
    ]);
    assert.deepEqual(container.env.map((e: Obj) => [e.name, e.valueFrom.fieldRef.fieldPath]), [
      ["POD_ID", "metadata.name"],
      ["POD_NAMESPACE", "metadata.namespace"],
    ]);
    assert.deepEqual(container.ports, [{ name: "probes", containerPort: 8080 }]);
    assert.deepEqual(container.livenessProbe.httpGet, { path: "/healthz", port: "probes" });
    assert.deepEqual(container.startupProbe.httpGet, { path: "/healthz", port: "probes" });
    assert.deepEqual(container.readinessProbe.httpGet, { path: "/readyz", port: "probes" });

    // A single replica without leader election or sharding: Recreate, as Kopf's docs advise.
    const single = await kopf("manifests", "-A", "--image=op:1", EVC);
    const plain = docs(single.stdout).find((o) => o.kind === "Deployment");
    assert.deepEqual(plain.spec.strategy, { type: "Recreate" });
    const many = await kopf("manifests", "-A", "--image=op:1", "--replicas=3", EVC);
    assert.match(many.stderr, /--replicas 3 without --leader-election or --shards/);

    // The server validates every object as it would store it, and stores none.
    await using api = await startApiServer();
    const home = await Deno.makeTempDir({ prefix: "kopf-manifests-" });
    try {
      const kubectl = async (args: string[], stdin?: string) => {
        const child = new Deno.Command("kubectl", {
          args: ["--kubeconfig", api.kubeconfig.path, ...args],
          stdin: stdin === undefined ? "null" : "piped",
          stdout: "piped",
          stderr: "piped",
          env: { HOME: home },
        }).spawn();
        if (stdin !== undefined) {
          const writer = child.stdin.getWriter();
          await writer.write(new TextEncoder().encode(stdin));
          await writer.close();
        }
        const out = await child.output();
        const dec = new TextDecoder();
        return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
      };
      // Namespaced objects need their namespace to exist, also in a dry run (as in Kubernetes).
      assert.equal((await kubectl(["create", "namespace", "operators"])).code, 0);
      const applied = await kubectl(["apply", "--dry-run=server", "-f", "-"], r.stdout);
      assert.equal(applied.code, 0, applied.stderr);
      assert.deepEqual(applied.stdout.trim().split("\n"), [
        "namespace/operators configured (server dry run)",
        "serviceaccount/evc-operator created (server dry run)",
        "customresourcedefinition.apiextensions.k8s.io/ephemeralvolumeclaims.kopf.dev created (server dry run)",
        "clusterrole.rbac.authorization.k8s.io/evc-operator created (server dry run)",
        "clusterrolebinding.rbac.authorization.k8s.io/evc-operator created (server dry run)",
        "role.rbac.authorization.k8s.io/evc-operator created (server dry run)",
        "rolebinding.rbac.authorization.k8s.io/evc-operator created (server dry run)",
        "deployment.apps/evc-operator created (server dry run)",
      ]);
      for (const kind of ["serviceaccounts", "deployments", "roles", "rolebindings"]) {
        const got = await kubectl(["get", kind, "-n", "operators", "-o", "name"]);
        assert.equal(got.code, 0, got.stderr);
        assert.equal(got.stdout.replace(/serviceaccount\/default\n/, ""), "", kind);
      }
      for (const kind of ["crd", "clusterroles", "clusterrolebindings"]) {
        const got = await kubectl(["get", kind, "-o", "name"]);
        assert.doesNotMatch(got.stdout, /evc-operator|ephemeralvolumeclaims/, kind);
      }
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
);
