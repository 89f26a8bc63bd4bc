/**
 * An operator (examples/01-minimal) run as a service account on the embedded
 * API server with `authorization: "rbac"`: with a hand-written Role that is
 * enough, it works and is refused nothing; with the same Role minus `patch` on
 * its resource, the handler still runs but the result cannot be written, and
 * the operator's log names the missing permission (verb, resource, group,
 * namespace, and the account) — what proves generated RBAC right or short.
 *
 * @module
 */

import assert from "node:assert/strict";
import { load as parseYaml } from "js-yaml";
import { OperatorSettings } from "../../mod.ts";
import { KopfRunner, type RunningApiServer, startApiServer } from "../../testing.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const RBAC = "/apis/rbac.authorization.k8s.io/v1";
const KEX = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";
const OP = "system:serviceaccount:default:op";

/** The Role the minimal operator needs in its namespace (`kopf run -n default`). */
function operatorRules(kopfexampleVerbs: string[]) {
  return [
    { apiGroups: ["kopf.dev"], resources: ["kopfexamples"], verbs: kopfexampleVerbs },
    { apiGroups: ["kopf.dev"], resources: ["kopfexamples/status"], verbs: ["patch"] },
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
  ];
}

/** The cluster-wide reads Kopf's operators do even when namespaced (as Kopf's docs grant). */
const CLUSTER_RULES = [
  { apiGroups: [""], resources: ["namespaces"], verbs: ["list", "watch"] },
  {
    apiGroups: ["apiextensions.k8s.io"],
    resources: ["customresourcedefinitions"],
    verbs: ["list", "watch"],
  },
];

/** As the administrator (the server's own token). */
async function admin(api: RunningApiServer, method: string, path: string, body?: unknown) {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${api.kubeconfig.object.users[0]!.user.token}`,
      "content-type": "application/json",
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const answer = await res.json();
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** The CRD, the service account `op` bound to the rules, and a kubeconfig with its token. */
async function setUp(api: RunningApiServer, kopfexampleVerbs: string[], dir: string) {
  const crd = parseYaml(await Deno.readTextFile(`${ROOT}examples/crd.yaml`));
  await admin(api, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  await admin(api, "POST", "/api/v1/namespaces/default/serviceaccounts", {
    metadata: { name: "op" },
  });
  const subjects = [{ kind: "ServiceAccount", name: "op", namespace: "default" }];
  await admin(api, "POST", `${RBAC}/namespaces/default/roles`, {
    metadata: { name: "kopf-minimal" },
    rules: operatorRules(kopfexampleVerbs),
  });
  await admin(api, "POST", `${RBAC}/namespaces/default/rolebindings`, {
    metadata: { name: "kopf-minimal" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "kopf-minimal" },
    subjects,
  });
  await admin(api, "POST", `${RBAC}/clusterroles`, {
    metadata: { name: "kopf-minimal" },
    rules: CLUSTER_RULES,
  });
  await admin(api, "POST", `${RBAC}/clusterrolebindings`, {
    metadata: { name: "kopf-minimal" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "kopf-minimal" },
    subjects,
  });
  // Over the TokenRequest API, as `kubectl create token op` gets it.
  const answer = await admin(api, "POST", "/api/v1/namespaces/default/serviceaccounts/op/token", {
    spec: {},
  });
  const path = `${dir}/kubeconfig`;
  await Deno.writeTextFile(path, api.kubeconfigFor({ token: answer.status.token }));
  return path;
}

async function startOperator(kubeconfig: string): Promise<KopfRunner> {
  return await KopfRunner.start(
    ["run", "-n", "default", "--standalone", "--verbose", `${ROOT}examples/01-minimal/example.ts`],
    { kubeconfig },
  );
}

Deno.test("rbac operator: 01-minimal as a service account with a Role that is enough — handled, written, nothing refused", async () => {
  await using api = await startApiServer({ authorization: "rbac" });
  const dir = await Deno.makeTempDir({ prefix: "kopf-rbac-operator-" });
  try {
    const kubeconfig = await setUp(api, ["get", "list", "watch", "patch"], dir);
    const runner = await startOperator(kubeconfig);
    try {
      const obj = parseYaml(await Deno.readTextFile(`${ROOT}examples/obj.yaml`));
      await admin(api, "POST", KEX, obj);
      await runner.waitFor("All handlers succeeded for creation.");
      await runner.waitFor(/Something has changed, but we are not interested/);
      const stored = await admin(api, "GET", `${KEX}/kopf-example-1`);
      assert.deepEqual(stored.status, { create_fn: { message: "hello world" } });
      assert.match(
        stored.metadata.annotations["kopf.zalando.org/last-handled-configuration"],
        /"field":"value"/,
      );
      await admin(api, "DELETE", `${KEX}/kopf-example-1`);
      await runner.waitFor("Deleted, really deleted");
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    assert.doesNotMatch(runner.output, /[Ff]orbidden/);
    assert.equal(api.countRequests({ code: 403 }), 0);
    assert.ok(
      api.countRequests({ resource: "kopfexamples.kopf.dev", verb: "patch", code: 200 }) > 0,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rbac operator: the same Role minus patch on kopfexamples — the log names the missing permission", async () => {
  await using api = await startApiServer({ authorization: "rbac" });
  const dir = await Deno.makeTempDir({ prefix: "kopf-rbac-operator-" });
  try {
    const kubeconfig = await setUp(api, ["get", "list", "watch"], dir);
    const runner = await startOperator(kubeconfig);
    try {
      const obj = parseYaml(await Deno.readTextFile(`${ROOT}examples/obj.yaml`));
      await admin(api, "POST", KEX, obj);
      await runner.waitFor("Handler 'create_fn' succeeded.");
      const output = await runner.waitFor(/cannot patch resource "kopfexamples"/);
      const line = output.split("\n").find((l) =>
        l.includes('cannot patch resource "kopfexamples"')
      )!;
      // One line: which object, that the write was refused, and exactly what to grant to whom.
      assert.match(line, /\[ERROR +\] \[default\/kopf-example-1\] Throttling for \d+ seconds/);
      assert.ok(
        line.includes(
          `PATCH ${KEX}/kopf-example-1: 403 Forbidden: kopfexamples.kopf.dev "kopf-example-1" is forbidden: ` +
            `User "${OP}" cannot patch resource "kopfexamples" in API group "kopf.dev" in the namespace "default"` +
            ` — grant this verb on this resource to the operator's account (RBAC)`,
        ),
        line,
      );
      // Nothing was written: neither the result nor the diff-base.
      const stored = await admin(api, "GET", `${KEX}/kopf-example-1`);
      assert.equal(stored.status, undefined);
      assert.equal(
        stored.metadata.annotations["kopf.zalando.org/last-handled-configuration"],
        undefined,
      );
    } finally {
      await runner.stop();
    }
    assert.ok(api.countRequests({ resource: "kopfexamples.kopf.dev", code: 403 }) > 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rbac operator: without list on its resource the operator stops with one line naming it", async () => {
  await using api = await startApiServer({ authorization: "rbac" });
  const dir = await Deno.makeTempDir({ prefix: "kopf-rbac-operator-" });
  try {
    const kubeconfig = await setUp(api, ["get", "watch", "patch"], dir);
    // Listed (LIST, then WATCH): a streamed state needs no list verb — the watch brings it.
    const settings = new OperatorSettings();
    settings.watching.streamingLists = "never";
    const runner = await KopfRunner.start(
      ["run", "-n", "default", "--standalone", `${ROOT}examples/01-minimal/example.ts`],
      { kubeconfig, reraise: false, settings },
    );
    const deadline = Date.now() + 10_000;
    while (!runner.finished && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await runner.stop();
    assert.equal(runner.exitCode, 1);
    assert.equal(
      (runner.exception as Error).message,
      `The Kubernetes API refused a request: GET ${KEX}?limit=500: 403 Forbidden: kopfexamples.kopf.dev is forbidden: ` +
        `User "${OP}" cannot list resource "kopfexamples" in API group "kopf.dev" in the namespace "default"` +
        ` — grant this verb on this resource to the operator's account (RBAC)`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
