/**
 * The embedded API server with `authorization: "rbac"`, over real HTTP: who a
 * request is (service account tokens from the TokenRequest subresource, static
 * tokens, client certificates, the server's own administrator), what RBAC lets
 * it do (Roles, ClusterRoles, both bindings, subresources, resourceNames,
 * non-resource paths, aggregation), and the refusals word for word as
 * kube-apiserver sends them. kubectl's side is in `rbac_kubectl_test.ts`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { load as parseYaml } from "js-yaml";
import { startApiServer } from "../../testing.ts";
import { type Answer, call, readEvents } from "./_http.ts";

const RBAC = "/apis/rbac.authorization.k8s.io/v1";
const SA_USER = "system:serviceaccount:default:op";
const ROOT = new URL("../../", import.meta.url).pathname;

/** A server with RBAC on: requests as the administrator, as a token, and the objects to grant. */
async function rbacServer(options: { tls?: boolean } = {}) {
  const api = await startApiServer({
    authorization: "rbac",
    staticTokens: [
      { token: "alice-token", user: "alice", uid: "u-alice", groups: ["devs"] },
      { token: "bob-token", user: "bob" },
    ],
    ...options,
  });
  const adminToken = api.kubeconfig.object.users[0]!.user.token as string | undefined;
  const client = options.tls
    ? Deno.createHttpClient({
      caCerts: [api.tls!.caCert],
      cert: api.tls!.clientCert,
      key: api.tls!.clientKey,
    })
    : undefined;
  const admin = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    if (!client) {
      return await call(api.url, method, path, body, "application/json", {
        authorization: `Bearer ${adminToken}`,
      });
    }
    const res = await fetch(`${api.url}${path}`, {
      method,
      client,
      ...(body !== undefined
        ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } }
        : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await admin(method, path, body);
    assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  return {
    api,
    admin,
    ok,
    /** A request with a bearer token. */
    as: (token: string, method: string, path: string, body?: unknown, type?: string) =>
      call(api.url, method, path, body, type ?? "application/json", {
        authorization: `Bearer ${token}`,
      }),
    async serviceAccount(name: string, namespace = "default"): Promise<string> {
      await ok("POST", `/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name } });
      const r = await ok("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {},
      });
      return r.status.token;
    },
    async namespace(name: string) {
      await ok("POST", "/api/v1/namespaces", { metadata: { name } });
    },
    async role(namespace: string, name: string, rules: unknown[]) {
      await ok("POST", `${RBAC}/namespaces/${namespace}/roles`, { metadata: { name }, rules });
    },
    async clusterRole(name: string, rules: unknown[], extra: Record<string, unknown> = {}) {
      await ok("POST", `${RBAC}/clusterroles`, { metadata: { name }, rules, ...extra });
    },
    async roleBinding(
      namespace: string,
      name: string,
      roleRef: { kind: string; name: string },
      subjects: unknown[],
    ) {
      await ok("POST", `${RBAC}/namespaces/${namespace}/rolebindings`, {
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", ...roleRef },
        subjects,
      });
    },
    async clusterRoleBinding(name: string, role: string, subjects: unknown[]) {
      await ok("POST", `${RBAC}/clusterrolebindings`, {
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
        subjects,
      });
    },
    async [Symbol.asyncDispose]() {
      client?.close();
      await api.stop();
    },
  };
}

const SA = (name = "op", namespace?: string) => ({
  kind: "ServiceAccount",
  name,
  ...(namespace ? { namespace } : {}),
});

/** The exact 403 kube-apiserver sends. */
function assertForbidden(
  r: Answer,
  message: string,
  details: Record<string, string>,
): void {
  assert.equal(r.status, 403, JSON.stringify(r.body));
  assert.deepEqual(r.body, {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason: "Forbidden",
    details,
    code: 403,
  });
}

/** Creates the examples' CRD (kopfexamples.kopf.dev) as the administrator. */
async function kopfExamplesCrd(ok: (m: string, p: string, b?: unknown) => Promise<unknown>) {
  await ok(
    "POST",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    parseYaml(await Deno.readTextFile(`${ROOT}examples/crd.yaml`)),
  );
}

Deno.test("rbac: a Role on configmaps in one namespace — list there; 403 with kube-apiserver's words elsewhere, for create, for another name", async () => {
  await using s = await rbacServer();
  await s.namespace("other");
  const token = await s.serviceAccount("op");
  await s.role("default", "cm-reader", [
    { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] },
  ]);
  await s.roleBinding("default", "op-reads", { kind: "Role", name: "cm-reader" }, [SA()]);
  await s.ok("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "cm1" } });
  await s.ok("POST", "/api/v1/namespaces/other/configmaps", { metadata: { name: "cm2" } });

  const list = await s.as(token, "GET", "/api/v1/namespaces/default/configmaps");
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), [
    "cm1",
  ]);
  assert.equal((await s.as(token, "GET", "/api/v1/namespaces/default/configmaps/cm1")).status, 200);

  assertForbidden(
    await s.as(token, "GET", "/api/v1/namespaces/other/configmaps"),
    `configmaps is forbidden: User "${SA_USER}" cannot list resource "configmaps" in API group "" in the namespace "other"`,
    { kind: "configmaps" },
  );
  assertForbidden(
    await s.as(token, "GET", "/api/v1/namespaces/other/configmaps/cm2"),
    `configmaps "cm2" is forbidden: User "${SA_USER}" cannot get resource "configmaps" in API group "" in the namespace "other"`,
    { name: "cm2", kind: "configmaps" },
  );
  assertForbidden(
    await s.as(token, "POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "x" } }),
    `configmaps is forbidden: User "${SA_USER}" cannot create resource "configmaps" in API group "" in the namespace "default"`,
    { kind: "configmaps" },
  );
  assertForbidden(
    await s.as(token, "DELETE", "/api/v1/namespaces/default/configmaps"),
    `configmaps is forbidden: User "${SA_USER}" cannot deletecollection resource "configmaps" in API group "" in the namespace "default"`,
    { kind: "configmaps" },
  );
  assertForbidden(
    await s.as(token, "GET", "/api/v1/configmaps"),
    `configmaps is forbidden: User "${SA_USER}" cannot list resource "configmaps" in API group "" at the cluster scope`,
    { kind: "configmaps" },
  );
  // A resource that does not exist is refused before routing, as kube-apiserver does.
  assertForbidden(
    await s.as(token, "GET", "/apis/nowhere.example.com/v1/namespaces/default/things"),
    `things.nowhere.example.com is forbidden: User "${SA_USER}" cannot list resource "things" in API group "nowhere.example.com" in the namespace "default"`,
    { group: "nowhere.example.com", kind: "things" },
  );
  // Nothing was created by the refused request.
  assert.equal((await s.admin("GET", "/api/v1/namespaces/default/configmaps/x")).status, 404);
});

Deno.test("rbac: watch is authorised as the verb watch (list alone is not enough)", async () => {
  await using s = await rbacServer();
  const token = await s.serviceAccount("op");
  await s.role("default", "lister", [
    { apiGroups: [""], resources: ["configmaps"], verbs: ["list"] },
  ]);
  await s.roleBinding("default", "b", { kind: "Role", name: "lister" }, [SA()]);
  assert.equal((await s.as(token, "GET", "/api/v1/namespaces/default/configmaps")).status, 200);
  assertForbidden(
    await s.as(token, "GET", "/api/v1/namespaces/default/configmaps?watch=true"),
    `configmaps is forbidden: User "${SA_USER}" cannot watch resource "configmaps" in API group "" in the namespace "default"`,
    { kind: "configmaps" },
  );
  await s.role("default", "watcher", [
    { apiGroups: [""], resources: ["configmaps"], verbs: ["watch"] },
  ]);
  await s.roleBinding("default", "b2", { kind: "Role", name: "watcher" }, [SA()]);
  const res = await fetch(`${s.api.url}/api/v1/namespaces/default/configmaps?watch=true`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(res.status, 200);
  await s.ok("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "w1" } });
  const [event] = await readEvents(res, 1);
  assert.equal(event.type, "ADDED");
  assert.equal(event.object.metadata.name, "w1");
});

Deno.test("rbac: no credentials or an unknown token is 401 Unauthorized; the server's own kubeconfig may do anything", async () => {
  await using s = await rbacServer();
  const unauthorized = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: "Unauthorized",
    reason: "Unauthorized",
    code: 401,
  };
  const attempts: Record<string, string>[] = [
    {},
    { authorization: "Bearer nope" },
    { authorization: "Basic eDp5" },
  ];
  for (const headers of attempts) {
    const r = await call(s.api.url, "GET", "/api/v1/namespaces", undefined, undefined, headers);
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, unauthorized);
    assert.equal((await call(s.api.url, "GET", "/api", undefined, undefined, headers)).status, 401);
  }
  // Health and version stay open, as kube-apiserver's anonymous endpoints.
  for (const path of ["/healthz", "/readyz", "/livez", "/version"]) {
    assert.equal((await call(s.api.url, "GET", path)).status, 200, path);
  }
  // The administrator (system:masters) passes everywhere, admin endpoints included.
  assert.equal((await s.admin("GET", "/api/v1/configmaps")).status, 200);
  assert.equal((await s.admin("GET", "/admin/stats")).status, 200);
  assert.equal((await s.admin("DELETE", "/api/v1/namespaces/default/secrets")).status, 200);
  const whoami = await s.ok("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {});
  assert.deepEqual((whoami as { status: unknown }).status, {
    userInfo: { username: "system:admin", groups: ["system:masters", "system:authenticated"] },
  });
});

Deno.test("rbac: discovery, /version and /openapi for any authenticated user with no grants; other paths refused by path", async () => {
  await using s = await rbacServer();
  const token = await s.serviceAccount("nobody");
  for (
    const path of [
      "/api",
      "/api/v1",
      "/apis",
      "/apis/apps",
      "/apis/apps/v1",
      "/apis/rbac.authorization.k8s.io/v1",
      "/version",
      "/openapi/v2",
      "/healthz",
    ]
  ) {
    assert.equal((await s.as(token, "GET", path)).status, 200, path);
  }
  assertForbidden(
    await s.as(token, "GET", "/admin/stats"),
    'forbidden: User "system:serviceaccount:default:nobody" cannot get path "/admin/stats"',
    {},
  );
  assertForbidden(
    await s.as(token, "POST", "/admin/faults/expire"),
    'forbidden: User "system:serviceaccount:default:nobody" cannot post path "/admin/faults/expire"',
    {},
  );
  // The bootstrap roles are real objects, as in a cluster.
  const discovery = await s.ok("GET", `${RBAC}/clusterrolebindings/system:discovery`) as {
    subjects: unknown[];
    metadata: { labels: Record<string, string> };
  };
  assert.deepEqual(discovery.subjects, [
    { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "system:authenticated" },
  ]);
  assert.equal(discovery.metadata.labels["kubernetes.io/bootstrapping"], "rbac-defaults");
  // Deleting the discovery binding takes discovery away (nothing is hard-wired but system:masters).
  await s.ok("DELETE", `${RBAC}/clusterrolebindings/system:discovery`);
  assertForbidden(
    await s.as(token, "GET", "/apis"),
    'forbidden: User "system:serviceaccount:default:nobody" cannot get path "/apis"',
    {},
  );
});

Deno.test("rbac: a ClusterRole bound by a RoleBinding grants in that namespace only", async () => {
  await using s = await rbacServer();
  await s.namespace("team");
  const token = await s.serviceAccount("op");
  await s.clusterRole("secret-reader", [
    { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] },
  ]);
  await s.roleBinding("team", "read-secrets", { kind: "ClusterRole", name: "secret-reader" }, [
    SA("op", "default"),
  ]);
  assert.equal((await s.as(token, "GET", "/api/v1/namespaces/team/secrets")).status, 200);
  assertForbidden(
    await s.as(token, "GET", "/api/v1/namespaces/default/secrets"),
    `secrets is forbidden: User "${SA_USER}" cannot list resource "secrets" in API group "" in the namespace "default"`,
    { kind: "secrets" },
  );
  assertForbidden(
    await s.as(token, "GET", "/api/v1/secrets"),
    `secrets is forbidden: User "${SA_USER}" cannot list resource "secrets" in API group "" at the cluster scope`,
    { kind: "secrets" },
  );
  // A RoleBinding's ServiceAccount subject without a namespace means the binding's namespace:
  // here "team", so not default's "op".
  await s.roleBinding("default", "nsless", { kind: "ClusterRole", name: "secret-reader" }, [
    SA("op"),
  ]);
  assert.equal((await s.as(token, "GET", "/api/v1/namespaces/default/secrets")).status, 200);
  const teamToken = await s.serviceAccount("op", "team");
  await s.roleBinding("team", "nsless", { kind: "ClusterRole", name: "secret-reader" }, [SA("op")]);
  assert.equal((await s.as(teamToken, "GET", "/api/v1/namespaces/team/secrets")).status, 200);
  assert.equal((await s.as(teamToken, "GET", "/api/v1/namespaces/default/secrets")).status, 403);
});

Deno.test("rbac: a ClusterRoleBinding grants cluster-scoped resources (namespaces, CRDs) and every namespace", async () => {
  await using s = await rbacServer();
  await s.namespace("other");
  const token = await s.serviceAccount("op");
  assertForbidden(
    await s.as(token, "GET", "/api/v1/namespaces"),
    `namespaces is forbidden: User "${SA_USER}" cannot list resource "namespaces" in API group "" at the cluster scope`,
    { kind: "namespaces" },
  );
  assertForbidden(
    await s.as(token, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"),
    `customresourcedefinitions.apiextensions.k8s.io is forbidden: User "${SA_USER}" cannot list resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope`,
    { group: "apiextensions.k8s.io", kind: "customresourcedefinitions" },
  );
  // A namespace is in itself: its GET is asked "in the namespace", as kube-apiserver asks it.
  assertForbidden(
    await s.as(token, "GET", "/api/v1/namespaces/other"),
    `namespaces "other" is forbidden: User "${SA_USER}" cannot get resource "namespaces" in API group "" in the namespace "other"`,
    { name: "other", kind: "namespaces" },
  );
  await s.clusterRole("observer", [
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] },
    {
      apiGroups: ["apiextensions.k8s.io"],
      resources: ["customresourcedefinitions"],
      verbs: ["list", "watch"],
    },
    { apiGroups: [""], resources: ["configmaps"], verbs: ["list"] },
  ]);
  await s.clusterRoleBinding("op-observes", "observer", [SA("op", "default")]);
  assert.equal((await s.as(token, "GET", "/api/v1/namespaces")).status, 200);
  assert.equal((await s.as(token, "GET", "/api/v1/namespaces/other")).status, 200);
  assert.equal(
    (await s.as(token, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")).status,
    200,
  );
  assert.equal((await s.as(token, "GET", "/api/v1/configmaps")).status, 200);
  assert.equal((await s.as(token, "GET", "/api/v1/namespaces/other/configmaps")).status, 200);
  assertForbidden(
    await s.as(token, "DELETE", "/api/v1/namespaces/other"),
    `namespaces "other" is forbidden: User "${SA_USER}" cannot delete resource "namespaces" in API group "" in the namespace "other"`,
    { name: "other", kind: "namespaces" },
  );
  assertForbidden(
    await s.as(token, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.y"),
    `customresourcedefinitions.apiextensions.k8s.io "x.y" is forbidden: User "${SA_USER}" cannot get resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope`,
    { name: "x.y", group: "apiextensions.k8s.io", kind: "customresourcedefinitions" },
  );
});

Deno.test("rbac: subresource rules — patch kopfexamples/status allowed, the main resource not; */status too", async () => {
  await using s = await rbacServer();
  await kopfExamplesCrd(s.ok);
  const token = await s.serviceAccount("op");
  await s.ok("POST", "/apis/kopf.dev/v1/namespaces/default/kopfexamples", {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "k1" },
    spec: { field: "x" },
  });
  await s.role("default", "status-writer", [
    { apiGroups: ["kopf.dev"], resources: ["kopfexamples/status"], verbs: ["patch"] },
  ]);
  await s.roleBinding("default", "b", { kind: "Role", name: "status-writer" }, [SA()]);
  const merge = "application/merge-patch+json";
  const status = await s.as(
    token,
    "PATCH",
    "/apis/kopf.dev/v1/namespaces/default/kopfexamples/k1/status",
    { status: { ok: true } },
    merge,
  );
  assert.equal(status.status, 200, JSON.stringify(status.body));
  assert.deepEqual(status.body.status, { ok: true });
  assertForbidden(
    await s.as(
      token,
      "PATCH",
      "/apis/kopf.dev/v1/namespaces/default/kopfexamples/k1",
      { metadata: { labels: { a: "b" } } },
      merge,
    ),
    `kopfexamples.kopf.dev "k1" is forbidden: User "${SA_USER}" cannot patch resource "kopfexamples" in API group "kopf.dev" in the namespace "default"`,
    { name: "k1", group: "kopf.dev", kind: "kopfexamples" },
  );
  assertForbidden(
    await s.as(token, "GET", "/apis/kopf.dev/v1/namespaces/default/kopfexamples/k1/status"),
    `kopfexamples.kopf.dev "k1" is forbidden: User "${SA_USER}" cannot get resource "kopfexamples/status" in API group "kopf.dev" in the namespace "default"`,
    { name: "k1", group: "kopf.dev", kind: "kopfexamples" },
  );
  // `*/status` allows any resource's status, and nothing else.
  const other = await s.serviceAccount("op2");
  await s.role("default", "any-status", [
    { apiGroups: ["*"], resources: ["*/status"], verbs: ["get"] },
  ]);
  await s.roleBinding("default", "b2", { kind: "Role", name: "any-status" }, [SA("op2")]);
  const path = "/apis/kopf.dev/v1/namespaces/default/kopfexamples/k1";
  assert.equal((await s.as(other, "GET", `${path}/status`)).status, 200);
  assert.equal((await s.as(other, "GET", path)).status, 403);
});

Deno.test("rbac: resourceNames allow the named objects only — not list, create, or another name; a list pinned by fieldSelector to the name passes", async () => {
  await using s = await rbacServer();
  const token = await s.serviceAccount("op");
  for (const name of ["mine", "theirs"]) {
    await s.ok("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name } });
  }
  await s.role("default", "one-cm", [{
    apiGroups: [""],
    resources: ["configmaps"],
    resourceNames: ["mine"],
    verbs: ["get", "list", "watch", "update", "patch", "create"],
  }]);
  await s.roleBinding("default", "b", { kind: "Role", name: "one-cm" }, [SA()]);
  const cms = "/api/v1/namespaces/default/configmaps";
  assert.equal((await s.as(token, "GET", `${cms}/mine`)).status, 200);
  const patched = await s.as(
    token,
    "PATCH",
    `${cms}/mine`,
    { data: { a: "1" } },
    "application/merge-patch+json",
  );
  assert.equal(patched.status, 200);
  assertForbidden(
    await s.as(token, "GET", `${cms}/theirs`),
    `configmaps "theirs" is forbidden: User "${SA_USER}" cannot get resource "configmaps" in API group "" in the namespace "default"`,
    { name: "theirs", kind: "configmaps" },
  );
  assertForbidden(
    await s.as(token, "GET", cms),
    `configmaps is forbidden: User "${SA_USER}" cannot list resource "configmaps" in API group "" in the namespace "default"`,
    { kind: "configmaps" },
  );
  // A create has no name to match (the body's name does not count), as in Kubernetes.
  assertForbidden(
    await s.as(token, "POST", cms, { metadata: { name: "mine2" } }),
    `configmaps is forbidden: User "${SA_USER}" cannot create resource "configmaps" in API group "" in the namespace "default"`,
    { kind: "configmaps" },
  );
  // `kubectl get cm mine -w` lists and watches with fieldSelector=metadata.name=mine.
  const pinned = await s.as(token, "GET", `${cms}?fieldSelector=metadata.name%3Dmine`);
  assert.equal(pinned.status, 200);
  assert.equal(pinned.body.items.length, 1);
  assertForbidden(
    await s.as(token, "GET", `${cms}?watch=true&fieldSelector=metadata.name%3Dtheirs`),
    `configmaps "theirs" is forbidden: User "${SA_USER}" cannot watch resource "configmaps" in API group "" in the namespace "default"`,
    { name: "theirs", kind: "configmaps" },
  );
});

Deno.test("rbac: subjects of kind User and Group (static tokens), a missing role named in the refusal", async () => {
  await using s = await rbacServer();
  await s.clusterRole("pod-reader", [{ apiGroups: [""], resources: ["pods"], verbs: ["list"] }]);
  await s.roleBinding("default", "devs-read-pods", { kind: "ClusterRole", name: "pod-reader" }, [
    { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "devs" },
  ]);
  await s.roleBinding("default", "bob-reads-leases", { kind: "Role", name: "missing" }, [
    { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "bob" },
  ]);
  const pods = "/api/v1/namespaces/default/pods";
  assert.equal((await s.as("alice-token", "GET", pods)).status, 200);
  assertForbidden(
    await s.as("bob-token", "GET", pods),
    `pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default": RBAC: role.rbac.authorization.k8s.io "missing" not found`,
    { kind: "pods" },
  );
  await s.clusterRoleBinding("bob-reads-pods", "pod-reader", [
    { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "bob" },
  ]);
  assert.equal((await s.as("bob-token", "GET", pods)).status, 200);
  const whoami = await s.as(
    "alice-token",
    "POST",
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    {
      apiVersion: "authentication.k8s.io/v1",
      kind: "SelfSubjectReview",
    },
  );
  assert.equal(whoami.status, 201);
  assert.deepEqual(whoami.body.status.userInfo, {
    username: "alice",
    uid: "u-alice",
    groups: ["devs", "system:authenticated"],
  });
});

Deno.test("rbac: with TLS, a client certificate's CN is the user and its O's the groups; the server's own certificate is in system:masters", async () => {
  await using s = await rbacServer({ tls: true });
  assert.equal((await s.admin("GET", "/api/v1/secrets")).status, 200);
  await s.clusterRole("ns-lister", [{
    apiGroups: [""],
    resources: ["namespaces"],
    verbs: ["list"],
  }]);
  await s.clusterRoleBinding("ops-list-ns", "ns-lister", [
    { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "ops" },
  ]);
  const carol = await s.api.issueClientCertificate("carol", ["devs", "ops"]);
  const client = Deno.createHttpClient({
    caCerts: [s.api.tls!.caCert],
    cert: carol.cert,
    key: carol.key,
  });
  try {
    const get = async (path: string) => {
      const res = await fetch(`${s.api.url}${path}`, { client });
      return { status: res.status, body: await res.json() };
    };
    assert.equal((await get("/api/v1/namespaces")).status, 200);
    const refused = await get("/api/v1/secrets");
    assert.equal(refused.status, 403);
    assert.equal(
      refused.body.message,
      'secrets is forbidden: User "carol" cannot list resource "secrets" in API group "" at the cluster scope',
    );
    const res = await fetch(`${s.api.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      client,
    });
    assert.deepEqual((await res.json()).status.userInfo, {
      username: "carol",
      groups: ["devs", "ops", "system:authenticated"],
    });
  } finally {
    client.close();
  }
  // Without a certificate: 401.
  const bare = Deno.createHttpClient({ caCerts: [s.api.tls!.caCert] });
  try {
    const res = await fetch(`${s.api.url}/api/v1/namespaces`, { client: bare });
    assert.equal(res.status, 401);
    await res.body?.cancel();
  } finally {
    bare.close();
  }
});

Deno.test("rbac: service account tokens — a deleted or recreated account's token is 401, an expired one too, a missing account's TokenRequest 404", async () => {
  await using s = await rbacServer();
  const token = await s.serviceAccount("op");
  const whoami = async (t: string) =>
    await s.as(t, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {});
  const me = await whoami(token);
  assert.equal(me.status, 201);
  assert.equal(me.body.status.userInfo.username, SA_USER);
  assert.deepEqual(me.body.status.userInfo.groups, [
    "system:serviceaccounts",
    "system:serviceaccounts:default",
    "system:authenticated",
  ]);
  // The token is a JWT with kube-apiserver's claims.
  const claims = JSON.parse(atob(token.split(".")[1]!.replaceAll("-", "+").replaceAll("_", "/")));
  assert.equal(claims.sub, SA_USER);
  assert.deepEqual(claims.aud, ["https://kubernetes.default.svc.cluster.local"]);
  assert.equal(claims["kubernetes.io"].serviceaccount.name, "op");
  assert.equal(claims.exp - claims.iat, 3600);

  const missing = await s.admin("POST", "/api/v1/namespaces/default/serviceaccounts/ghost/token", {
    spec: {},
  });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.message, 'serviceaccounts "ghost" not found');
  const short = await s.admin("POST", "/api/v1/namespaces/default/serviceaccounts/op/token", {
    spec: { expirationSeconds: 60 },
  });
  assert.equal(short.status, 422);
  assert.match(short.body.message, /may not specify a duration less than 10 minutes/);
  // A token for another audience does not authenticate to the API server.
  const foreign = await s.api.createToken("default", "op", { audiences: ["vault"] });
  assert.equal((await whoami(foreign)).status, 401);

  s.api.server.authenticator.serviceAccountTokens.now = () => Date.now() + 3601_000;
  assert.equal((await whoami(token)).status, 401);
  s.api.server.authenticator.serviceAccountTokens.now = () => Date.now();
  assert.equal((await whoami(token)).status, 201);

  await s.ok("DELETE", "/api/v1/namespaces/default/serviceaccounts/op");
  assert.equal((await whoami(token)).status, 401);
  await s.ok("POST", "/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "op" } });
  assert.equal((await whoami(token)).status, 401, "a recreated account does not inherit tokens");
});

Deno.test("rbac: access reviews — can-i (SelfSubjectAccessReview), --list (SelfSubjectRulesReview), SubjectAccessReview and TokenReview for the administrator", async () => {
  await using s = await rbacServer();
  const token = await s.serviceAccount("op");
  await s.role("default", "cm-reader", [
    { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] },
  ]);
  await s.roleBinding("default", "op-reads", { kind: "Role", name: "cm-reader" }, [SA()]);
  const ssar = async (attrs: Record<string, string>) =>
    await s.as(token, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: attrs },
    });
  const yes = await ssar({ namespace: "default", verb: "list", resource: "configmaps" });
  assert.equal(yes.status, 201);
  assert.deepEqual(yes.body.status, {
    allowed: true,
    reason:
      'RBAC: allowed by RoleBinding "op-reads/default" of Role "cm-reader" to ServiceAccount "op/default"',
  });
  const no = await ssar({ namespace: "default", verb: "create", resource: "configmaps" });
  assert.deepEqual(no.body.status, { allowed: false });

  const rules = await s.as(token, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {
    spec: { namespace: "default" },
  });
  assert.equal(rules.status, 201);
  assert.ok(
    rules.body.status.resourceRules.some((r: { resources: string[]; verbs: string[] }) =>
      r.resources.includes("configmaps") && r.verbs.includes("list")
    ),
  );
  assert.ok(
    rules.body.status.nonResourceRules.some((r: { nonResourceURLs: string[] }) =>
      r.nonResourceURLs.includes("/apis/*")
    ),
  );
  assert.equal(rules.body.status.incomplete, false);

  // Asking about others is for those allowed to create subjectaccessreviews: not op.
  const sar = {
    spec: {
      user: SA_USER,
      groups: ["system:serviceaccounts", "system:authenticated"],
      resourceAttributes: { namespace: "default", verb: "get", resource: "configmaps" },
    },
  };
  const path = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
  assert.equal((await s.as(token, "POST", path, sar)).status, 403);
  assert.equal(
    (await s.ok("POST", path, sar) as { status: { allowed: boolean } }).status.allowed,
    true,
  );
  const review = await s.ok("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
    spec: { token },
  }) as { status: { authenticated: boolean; user: { username: string } } };
  assert.equal(review.status.authenticated, true);
  assert.equal(review.status.user.username, SA_USER);
  const bad = await s.ok("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
    spec: { token: "nope" },
  }) as { status: { authenticated?: boolean } };
  assert.equal(bad.status.authenticated, undefined);
});

Deno.test("rbac: an aggregated ClusterRole has the rules of the ClusterRoles its selectors pick", async () => {
  await using s = await rbacServer();
  const token = await s.serviceAccount("op");
  await s.clusterRole("monitoring", [], {
    aggregationRule: {
      clusterRoleSelectors: [{ matchLabels: { "example.com/aggregate-to-monitoring": "true" } }],
    },
  });
  await s.roleBinding("default", "op-monitors", { kind: "ClusterRole", name: "monitoring" }, [
    SA(),
  ]);
  const pods = "/api/v1/namespaces/default/pods";
  assert.equal((await s.as(token, "GET", pods)).status, 403);
  await s.ok("POST", `${RBAC}/clusterroles`, {
    metadata: { name: "pods-viewer", labels: { "example.com/aggregate-to-monitoring": "true" } },
    rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["list"] }],
  });
  assert.equal((await s.as(token, "GET", pods)).status, 200);
});

Deno.test("rbac: without authorization nothing changes — tokens are not asked for, reviews allow everything", async () => {
  await using api = await startApiServer();
  assert.equal((await call(api.url, "GET", "/api/v1/secrets")).status, 200);
  const review = await call(
    api.url,
    "POST",
    "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
    {
      spec: { resourceAttributes: { verb: "delete", resource: "namespaces" } },
    },
  );
  assert.equal(review.status, 201);
  assert.deepEqual(review.body.status, { allowed: true });
  // No bootstrap roles appear in a server without RBAC.
  assert.equal((await call(api.url, "GET", `${RBAC}/clusterroles`)).body.items.length, 0);
  // The TokenRequest subresource answers anyway (kubectl create token works everywhere).
  await call(api.url, "POST", "/api/v1/namespaces/default/serviceaccounts", {
    metadata: { name: "op" },
  });
  const token = await call(
    api.url,
    "POST",
    "/api/v1/namespaces/default/serviceaccounts/op/token",
    {},
  );
  assert.equal(token.status, 201);
  assert.equal(typeof token.body.status.token, "string");
  // Discovery lists the subresource and the review kinds, as kube-apiserver's does.
  const core = await call(api.url, "GET", "/api/v1");
  const tokenEntry = core.body.resources.find((r: { name: string }) =>
    r.name === "serviceaccounts/token"
  );
  assert.deepEqual(tokenEntry.verbs, ["create"]);
  const authz = await call(api.url, "GET", "/apis/authorization.k8s.io/v1");
  assert.ok(
    authz.body.resources.some((r: { name: string }) => r.name === "selfsubjectaccessreviews"),
  );
});

Deno.test("rbac: impersonation (kubectl --as) needs the impersonate verb on users, serviceaccounts, groups", async () => {
  await using s = await rbacServer();
  const token = await s.serviceAccount("op");
  await s.clusterRole("pod-reader", [{ apiGroups: [""], resources: ["pods"], verbs: ["list"] }]);
  await s.clusterRoleBinding("devs-read-pods", "pod-reader", [
    { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "devs" },
  ]);
  const pods = "/api/v1/namespaces/default/pods";
  const asAlice = { "impersonate-user": "alice", "impersonate-group": "devs" };
  // The administrator may act as anyone: the request is then judged as alice in devs.
  const r = await call(s.api.url, "GET", pods, undefined, undefined, {
    authorization: `Bearer ${s.api.kubeconfig.object.users[0]!.user.token}`,
    ...asAlice,
  });
  assert.equal(r.status, 200);
  const asOp = await call(
    s.api.url,
    "GET",
    "/api/v1/namespaces/default/secrets",
    undefined,
    undefined,
    {
      authorization: `Bearer ${s.api.kubeconfig.object.users[0]!.user.token}`,
      "impersonate-user": SA_USER,
    },
  );
  assertForbidden(
    asOp,
    `secrets is forbidden: User "${SA_USER}" cannot list resource "secrets" in API group "" in the namespace "default"`,
    { kind: "secrets" },
  );
  // A service account may not, until granted impersonate on users and groups.
  const headers = { authorization: `Bearer ${token}`, ...asAlice };
  assertForbidden(
    await call(s.api.url, "GET", pods, undefined, undefined, headers),
    `users "alice" is forbidden: User "${SA_USER}" cannot impersonate resource "users" in API group "" at the cluster scope`,
    { name: "alice", kind: "users" },
  );
  await s.clusterRole("impersonator", [
    { apiGroups: [""], resources: ["users"], verbs: ["impersonate"], resourceNames: ["alice"] },
  ]);
  await s.clusterRoleBinding("op-impersonates", "impersonator", [SA("op", "default")]);
  assertForbidden(
    await call(s.api.url, "GET", pods, undefined, undefined, headers),
    `groups "devs" is forbidden: User "${SA_USER}" cannot impersonate resource "groups" in API group "" at the cluster scope`,
    { name: "devs", kind: "groups" },
  );
  await s.clusterRole("group-impersonator", [
    { apiGroups: [""], resources: ["groups"], verbs: ["impersonate"] },
  ]);
  await s.clusterRoleBinding("op-impersonates-groups", "group-impersonator", [SA("op", "default")]);
  assert.equal((await call(s.api.url, "GET", pods, undefined, undefined, headers)).status, 200);
});
