/**
 * The embedded API server (over TLS, with its generated kubeconfig) driven by
 * the official Python client, `kubernetes` (Debian's `python3-kubernetes`,
 * v22.6 on bookworm; `.ci/run` installs it): its watch, typed CRUD, custom
 * objects, server-side apply through the dynamic client (v22 sends a str body
 * for `application/apply-patch+yaml` only, so the scripts pass JSON text), the error bodies it
 * parses into `ApiException`, and `utils.create_from_yaml`.
 *
 * Why: this client has its own opinions on the wire — it sends booleans as
 * Python prints them (`watch=True`, `force=True`), verifies the server's
 * certificate against the kubeconfig's CA, and decodes Status bodies — so it
 * is a second reader, independent of kubectl and client-node, of what our
 * server writes.
 *
 * Each test writes a small Python script to a temporary directory, runs it
 * with the kubeconfig's path as its argument, and parses the JSON it prints.
 * Where no Python with `kubernetes` importable is found, the tests are
 * registered as ignored, with a name that says so.
 *
 * @module
 */

import { startApiServer } from "../../testing.ts";

function assertEquals(actual: unknown, expected: unknown, message = ""): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${message ? `${message}: ` : ""}expected ${e}, got ${a}`);
}

/** The first Python that can import `kubernetes` (Debian's package lands in /usr/bin's). */
function findPython(): string | undefined {
  for (const candidate of ["/usr/bin/python3", "python3"]) {
    try {
      const out = new Deno.Command(candidate, {
        args: ["-c", "import kubernetes"],
        stdout: "null",
        stderr: "null",
      }).outputSync();
      if (out.success) return candidate;
    } catch {
      // not installed here
    }
  }
  return undefined;
}

const PYTHON = findPython();

/** Runs `script` with the server's kubeconfig; returns the JSON it printed on its last line. */
async function runPython(script: string, kubeconfig: string): Promise<unknown> {
  const dir = await Deno.makeTempDir({ prefix: "kopf-pyclient-" });
  try {
    const file = `${dir}/script.py`;
    await Deno.writeTextFile(file, PRELUDE + script);
    const out = await new Deno.Command(PYTHON!, {
      args: [file, kubeconfig],
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
      env: { PYTHONDONTWRITEBYTECODE: "1" },
    }).output();
    const stdout = new TextDecoder().decode(out.stdout).trim();
    const stderr = new TextDecoder().decode(out.stderr).trim();
    if (!out.success) {
      throw new Error(`python exited with ${out.code}:\n${stderr}\n${stdout}`);
    }
    const last = stdout.split("\n").at(-1) ?? "";
    try {
      return JSON.parse(last);
    } catch {
      throw new Error(`python printed no JSON:\n${stdout}\n${stderr}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const PRELUDE = `
import json, sys, threading, time
import urllib3
from kubernetes import client, config, watch, utils, dynamic
from kubernetes.client.rest import ApiException
config.load_kube_config(sys.argv[1])
api_client = client.ApiClient()
v1 = client.CoreV1Api(api_client)

def error_of(call):
    try:
        call()
    except ApiException as e:
        return {"status": e.status, "reason": e.reason, "body": json.loads(e.body)}
    return None
`;

function pyTest(name: string, fn: (kubeconfig: string) => Promise<void>): void {
  if (!PYTHON) {
    Deno.test({
      name:
        `python client: ${name} (not run: no python3 on PATH can import kubernetes; install python3-kubernetes)`,
      ignore: true,
      fn() {},
    });
    return;
  }
  Deno.test(`python client: ${name}`, async () => {
    await using api = await startApiServer({ tls: true });
    await fn(api.kubeconfig.path);
  });
}

pyTest(
  "Watch().stream() over list_namespaced_config_map gets ADDED, MODIFIED, DELETED",
  async (kc) => {
    const result = await runPython(
      `
def mutate():
    time.sleep(0.5)
    v1.create_namespaced_config_map("default", {"metadata": {"name": "w1"}, "data": {"n": "1"}})
    v1.patch_namespaced_config_map("w1", "default", {"data": {"n": "2"}})
    v1.delete_namespaced_config_map("w1", "default")

events = []
t = threading.Thread(target=mutate)
w = watch.Watch()
t.start()
for ev in w.stream(v1.list_namespaced_config_map, "default", timeout_seconds=10):
    if ev["object"].metadata.name != "w1":
        continue
    events.append([ev["type"], ev["object"].data])
    if ev["type"] == "DELETED":
        w.stop()
t.join()
print(json.dumps(events))
`,
      kc,
    );
    assertEquals(result, [
      ["ADDED", { n: "1" }],
      ["MODIFIED", { n: "2" }],
      ["DELETED", { n: "2" }],
    ]);
  },
);

pyTest("ConfigMap create/get/patch/delete; 404 and 409 parsed into ApiException", async (kc) => {
  const result = await runPython(
    `
out = {}
body = {"metadata": {"name": "cm1"}, "data": {"a": "1"}}
created = v1.create_namespaced_config_map("default", body)
out["created"] = [created.metadata.name, created.data, bool(created.metadata.resource_version)]
out["conflict"] = error_of(lambda: v1.create_namespaced_config_map("default", body))
out["got"] = v1.read_namespaced_config_map("cm1", "default").data
out["patched"] = v1.patch_namespaced_config_map("cm1", "default", {"data": {"b": "2"}}).data
status = v1.delete_namespaced_config_map("cm1", "default")
out["deleted"] = status.kind if hasattr(status, "kind") else None
out["missing"] = error_of(lambda: v1.read_namespaced_config_map("cm1", "default"))
print(json.dumps(out))
`,
    kc,
  );
  assertEquals(result, {
    created: ["cm1", { a: "1" }, true],
    conflict: {
      status: 409,
      reason: "Conflict",
      body: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: 'configmaps "cm1" already exists',
        reason: "AlreadyExists",
        details: { name: "cm1", kind: "configmaps" },
        code: 409,
      },
    },
    got: { a: "1" },
    patched: { a: "1", b: "2" },
    deleted: "ConfigMap",
    missing: {
      status: 404,
      reason: "Not Found",
      body: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: 'configmaps "cm1" not found',
        reason: "NotFound",
        details: { name: "cm1", kind: "configmaps" },
        code: 404,
      },
    },
  });
});

const CRD_SETUP = `
ext = client.ApiextensionsV1Api(api_client)
ext.create_custom_resource_definition({
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        }],
    },
})
for _ in range(100):
    crd = ext.read_custom_resource_definition("widgets.example.com")
    if any(c.type == "Established" and c.status == "True" for c in (crd.status.conditions or [])):
        break
    time.sleep(0.05)
`;

pyTest("CustomObjectsApi: create/get/patch/delete a namespaced custom object", async (kc) => {
  const result = await runPython(
    CRD_SETUP + `
co = client.CustomObjectsApi(api_client)
where = dict(group="example.com", version="v1", namespace="default", plural="widgets")
out = {}
obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 1}}
out["created"] = co.create_namespaced_custom_object(body=obj, **where)["spec"]
out["got"] = co.get_namespaced_custom_object(name="w1", **where)["metadata"]["name"]
out["patched"] = co.patch_namespaced_custom_object(name="w1", body={"spec": {"color": "red"}}, **where)["spec"]
out["listed"] = [i["metadata"]["name"] for i in co.list_namespaced_custom_object(**where)["items"]]
co.delete_namespaced_custom_object(name="w1", **where)
e = error_of(lambda: co.get_namespaced_custom_object(name="w1", **where))
out["missing"] = [e["status"], e["body"]["reason"], e["body"]["message"], e["body"]["details"]]
print(json.dumps(out))
`,
    kc,
  );
  assertEquals(result, {
    created: { size: 1 },
    got: "w1",
    patched: { size: 1, color: "red" },
    listed: ["w1"],
    missing: [404, "NotFound", 'widgets.example.com "w1" not found', {
      name: "w1",
      group: "example.com",
      kind: "widgets",
    }],
  });
});

pyTest(
  "dynamic client: server_side_apply conflicts without force_conflicts, wins with it",
  async (kc) => {
    const result = await runPython(
      `
dyn = dynamic.DynamicClient(api_client)
cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
out = {}
body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa", "namespace": "default"}, "data": {"k": "a"}}
# v22's REST layer sends only str bodies for a non-JSON content type; JSON is YAML.
first = dyn.server_side_apply(cms, body=json.dumps(body), name="ssa", namespace="default", field_manager="one")
out["first"] = first.data.k
body["data"]["k"] = "b"
try:
    dyn.server_side_apply(cms, body=json.dumps(body), name="ssa", namespace="default", field_manager="two")
    out["conflict"] = None
except ApiException as e:
    b = json.loads(e.body)
    out["conflict"] = [e.status, b["reason"], b["message"]]
forced = dyn.server_side_apply(cms, body=json.dumps(body), name="ssa", namespace="default", field_manager="two", force_conflicts=True)
out["forced"] = forced.data.k
out["managers"] = sorted(m["manager"] for m in forced.metadata.managedFields)
print(json.dumps(out))
`,
      kc,
    );
    assertEquals(result, {
      first: "a",
      conflict: [409, "Conflict", 'Apply failed with 1 conflict: conflict with "one": .data.k'],
      forced: "b",
      managers: ["two"],
    });
  },
);

pyTest("utils.create_from_yaml: a multi-document file with a ReplicationController", async (kc) => {
  const result = await runPython(
    `
import tempfile, os
docs = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: from-yaml
data:
  k: v
---
apiVersion: v1
kind: ReplicationController
metadata:
  name: rc1
spec:
  replicas: 2
  selector:
    app: rc1
  template:
    metadata:
      labels:
        app: rc1
    spec:
      containers:
      - name: c
        image: nginx
---
apiVersion: v1
kind: Service
metadata:
  name: svc1
spec:
  selector:
    app: rc1
  ports:
  - port: 80
"""
path = os.path.join(tempfile.mkdtemp(), "all.yaml")
with open(path, "w") as f:
    f.write(docs)
created = utils.create_from_yaml(api_client, path, namespace="default")
out = {}
out["kinds"] = [o.kind for group in created for o in (group if isinstance(group, list) else [group])]
rc = v1.read_namespaced_replication_controller("rc1", "default")
out["rc"] = [rc.spec.replicas, rc.spec.selector]
svc = v1.read_namespaced_service("svc1", "default")
out["svc"] = [bool(svc.spec.cluster_ip), svc.spec.type]
print(json.dumps(out))
`,
    kc,
  );
  assertEquals(result, {
    kinds: ["ConfigMap", "ReplicationController", "Service"],
    rc: [2, { app: "rc1" }],
    svc: [true, "ClusterIP"],
  });
});

pyTest("dynamic client: Accept as=PartialObjectMetadataList answers metadata only", async (kc) => {
  const result = await runPython(
    `
v1.create_namespaced_config_map("default", {"metadata": {"name": "pm1"}, "data": {"a": "1"}})
dyn = dynamic.DynamicClient(api_client)
out = {}
for header in ["Accept", "aCcePt"]:
    accept = {header: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"}
    nodes = dyn.resources.get(api_version="v1", kind="Node").get(header_params=accept)
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap").get(
        namespace="default", header_params=accept)
    out[header] = [nodes.kind, nodes.apiVersion, cms.kind,
                   [[i.kind, i.metadata.name, getattr(i, "data", None)] for i in cms.items]]
print(json.dumps(out))
`,
    kc,
  );
  const answer = [
    "PartialObjectMetadataList",
    "meta.k8s.io/v1",
    "PartialObjectMetadataList",
    [["PartialObjectMetadata", "pm1", null]],
  ];
  assertEquals(result, { Accept: answer, aCcePt: answer });
});
