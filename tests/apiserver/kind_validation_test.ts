/**
 * kube-apiserver's validation of webhook configurations, Ingresses and
 * PriorityClasses, with kube's 422 and 403 messages, and the system
 * PriorityClasses every cluster lists — table-driven over raw HTTP and with
 * kubectl.
 *
 * @module
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { call } from "./_http.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

const REG = "/apis/admissionregistration.k8s.io/v1";
const ING = "/apis/networking.k8s.io/v1/namespaces/default/ingresses";
const PCS = "/apis/scheduling.k8s.io/v1/priorityclasses";

type Json = Record<string, unknown>;

const HOOK: Json = {
  name: "check.kopf.dev",
  clientConfig: { url: "https://hook.example.com/check" },
  rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
  sideEffects: "None",
  admissionReviewVersions: ["v1"],
};
const BACKEND = { service: { name: "web", port: { number: 80 } } };
const ingress = (paths: unknown[], extra: Json = {}) => ({
  metadata: { name: "ing" },
  spec: { rules: [{ host: "example.com", http: { paths } }], ...extra },
});

interface Row {
  name: string;
  path: string;
  body: Json;
  /** The causes as `field: message`, in kube's order; none for a 201. */
  causes?: string[];
}

const hooks = (kind: string, ...webhooks: Json[]): Json => ({
  metadata: { name: kind },
  webhooks,
});
const without = (obj: Json, key: string): Json => {
  const out = { ...obj };
  delete out[key];
  return out;
};

const ROWS: Row[] = [
  {
    name: "a validating webhook with what kube requires is accepted",
    path: `${REG}/validatingwebhookconfigurations`,
    body: hooks("v", HOOK),
  },
  {
    name: "a webhook without sideEffects and admissionReviewVersions is refused",
    path: `${REG}/validatingwebhookconfigurations`,
    body: hooks("v", without(without(HOOK, "sideEffects"), "admissionReviewVersions")),
    causes: [
      "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
      "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1",
    ],
  },
  {
    name: "a mutating webhook's sideEffects Some (v1beta1's) and an unknown reinvocationPolicy",
    path: `${REG}/mutatingwebhookconfigurations`,
    body: hooks("m", { ...HOOK, sideEffects: "Some", reinvocationPolicy: "Always" }),
    causes: [
      'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
      'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
    ],
  },
  {
    name: "webhook names: required, three segments, unique",
    path: `${REG}/validatingwebhookconfigurations`,
    body: hooks("v", without(HOOK, "name"), { ...HOOK, name: "check.kopf" }, HOOK, HOOK),
    causes: [
      "webhooks[0].name: Required value",
      'webhooks[1].name: Invalid value: "check.kopf": should be a domain with at least three segments separated by dots',
      'webhooks[3].name: Duplicate value: "check.kopf.dev"',
    ],
  },
  {
    name: "clientConfig: exactly one of url or service",
    path: `${REG}/validatingwebhookconfigurations`,
    body: hooks("v", { ...HOOK, clientConfig: {} }, {
      ...HOOK,
      name: "two.kopf.dev",
      clientConfig: { url: "https://h/", service: { namespace: "default", name: "hooks" } },
    }),
    causes: [
      "webhooks[0].clientConfig: Required value: exactly one of url or service is required",
      "webhooks[1].clientConfig: Required value: exactly one of url or service is required",
    ],
  },
  {
    name: "clientConfig.url: https, a host, no user, query or fragment",
    path: `${REG}/validatingwebhookconfigurations`,
    body: hooks("v", { ...HOOK, clientConfig: { url: "http://me@/x?a=1#top" } }),
    causes: [
      `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      'webhooks[0].clientConfig.url: Invalid value: "": host must be specified; desired format: https://host[/path]',
      'webhooks[0].clientConfig.url: Invalid value: "me": user information is not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "top": fragments are not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "a=1": query parameters are not permitted in the URL',
    ],
  },
  {
    name: "clientConfig.service: a port in range and a path of DNS segments",
    path: `${REG}/validatingwebhookconfigurations`,
    body: hooks("v", {
      ...HOOK,
      clientConfig: { service: { namespace: "default", name: "hooks", port: 70000, path: "v/A" } },
    }),
    causes: [
      "webhooks[0].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive",
      `webhooks[0].clientConfig.service.path: Invalid value: "v/A": must start with a '/'`,
      'webhooks[0].clientConfig.service.path: Invalid value: "v/A": segment[0] may not be empty',
      `webhooks[0].clientConfig.service.path: Invalid value: "v/A": segment[1]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ],
  },
  {
    name: "timeoutSeconds 1–30, failurePolicy and matchPolicy enums, review versions",
    path: `${REG}/validatingwebhookconfigurations`,
    body: hooks("v", {
      ...HOOK,
      timeoutSeconds: 31,
      failurePolicy: "Retry",
      matchPolicy: "Loose",
      admissionReviewVersions: ["v2", "v2"],
    }),
    causes: [
      'webhooks[0].failurePolicy: Unsupported value: "Retry": supported values: "Fail", "Ignore"',
      'webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"',
      "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
      'webhooks[0].admissionReviewVersions[1]: Invalid value: "v2": duplicate version',
      'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2", "v2"}: must include at least one of v1, v1beta1',
    ],
  },
  {
    name: "rules: operations, groups, versions, resources, scope",
    path: `${REG}/validatingwebhookconfigurations`,
    body: hooks("v", {
      ...HOOK,
      rules: [{
        operations: ["*", "GET"],
        apiGroups: [],
        apiVersions: ["v1"],
        resources: ["*/*", "pods"],
        scope: "Global",
      }],
    }),
    causes: [
      `webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "GET"}: if '*' is present, must not specify other operations`,
      'webhooks[0].rules[0].operations[1]: Unsupported value: "GET": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
      "webhooks[0].rules[0].apiGroups: Required value",
      `webhooks[0].rules[0].resources: Invalid value: []string{"*/*", "pods"}: if '*/*' is present, must not specify other resources`,
      'webhooks[0].rules[0].scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"',
    ],
  },
  {
    name: "an Ingress with pathType and a service backend is accepted",
    path: ING,
    body: ingress([{ path: "/", pathType: "Prefix", backend: BACKEND }]),
  },
  {
    name: "an Ingress path without pathType is refused",
    path: ING,
    body: ingress([{ path: "/", backend: BACKEND }]),
    causes: ["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"],
  },
  {
    name: "an Ingress path: pathType values, absolute paths, backends required",
    path: ING,
    body: ingress([
      { path: "/", pathType: "Regex", backend: BACKEND },
      { path: "api/../x", pathType: "Exact", backend: {} },
      { path: "/", pathType: "ImplementationSpecific", backend: { service: { name: "web" } } },
    ]),
    causes: [
      'spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"',
      'spec.rules[0].http.paths[1].path: Invalid value: "api/../x": must be an absolute path',
      `spec.rules[0].http.paths[1].path: Invalid value: "api/../x": must not contain '/../'`,
      'spec.rules[0].http.paths[1].backend: Invalid value: "": resource or service backend is required',
      "spec.rules[0].http.paths[2].backend: Required value: port name or number is required",
    ],
  },
  {
    name: "an Ingress without rules or a default backend, and an IP host",
    path: ING,
    body: { metadata: { name: "ing" }, spec: { tls: [{ hosts: ["*.example.com"] }] } },
    causes: [
      "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified",
    ],
  },
  {
    name: "an Ingress rule's host is a DNS name, not an IP address; http needs paths",
    path: ING,
    body: {
      metadata: { name: "ing" },
      spec: { rules: [{ host: "10.0.0.1", http: { paths: [] } }] },
    },
    causes: [
      'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
      "spec.rules[0].http.paths: Required value",
    ],
  },
  {
    name: "a user PriorityClass above 1000000000 is refused",
    path: PCS,
    body: { metadata: { name: "too-high" }, value: 1000000001 },
    causes: ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"],
  },
  {
    name: "a system- PriorityClass name is reserved",
    path: PCS,
    body: { metadata: { name: "system-mine" }, value: 10 },
    causes: [
      "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class",
    ],
  },
  {
    name: "a PriorityClass's preemptionPolicy is Never or PreemptLowerPriority",
    path: PCS,
    body: { metadata: { name: "odd" }, value: 10, preemptionPolicy: "Sometimes" },
    causes: [
      'preemptionPolicy: Unsupported value: "Sometimes": supported values: "Never", "PreemptLowerPriority"',
    ],
  },
];

for (const row of ROWS) {
  Deno.test(`kind validation: ${row.name}`, async () => {
    await using api = await startApiServer();
    const r = await call(api.url, "POST", row.path, row.body);
    if (!row.causes) {
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return;
    }
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.equal(r.body.reason, "Invalid");
    const got = (r.body.details.causes as Array<{ field: string; message: string }>)
      .map((c) => `${c.field}: ${c.message}`);
    assert.deepEqual(got, row.causes);
  });
}

Deno.test("a webhook configuration stored without v1's required fields may still be updated as kube allows", async () => {
  await using api = await startApiServer();
  const def = api.server.registry.find(
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
  )!;
  // As stored by v1beta1 once: side effects Some; written under the validation.
  api.server.store.commit("ADDED", "validatingwebhookconfigurations.admissionregistration.k8s.io", {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "old", uid: crypto.randomUUID(), creationTimestamp: "2020-01-01T00:00:00Z" },
    webhooks: [{ ...HOOK, sideEffects: "Some" }],
  });
  assert.ok(def);
  const r = await call(api.url, "PATCH", `${REG}/validatingwebhookconfigurations/old`, {
    webhooks: [{ ...HOOK, sideEffects: "Some", timeoutSeconds: 5 }],
  }, "application/merge-patch+json");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.webhooks[0].timeoutSeconds, 5);
});

/** A PriorityClass write refused with kube's 403: its reason, message and details. */
// deno-lint-ignore no-explicit-any
function assertPcForbidden(answer: { status: number; body: any }, name: string, why: string) {
  assert.equal(answer.status, 403, JSON.stringify(answer.body));
  assert.equal(answer.body.reason, "Forbidden");
  assert.equal(
    answer.body.message,
    `priorityclasses.scheduling.k8s.io "${name}" is forbidden: ${why}`,
  );
  assert.deepEqual(answer.body.details, {
    name,
    group: "scheduling.k8s.io",
    kind: "priorityclasses",
  });
}

Deno.test("the system PriorityClasses are there from the start, cannot be deleted by name or changed", async () => {
  await using api = await startApiServer();
  const list = await call(api.url, "GET", PCS);
  assert.deepEqual(
    list.body.items.map((pc: Json) => [
      (pc.metadata as Json).name,
      pc.value,
      pc.globalDefault,
      pc.preemptionPolicy,
    ]),
    [
      ["system-cluster-critical", 2000000000, undefined, "PreemptLowerPriority"],
      ["system-node-critical", 2000001000, undefined, "PreemptLowerPriority"],
    ],
  );
  const gone = await call(api.url, "DELETE", `${PCS}/system-node-critical`);
  assertPcForbidden(
    gone,
    "system-node-critical",
    "this is a system priority class and cannot be deleted",
  );
  const changed = await call(api.url, "PATCH", `${PCS}/system-cluster-critical`, {
    value: 5,
    preemptionPolicy: "Never",
  }, "application/merge-patch+json");
  assert.equal(changed.status, 422, JSON.stringify(changed.body));
  assert.deepEqual(changed.body.details.causes.map((c: Json) => `${c.field}: ${c.message}`), [
    "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-cluster-critical PriorityClass must be 2000000000",
    "value: Forbidden: may not be changed in an update.",
    'preemptionPolicy: Invalid value: "Never": field is immutable',
  ]);
  // A description may change, as on a real cluster.
  const described = await call(api.url, "PATCH", `${PCS}/system-cluster-critical`, {
    description: "ours",
  }, "application/merge-patch+json");
  assert.equal(described.status, 200, JSON.stringify(described.body));
  // A pod names one and gets its priority from the stored class.
  const pod = await call(api.url, "POST", "/api/v1/namespaces/default/pods", {
    metadata: { name: "p" },
    spec: { priorityClassName: "system-node-critical", containers: [{ name: "c", image: "x" }] },
  });
  assert.equal(pod.status, 201, JSON.stringify(pod.body));
  assert.equal(pod.body.spec.priority, 2000001000);
});

Deno.test("only one PriorityClass may be the global default: a second one, or another marked so, is the Priority plugin's 403", async () => {
  await using api = await startApiServer();
  const pc = (name: string, value: number, globalDefault: boolean) => ({
    metadata: { name },
    value,
    globalDefault,
  });
  assert.equal((await call(api.url, "POST", PCS, pc("first", 10, true))).status, 201);
  assert.equal((await call(api.url, "POST", PCS, pc("plain", 5, false))).status, 201);
  const second = await call(api.url, "POST", PCS, pc("second", 20, true));
  assertPcForbidden(
    second,
    "second",
    "PriorityClass first is already marked as default. Only one default can exist",
  );
  const marked = await call(api.url, "PATCH", `${PCS}/plain`, {
    globalDefault: true,
  }, "application/merge-patch+json");
  assert.equal(marked.status, 403, JSON.stringify(marked.body));
  assert.match(marked.body.message, /"plain" is forbidden: PriorityClass first is already marked/);
  const again = await call(api.url, "PATCH", `${PCS}/first`, {
    description: "the default",
  }, "application/merge-patch+json");
  assert.equal(again.status, 200, "the default itself may be written");
  // The class's own 422 comes first, as kube validates the class before the plugin runs.
  const both = await call(api.url, "POST", PCS, pc("third", 2000000001, true));
  assert.equal(both.status, 422, JSON.stringify(both.body));
  assert.equal((await call(api.url, "DELETE", `${PCS}/first`)).status, 200);
  assert.equal((await call(api.url, "POST", PCS, pc("second", 20, true))).status, 201);
});

Deno.test("the system PriorityClasses are not stored twice when a data directory is loaded again", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let uids: string[];
    {
      await using api = await startApiServer({ dataDir: dir });
      uids = (await call(api.url, "GET", PCS)).body.items.map((pc: Json) =>
        (pc.metadata as Json).uid
      );
      // A collection delete removes them, as kube's (its Store.Delete, not REST.Delete).
      const all = await call(api.url, "DELETE", PCS);
      assert.equal(all.status, 200, JSON.stringify(all.body));
      assert.equal((await call(api.url, "GET", PCS)).body.items.length, 0);
    }
    {
      await using api = await startApiServer({ dataDir: dir });
      const again = (await call(api.url, "GET", PCS)).body.items;
      assert.deepEqual(again.map((pc: Json) => (pc.metadata as Json).name), [
        "system-cluster-critical",
        "system-node-critical",
      ]);
      uids = again.map((pc: Json) => (pc.metadata as Json).uid);
    }
    {
      await using api = await startApiServer({ dataDir: dir });
      const kept = (await call(api.url, "GET", PCS)).body.items;
      assert.deepEqual(kept.map((pc: Json) => (pc.metadata as Json).uid), uids);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

testEachKubectl(
  ["1.27", "1.33"],
  "kubectl sees the system PriorityClasses, cannot delete them, and meets the Ingress and webhook rules",
  async (bin) => {
    await using api = await startApiServer();
    await using k = await Kubectl.create(bin, api.kubeconfig.path);
    const table = await k.ok(["get", "priorityclass"]);
    assert.match(table, /^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+PREEMPTION-POLICY\s+AGE\n/);
    assert.match(table, /\nsystem-cluster-critical\s+2000000000\s+false\s+PreemptLowerPriority\s+/);
    assert.match(table, /\nsystem-node-critical\s+2000001000\s+false\s+PreemptLowerPriority\s+/);
    const del = await k.fails(["delete", "priorityclass", "system-node-critical"]);
    assert.match(
      del.stderr,
      /Error from server \(Forbidden\): priorityclasses\.scheduling\.k8s\.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted/,
    );
    await k.ok(["create", "priorityclass", "first", "--value=10", "--global-default"]);
    const second = await k.fails([
      "create",
      "priorityclass",
      "second",
      "--value=20",
      "--global-default",
    ]);
    assert.match(
      second.stderr,
      /failed to create priorityclass: priorityclasses\.scheduling\.k8s\.io "second" is forbidden: PriorityClass first is already marked as default\. Only one default can exist/,
    );
    const ing = await k.fails(["apply", "-f", "-"], {
      stdin: `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  rules:
  - http:
      paths:
      - path: /
        backend: {service: {name: web, port: {number: 80}}}
`,
    });
    assert.match(
      ing.stderr,
      /The Ingress "web" is invalid: spec\.rules\[0\]\.http\.paths\[0\]\.pathType: Required value: pathType must be specified/,
    );
    const hook = await k.fails(["apply", "-f", "-"], {
      stdin: `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: hooks}
webhooks:
- name: check.kopf.dev
  clientConfig: {url: "https://hook.example.com/"}
`,
    });
    assert.match(
      hook.stderr,
      /The ValidatingWebhookConfiguration "hooks" is invalid: \n\* webhooks\[0\]\.sideEffects: Required value: must specify one of None, NoneOnDryRun\n\* webhooks\[0\]\.admissionReviewVersions: Required value: must specify one of v1, v1beta1/,
    );
  },
);
