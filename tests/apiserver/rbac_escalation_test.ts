/**
 * RBAC escalation prevention on the embedded API server (`authorization:
 * "rbac"`), over real HTTP and with kubectl: a user grants through Roles and
 * bindings only what she holds, unless she has `escalate` (roles) or `bind`
 * (bindings) — the refusals word for word as kube-apiserver sends them.
 *
 * @module
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { type Answer, call } from "./_http.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

const RBAC = "/apis/rbac.authorization.k8s.io/v1";
const RBAC_GROUP = "rbac.authorization.k8s.io";
const NS_RBAC = `${RBAC}/namespaces/default`;
const ALICE_GROUPS = '["system:authenticated"]';

/** A server with RBAC on, users alice, bob, carol by static token, and grants made as the admin. */
async function escalationServer(options: { tls?: boolean } = {}) {
  const api = await startApiServer({
    authorization: "rbac",
    staticTokens: [
      { token: "alice-token", user: "alice" },
      { token: "bob-token", user: "bob" },
      { token: "carol-token", user: "carol" },
      // The administrator: system:masters is never refused (kube's EscalationAllowed).
      { token: "root-token", user: "root", groups: ["system:masters"] },
    ],
    ...options,
  });
  const adminToken = "root-token";
  const client = options.tls ? Deno.createHttpClient({ caCerts: [api.tls!.caCert] }) : undefined;
  const as = async (
    token: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Answer> => {
    const authorization = `Bearer ${token}`;
    if (!client) {
      return await call(api.url, method, path, body, "application/json", { authorization });
    }
    const res = await fetch(`${api.url}${path}`, {
      method,
      client,
      headers: { authorization, "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await as(adminToken, method, path, body);
    assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  /** Grants a user rules in a namespace ("" for cluster-wide) through a new role and binding. */
  const grant = async (
    user: string,
    name: string,
    rules: unknown[],
    namespace = "default",
  ) => {
    const base = namespace ? `${RBAC}/namespaces/${namespace}` : RBAC;
    const kind = namespace ? "Role" : "ClusterRole";
    await ok("POST", `${base}/${namespace ? "roles" : "clusterroles"}`, {
      metadata: { name },
      rules,
    });
    await ok("POST", `${base}/${namespace ? "rolebindings" : "clusterrolebindings"}`, {
      metadata: { name: `${name}-${user}` },
      roleRef: { apiGroup: RBAC_GROUP, kind, name },
      subjects: [{ kind: "User", apiGroup: RBAC_GROUP, name: user }],
    });
  };
  return {
    api,
    as,
    ok,
    grant,
    [Symbol.asyncDispose]: async () => {
      client?.close();
      await api[Symbol.asyncDispose]();
    },
  };
}

const bindingOf = (name: string, kind: string, role: string, user: string) => ({
  metadata: { name },
  roleRef: { apiGroup: RBAC_GROUP, kind, name: role },
  subjects: [{ kind: "User", apiGroup: RBAC_GROUP, name: user }],
});

const NOT_HELD = (resource: string, name: string, user: string, lines: string[]) =>
  `${resource}.${RBAC_GROUP} "${name}" is forbidden: user "${user}" (groups=${ALICE_GROUPS}) ` +
  `is attempting to grant RBAC permissions not currently held:\n${lines.join("\n")}`;

Deno.test("escalation: alice, who may only create rolebindings, cannot bind herself to cluster-admin nor then read secrets", async () => {
  await using s = await escalationServer();
  await s.grant("alice", "binder", [{
    apiGroups: [RBAC_GROUP],
    resources: ["rolebindings"],
    verbs: ["create"],
  }]);
  await s.ok("POST", "/api/v1/namespaces/default/secrets", { metadata: { name: "s1" } });

  const r = await s.as(
    "alice-token",
    "POST",
    `${NS_RBAC}/rolebindings`,
    bindingOf("pwn", "ClusterRole", "cluster-admin", "alice"),
  );
  assert.equal(r.status, 403, JSON.stringify(r.body));
  assert.equal(r.body.reason, "Forbidden");
  assert.deepEqual(r.body.details, { name: "pwn", group: RBAC_GROUP, kind: "rolebindings" });
  assert.equal(
    r.body.message,
    NOT_HELD("rolebindings", "pwn", "alice", [
      '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}',
      '{NonResourceURLs:["*"], Verbs:["*"]}',
    ]),
  );
  const read = await s.as("alice-token", "GET", "/api/v1/namespaces/default/secrets/s1");
  assert.equal(read.status, 403, JSON.stringify(read.body));
  const stored = await s.ok("GET", `${NS_RBAC}/rolebindings`);
  assert.deepEqual(stored.items.map((b: { metadata: { name: string } }) => b.metadata.name), [
    "binder-alice",
  ]);
  // A ClusterRoleBinding is refused alike (she may not even create those).
  const crb = await s.as(
    "alice-token",
    "POST",
    `${RBAC}/clusterrolebindings`,
    bindingOf("pwn", "ClusterRole", "cluster-admin", "alice"),
  );
  assert.equal(crb.status, 403);
});

Deno.test("escalation: alice may bind a role whose permissions she holds, in that namespace only, and no more", async () => {
  await using s = await escalationServer();
  await s.ok("POST", "/api/v1/namespaces", { metadata: { name: "other" } });
  await s.grant("alice", "binder", [
    { apiGroups: [RBAC_GROUP], resources: ["rolebindings"], verbs: ["create"] },
    { apiGroups: [""], resources: ["secrets"], verbs: ["get"] },
  ]);
  await s.grant("alice", "binder", [
    { apiGroups: [RBAC_GROUP], resources: ["rolebindings"], verbs: ["create"] },
  ], "other");
  await s.ok("POST", `${NS_RBAC}/roles`, {
    metadata: { name: "secret-getter" },
    rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
  });
  await s.ok("POST", `${RBAC}/clusterroles`, {
    metadata: { name: "secret-reader" },
    rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] }],
  });
  await s.ok("POST", "/api/v1/namespaces/default/secrets", { metadata: { name: "s1" } });

  const good = await s.as(
    "alice-token",
    "POST",
    `${NS_RBAC}/rolebindings`,
    bindingOf("bob-gets", "Role", "secret-getter", "bob"),
  );
  assert.equal(good.status, 201, JSON.stringify(good.body));
  assert.equal(
    (await s.as("bob-token", "GET", "/api/v1/namespaces/default/secrets/s1")).status,
    200,
  );

  // More than she holds: the verbs she lacks are listed, compacted into one line.
  const more = await s.as(
    "alice-token",
    "POST",
    `${NS_RBAC}/rolebindings`,
    bindingOf("bob-reads", "ClusterRole", "secret-reader", "bob"),
  );
  assert.equal(more.status, 403);
  assert.equal(
    more.body.message,
    NOT_HELD("rolebindings", "bob-reads", "alice", [
      '{APIGroups:[""], Resources:["secrets"], Verbs:["list" "watch"]}',
    ]),
  );
  // Her get on secrets is held in "default" only: in "other" the same grant is an escalation.
  const elsewhere = await s.as(
    "alice-token",
    "POST",
    `${RBAC}/namespaces/other/rolebindings`,
    bindingOf("bob-gets", "ClusterRole", "secret-reader", "bob"),
  );
  assert.equal(elsewhere.status, 403);
  assert.match(elsewhere.body.message, /Verbs:\["get" "list" "watch"\]/);
  // A missing role: nothing to compare with, refused with the registry's not-found.
  const missing = await s.as(
    "alice-token",
    "POST",
    `${NS_RBAC}/rolebindings`,
    bindingOf("ghost", "Role", "nope", "bob"),
  );
  assert.equal(missing.status, 403);
  assert.equal(
    missing.body.message,
    `rolebindings.${RBAC_GROUP} "ghost" is forbidden: roles.${RBAC_GROUP} "nope" not found`,
  );
});

Deno.test("escalation: `bind` on clusterroles/cluster-admin lets alice bind it (that name only)", async () => {
  await using s = await escalationServer();
  await s.grant("alice", "binder", [
    { apiGroups: [RBAC_GROUP], resources: ["rolebindings"], verbs: ["create"] },
  ]);
  await s.grant("alice", "may-bind-admin", [{
    apiGroups: [RBAC_GROUP],
    resources: ["clusterroles"],
    verbs: ["bind"],
    resourceNames: ["cluster-admin"],
  }], "");
  await s.ok("POST", `${RBAC}/clusterroles`, {
    metadata: { name: "pod-reader" },
    rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }],
  });
  await s.ok("POST", "/api/v1/namespaces/default/secrets", { metadata: { name: "s1" } });

  // `bind` names cluster-admin only: another role she does not hold is an escalation.
  const other = await s.as(
    "alice-token",
    "POST",
    `${NS_RBAC}/rolebindings`,
    bindingOf("pods", "ClusterRole", "pod-reader", "alice"),
  );
  assert.equal(other.status, 403, JSON.stringify(other.body));
  assert.equal(
    other.body.message,
    NOT_HELD("rolebindings", "pods", "alice", [
      '{APIGroups:[""], Resources:["pods"], Verbs:["get"]}',
    ]),
  );
  const bound = await s.as(
    "alice-token",
    "POST",
    `${NS_RBAC}/rolebindings`,
    bindingOf("admin-here", "ClusterRole", "cluster-admin", "alice"),
  );
  assert.equal(bound.status, 201, JSON.stringify(bound.body));
  assert.equal(
    (await s.as("alice-token", "GET", "/api/v1/namespaces/default/secrets/s1")).status,
    200,
  );
  // Bound in "default" only: elsewhere she still holds nothing.
  const elsewhere = await s.as("alice-token", "GET", "/api/v1/namespaces/kube-system/secrets");
  assert.equal(elsewhere.status, 403);
});

Deno.test("escalation: a Role granting more than its author holds needs `escalate`; what she holds she may grant", async () => {
  await using s = await escalationServer();
  const roleWriter = { apiGroups: [RBAC_GROUP], resources: ["roles"], verbs: ["create", "update"] };
  await s.grant("alice", "writer", [roleWriter, {
    apiGroups: [""],
    resources: ["configmaps"],
    verbs: ["get", "list"],
  }]);
  await s.grant("carol", "escalator", [roleWriter, {
    apiGroups: [RBAC_GROUP],
    resources: ["roles"],
    verbs: ["escalate"],
  }]);
  const secrets = {
    metadata: { name: "secrets" },
    rules: [{ apiGroups: [""], resources: ["secrets", "pods/exec"], verbs: ["get", "create"] }],
  };

  const refused = await s.as("alice-token", "POST", `${NS_RBAC}/roles`, secrets);
  assert.equal(refused.status, 403);
  assert.deepEqual(refused.body.details, { name: "secrets", group: RBAC_GROUP, kind: "roles" });
  assert.equal(
    refused.body.message,
    NOT_HELD("roles", "secrets", "alice", [
      '{APIGroups:[""], Resources:["pods/exec"], Verbs:["get" "create"]}',
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "create"]}',
    ]),
  );
  const held = await s.as("alice-token", "POST", `${NS_RBAC}/roles`, {
    metadata: { name: "cm" },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
  });
  assert.equal(held.status, 201, JSON.stringify(held.body));
  // Update as well as create: widening her own role beyond what she holds is refused.
  const widened = await s.as("alice-token", "PUT", `${NS_RBAC}/roles/cm`, {
    ...held.body,
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "delete"] }],
  });
  assert.equal(widened.status, 403);
  assert.equal(
    widened.body.message,
    NOT_HELD("roles", "cm", "alice", [
      '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}',
    ]),
  );
  // With `escalate`, carol writes what she does not hold.
  const carol = await s.as("carol-token", "POST", `${NS_RBAC}/roles`, secrets);
  assert.equal(carol.status, 201, JSON.stringify(carol.body));
  // A ClusterRole needs cluster-wide holdings: alice's namespaced ones do not count.
  await s.grant("alice", "cr-writer", [{
    apiGroups: [RBAC_GROUP],
    resources: ["clusterroles"],
    verbs: ["create"],
  }], "");
  const cluster = await s.as("alice-token", "POST", `${RBAC}/clusterroles`, {
    metadata: { name: "cm-everywhere" },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
  });
  assert.equal(cluster.status, 403);
});

Deno.test("escalation: updates of bindings are checked; aggregated ClusterRoles count with their gathered rules", async () => {
  await using s = await escalationServer();
  await s.grant("alice", "binder", [
    { apiGroups: [RBAC_GROUP], resources: ["rolebindings"], verbs: ["create", "update", "get"] },
    { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
  ]);
  await s.grant("alice", "cr-writer", [{
    apiGroups: [RBAC_GROUP],
    resources: ["clusterroles"],
    verbs: ["create"],
  }], "");
  await s.ok("POST", `${RBAC}/clusterroles`, {
    metadata: { name: "gathered", labels: { "agg": "yes" } },
    rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
  });
  await s.ok("POST", `${RBAC}/clusterroles`, {
    metadata: { name: "aggregate" },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { agg: "yes" } }] },
  });
  const agg = await s.as(
    "alice-token",
    "POST",
    `${NS_RBAC}/rolebindings`,
    bindingOf("agg", "ClusterRole", "aggregate", "alice"),
  );
  assert.equal(agg.status, 403);
  assert.equal(
    agg.body.message,
    NOT_HELD("rolebindings", "agg", "alice", [
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    ]),
  );
  // An aggregationRule gathers anything: it takes `*` on everything.
  const rule = await s.as("alice-token", "POST", `${RBAC}/clusterroles`, {
    metadata: { name: "mine" },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { agg: "yes" } }] },
  });
  assert.equal(rule.status, 403);
  assert.equal(
    rule.body.message,
    `clusterroles.${RBAC_GROUP} "mine" is forbidden: must have cluster-admin privileges to use the aggregationRule`,
  );

  // The admin binds bob to "gathered"; alice may not add herself as a subject.
  const made = await s.ok(
    "POST",
    `${NS_RBAC}/rolebindings`,
    bindingOf("bob-secrets", "ClusterRole", "gathered", "bob"),
  );
  const addSelf = await s.as("alice-token", "PUT", `${NS_RBAC}/rolebindings/bob-secrets`, {
    ...made,
    subjects: [...made.subjects, { kind: "User", apiGroup: RBAC_GROUP, name: "alice" }],
  });
  assert.equal(addSelf.status, 403, JSON.stringify(addSelf.body));
  // What the garbage collector changes (ownerReferences, finalizers) is not an escalation.
  const gc = await s.as("alice-token", "PUT", `${NS_RBAC}/rolebindings/bob-secrets`, {
    ...made,
    metadata: { ...made.metadata, finalizers: ["example.com/keep"] },
  });
  assert.equal(gc.status, 200, JSON.stringify(gc.body));
});

testEachKubectl(["1.33"], `escalation refused as kubectl prints it`, async (binary) => {
  await using s = await escalationServer({ tls: true });
  await s.grant("alice", "binder", [{
    apiGroups: [RBAC_GROUP],
    resources: ["rolebindings"],
    verbs: ["create"],
  }]);
  const dir = await Deno.makeTempDir({ prefix: "kopf-escalation-kubectl-" });
  try {
    const path = `${dir}/kubeconfig`;
    await Deno.writeTextFile(path, s.api.kubeconfigFor({ token: "alice-token" }));
    await using alice = await Kubectl.create(binary, path);
    const r = await alice.fails([
      "create",
      "rolebinding",
      "pwn",
      "--clusterrole=cluster-admin",
      "--user=alice",
    ]);
    assert.equal(
      r.stderr,
      `error: failed to create rolebinding: ${
        NOT_HELD("rolebindings", "pwn", "alice", [
          '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}',
          '{NonResourceURLs:["*"], Verbs:["*"]}',
        ])
      }\n`,
    );
    const secrets = await alice.fails(["get", "secrets"]);
    assert.match(secrets.stderr, /Error from server \(Forbidden\): secrets is forbidden/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
