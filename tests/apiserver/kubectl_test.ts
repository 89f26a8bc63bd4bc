/**
 * End-to-end tests of the embedded API server with real kubectl — the oldest
 * and the newest client on our machines (1.27 and 1.33), which differ in
 * discovery, OpenAPI and wire encoding (1.33 creates built-ins as protobuf).
 *
 * Each scenario starts its own server and gives kubectl a fresh `HOME`, so no
 * discovery cache is shared; a few scenarios run at once, as steps of one test
 * per version. Assertions look at kubectl's exact output and at the stored
 * objects through the API.
 *
 * @module
 */

import { load as parseYaml } from "js-yaml";
import { type RunningApiServer, startApiServer } from "../../testing.ts";
import { Kubectl, type KubectlBinary, testEachKubectl } from "./_kubectl.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function assert(condition: unknown, message = "assertion failed"): asserts condition {
  if (!condition) throw new Error(message);
}

/** JSON with object keys sorted, so that key order does not matter. */
function canonical(value: unknown): string {
  return JSON.stringify(
    value,
    (_k, v) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
        : v,
  );
}

function assertEquals(actual: unknown, expected: unknown, what = ""): void {
  const a = canonical(actual), e = canonical(expected);
  if (a !== e) throw new Error(`${what ? what + ": " : ""}expected ${e}\n           got ${a}`);
}

function assertMatch(text: string, pattern: RegExp): void {
  if (!pattern.test(text)) throw new Error(`expected to match ${pattern}, got: ${text}`);
}

/** Output lines without trailing blanks (kubectl pads empty last columns). */
function lines(text: string): string[] {
  return text.trimEnd().split("\n").map((l) => l.trimEnd());
}

/** The cells of a printed row (our values have no spaces). */
function cells(line: string): string[] {
  return line.trim().split(/\s+/);
}

const ROOT = new URL("../../", import.meta.url).pathname;
const CRD = `${ROOT}examples/crd.yaml`;
const OBJ = `${ROOT}examples/obj.yaml`;
const KEX = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";
const CMS = "/api/v1/namespaces/default/configmaps";

/** One request to the API server; the parsed answer. */
async function call(
  api: RunningApiServer,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${api.url}${path}`, {
    method,
    ...(body !== undefined
      ? { body: JSON.stringify(body), headers: { "content-type": contentType } }
      : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function get(api: RunningApiServer, path: string): Promise<Json> {
  const r = await call(api, "GET", path);
  assertEquals(r.status, 200, `GET ${path}`);
  return r.body;
}

async function gone(api: RunningApiServer, path: string): Promise<void> {
  const r = await call(api, "GET", path);
  assertEquals(r.status, 404, `GET ${path} (expected gone, got ${JSON.stringify(r.body)})`);
}

/** Polls until `check` passes (it throws while not yet). */
async function eventually(check: () => Promise<void> | void, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** A temporary directory for manifests. */
async function manifests(): Promise<
  AsyncDisposable & { write(name: string, text: string): Promise<string> }
> {
  const dir = await Deno.makeTempDir({ prefix: "kopf-kubectl-manifests-" });
  return {
    async write(name, text) {
      await Deno.writeTextFile(`${dir}/${name}`, text);
      return `${dir}/${name}`;
    },
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const KOPF_EXAMPLE = (name: string, extra = "", namespace = "default") => `
apiVersion: kopf.dev/v1
kind: KopfExample
metadata:
  name: ${name}
  namespace: ${namespace}
${extra}spec:
  duration: 5m
  field: x
`;

const WIDGETS_CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  scope: Namespaced
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wdg]}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: {type: integer, minimum: 1}
                color: {type: string, enum: [red, green]}
`;

type Scenario = (k: Kubectl, api: RunningApiServer, bin: KubectlBinary) => Promise<void>;

const SCENARIOS: Array<[string, Scenario]> = [];
function scenario(name: string, fn: Scenario): void {
  SCENARIOS.push([name, fn]);
}

/** Applies the examples' CRD and waits until it is served. */
async function applyCrd(k: Kubectl): Promise<void> {
  assertEquals(
    lines(await k.ok(["apply", "-f", CRD])),
    ["customresourcedefinition.apiextensions.k8s.io/kopfexamples.kopf.dev created"],
  );
}

scenario("apply the CRD and an object, get with printer columns", async (k, api) => {
  await applyCrd(k);
  assertEquals(lines(await k.ok(["apply", "-f", OBJ])), [
    "kopfexample.kopf.dev/kopf-example-1 created",
  ]);
  assertEquals(lines(await k.ok(["get", "kopfexamples"])), [
    "NAME             DURATION   CHILDREN   MESSAGE",
    "kopf-example-1   1m",
  ]);
  // The status columns, once an operator has written them.
  const status = await call(api, "PATCH", `${KEX}/kopf-example-1/status`, {
    status: { create_fn: { children: ["pod-a"], message: "hello" } },
  }, "application/merge-patch+json");
  assertEquals(status.status, 200);
  const expected = [
    ["NAME", "DURATION", "CHILDREN", "MESSAGE"],
    ["kopf-example-1", "1m", '["pod-a"]', "hello"],
  ];
  assertEquals(lines(await k.ok(["get", "kopfexamples"])).map(cells), expected);
  assertEquals(lines(await k.ok(["get", "kex"])).map(cells), expected);
  assertEquals(lines(await k.ok(["get", "kopfexes.kopf.dev", "kopf-example-1"])).map(cells), [
    ...expected,
  ]);
  assertEquals(lines(await k.ok(["get", "kex", "-o", "name"])), [
    "kopfexample.kopf.dev/kopf-example-1",
  ]);

  // -o json and -o yaml show the stored object (without managedFields, as kubectl hides them).
  const stored = await get(api, `${KEX}/kopf-example-1`);
  delete stored.metadata.managedFields;
  const asJson = JSON.parse(await k.ok(["get", "kex", "kopf-example-1", "-o", "json"]));
  const asYaml = parseYaml(await k.ok(["get", "kex", "kopf-example-1", "-o", "yaml"])) as {
    spec: Record<string, unknown>;
  };
  assertEquals(asJson, stored, "-o json");
  assertEquals(asYaml, stored, "-o yaml");
  assertEquals(asJson.spec, { duration: "1m", field: "value", items: ["item1", "item2"] });

  // Round trip: the printed YAML, edited, goes back with `replace`.
  asYaml.spec.field = "replaced";
  const replaced = await k.ok(["replace", "-f", "-"], { stdin: JSON.stringify(asYaml) });
  assertEquals(lines(replaced), ["kopfexample.kopf.dev/kopf-example-1 replaced"]);
  const after = await get(api, `${KEX}/kopf-example-1`);
  assertEquals(after.spec.field, "replaced");
  assertEquals(after.status, stored.status, "replace keeps the status (subresource)");
  assertEquals(after.metadata.generation, 2);
  // A stale resourceVersion is a conflict.
  const stale = await k.fails(["replace", "-f", "-"], { stdin: JSON.stringify(asYaml) });
  assertMatch(stale.stderr, /Operation cannot be fulfilled on kopfexamples\.kopf\.dev/);
});

scenario("label and annotate: add, overwrite, remove", async (k, api) => {
  await applyCrd(k);
  await k.ok(["apply", "-f", OBJ]);
  const labels = async () => (await get(api, `${KEX}/kopf-example-1`)).metadata.labels;
  const annotations = async () => {
    const a = { ...(await get(api, `${KEX}/kopf-example-1`)).metadata.annotations };
    delete a["kubectl.kubernetes.io/last-applied-configuration"];
    return a;
  };

  assertEquals(lines(await k.ok(["label", "kex", "kopf-example-1", "tier=web"])), [
    "kopfexample.kopf.dev/kopf-example-1 labeled",
  ]);
  assertEquals(await labels(), { somelabel: "somevalue", tier: "web" });
  const refused = await k.fails(["label", "kex", "kopf-example-1", "tier=db"]);
  assertMatch(refused.stderr, /'tier' already has a value \(web\), and --overwrite is false/);
  assertEquals(await labels(), { somelabel: "somevalue", tier: "web" });
  await k.ok(["label", "kex", "kopf-example-1", "tier=db", "--overwrite"]);
  assertEquals(await labels(), { somelabel: "somevalue", tier: "db" });
  assertEquals(lines(await k.ok(["label", "kex", "kopf-example-1", "tier-", "somelabel-"])), [
    "kopfexample.kopf.dev/kopf-example-1 unlabeled",
  ]);
  assertEquals(await labels(), undefined);
  assertEquals(
    lines(await k.ok(["get", "kex", "-l", "tier", "-o", "name"])).filter(Boolean),
    [],
  );

  // kubectl 1.27 prints "annotate", later ones "annotated".
  assertMatch(
    await k.ok(["annotate", "kex", "kopf-example-1", "note=one two"]),
    /^kopfexample\.kopf\.dev\/kopf-example-1 annotated?\n$/,
  );
  assertEquals(await annotations(), { someannotation: "somevalue", note: "one two" });
  const refusedA = await k.fails(["annotate", "kex", "kopf-example-1", "note=three"]);
  assertMatch(refusedA.stderr, /--overwrite is false/);
  assertMatch(refusedA.stderr, /'note' already has a value \(one two\)/);
  await k.ok(["annotate", "kex", "kopf-example-1", "note=three", "--overwrite"]);
  assertEquals(await annotations(), { someannotation: "somevalue", note: "three" });
  await k.ok(["annotate", "kex", "kopf-example-1", "note-"]);
  assertEquals(await annotations(), { someannotation: "somevalue" });
  // Metadata changes do not bump the generation.
  assertEquals((await get(api, `${KEX}/kopf-example-1`)).metadata.generation, 1);
});

scenario("patch: merge, json (with a failing test), strategic", async (k, api, bin) => {
  await applyCrd(k);
  await k.ok(["apply", "-f", OBJ]);
  await k.ok(["create", "configmap", "c1", "--from-literal=a=1", "--from-literal=b=2"]);
  const data = async () => (await get(api, `${CMS}/c1`)).data;
  assertEquals(await data(), { a: "1", b: "2" }, `${bin.label} create configmap`);

  // Strategic merge (the default) on a built-in.
  assertEquals(lines(await k.ok(["patch", "cm", "c1", "-p", '{"data":{"c":"3"}}'])), [
    "configmap/c1 patched",
  ]);
  assertEquals(await data(), { a: "1", b: "2", c: "3" });
  await k.ok(["patch", "cm", "c1", "--type=merge", "-p", '{"data":{"a":null}}']);
  assertEquals(await data(), { b: "2", c: "3" });
  await k.ok([
    "patch",
    "cm",
    "c1",
    "--type=json",
    "-p",
    '[{"op":"test","path":"/data/b","value":"2"},{"op":"replace","path":"/data/b","value":"22"}]',
  ]);
  assertEquals(await data(), { b: "22", c: "3" });
  const failed = await k.fails([
    "patch",
    "cm",
    "c1",
    "--type=json",
    "-p",
    '[{"op":"test","path":"/data/b","value":"2"},{"op":"remove","path":"/data/c"}]',
  ]);
  assertMatch(failed.stderr, /The request is invalid: the "test" operation at index 0 failed/);
  assertEquals(await data(), { b: "22", c: "3" }, "a failed JSON patch changes nothing");
  assertEquals(lines(await k.ok(["patch", "cm", "c1", "-p", '{"data":{"c":"3"}}'])), [
    "configmap/c1 patched (no change)",
  ]);

  // Custom resources: merge and JSON work; strategic is refused (415).
  await k.ok(["patch", "kex", "kopf-example-1", "--type=merge", "-p", '{"spec":{"field":"m"}}']);
  await k.ok([
    "patch",
    "kex",
    "kopf-example-1",
    "--type=json",
    "-p",
    '[{"op":"add","path":"/spec/items/-","value":"item3"}]',
  ]);
  const spec = async () => (await get(api, `${KEX}/kopf-example-1`)).spec;
  assertEquals(await spec(), { duration: "1m", field: "m", items: ["item1", "item2", "item3"] });
  const strategic = await k.fails(["patch", "kex", "kopf-example-1", "-p", '{"spec":{"x":1}}']);
  assertMatch(
    strategic.stderr,
    /application\/strategic-merge-patch\+json is not supported by kopf\.dev\/v1, Kind=KopfExample/,
  );
  const failedCr = await k.fails([
    "patch",
    "kex",
    "kopf-example-1",
    "--type=json",
    "-p",
    '[{"op":"test","path":"/spec/field","value":"nope"}]',
  ]);
  assertMatch(failedCr.stderr, /the "test" operation at index 0 failed: \/spec\/field is "m"/);
  assertEquals(await spec(), { duration: "1m", field: "m", items: ["item1", "item2", "item3"] });
  assertEquals(api.countRequests({ verb: "patch", code: 415 }), 1);
});

scenario("apply: client-side updates, server-side create and update", async (k, api) => {
  await applyCrd(k);
  await using files = await manifests();
  const LAST = "kubectl.kubernetes.io/last-applied-configuration";

  // Client-side apply of a custom resource: a changed and a removed field.
  const v1 = await files.write(
    "obj.yaml",
    KOPF_EXAMPLE("csa", "  annotations:\n    keep: me\n    drop: me\n"),
  );
  assertEquals(lines(await k.ok(["apply", "-f", v1])), ["kopfexample.kopf.dev/csa created"]);
  const v2 = await files.write(
    "obj.yaml",
    KOPF_EXAMPLE("csa", "  annotations:\n    keep: me\n").replace("  field: x\n", "") +
      "  extra: [1, 2]\n",
  );
  assertEquals(lines(await k.ok(["apply", "-f", v2])), ["kopfexample.kopf.dev/csa configured"]);
  const csa = await get(api, `${KEX}/csa`);
  assertEquals(csa.spec, { duration: "5m", extra: [1, 2] });
  assertEquals(Object.keys(csa.metadata.annotations).sort(), ["keep", LAST]);
  assertEquals(JSON.parse(csa.metadata.annotations[LAST]), {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { annotations: { keep: "me" }, name: "csa", namespace: "default" },
    spec: { duration: "5m", extra: [1, 2] },
  });
  assertEquals(lines(await k.ok(["apply", "-f", v2])), ["kopfexample.kopf.dev/csa unchanged"]);

  // Client-side apply of a ConfigMap (a strategic merge patch).
  const cm = (data: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa-cm\n  namespace: default\ndata:\n${data}`;
  await k.ok(["apply", "-f", await files.write("cm.yaml", cm('  a: "1"\n  b: "2"\n'))]);
  await k.ok(["apply", "-f", await files.write("cm.yaml", cm('  a: "9"\n'))]);
  assertEquals((await get(api, `${CMS}/csa-cm`)).data, { a: "9" });

  // Server-side apply: create, update, remove a field; for a built-in and a custom resource.
  const managers = (o: Json) =>
    (o.metadata.managedFields ?? []).map((m: Json) => [m.manager, m.operation]);
  const ssaCm = await files.write("ssa-cm.yaml", cm('  a: "1"\n  b: "2"\n').replace("csa", "ssa"));
  assertEquals(lines(await k.ok(["apply", "--server-side", "-f", ssaCm])), [
    "configmap/ssa-cm serverside-applied",
  ]);
  let ssa = await get(api, `${CMS}/ssa-cm`);
  assertEquals(ssa.data, { a: "1", b: "2" });
  assertEquals(managers(ssa), [["kubectl", "Apply"]]);
  assertEquals(ssa.metadata.managedFields[0].fieldsV1, { "f:data": { "f:a": {}, "f:b": {} } });
  await files.write("ssa-cm.yaml", cm('  a: "3"\n').replace("csa", "ssa"));
  await k.ok(["apply", "--server-side", "-f", ssaCm]);
  ssa = await get(api, `${CMS}/ssa-cm`);
  assertEquals(ssa.data, { a: "3" }, "a field removed from the applied manifest goes");
  assertEquals(managers(ssa), [["kubectl", "Apply"]]);

  const ssaObj = await files.write("ssa.yaml", KOPF_EXAMPLE("ssa"));
  assertEquals(lines(await k.ok(["apply", "--server-side", "-f", ssaObj])), [
    "kopfexample.kopf.dev/ssa serverside-applied",
  ]);
  let obj = await get(api, `${KEX}/ssa`);
  assertEquals(obj.spec, { duration: "5m", field: "x" });
  assertEquals(managers(obj), [["kubectl", "Apply"]]);
  assertEquals(obj.metadata.annotations?.[LAST], undefined);
  await files.write("ssa.yaml", KOPF_EXAMPLE("ssa").replace("  field: x\n", "  other: zz\n"));
  await k.ok(["apply", "--server-side", "-f", ssaObj]);
  obj = await get(api, `${KEX}/ssa`);
  assertEquals(obj.spec, { duration: "5m", other: "zz" }, "a field removed from the manifest goes");
  assertEquals(obj.metadata.generation, 2);
  assertEquals(managers(obj), [["kubectl", "Apply"]]);
  assertEquals(lines(await k.ok(["apply", "--server-side", "-f", ssaObj])), [
    "kopfexample.kopf.dev/ssa serverside-applied",
  ]);
  assertEquals(
    (await get(api, `${KEX}/ssa`)).metadata.resourceVersion,
    obj.metadata.resourceVersion,
  );
});

scenario("delete: a pending finalizer, then plain delete waits", async (k, api) => {
  await applyCrd(k);
  await using files = await manifests();
  const path = await files.write(
    "fin.yaml",
    KOPF_EXAMPLE("fin", "  finalizers: [example.com/block]\n"),
  );
  await k.ok(["create", "-f", path]);
  assertEquals(lines(await k.ok(["delete", "kex", "fin", "--wait=false"])), [
    'kopfexample.kopf.dev "fin" deleted',
  ]);
  const marked = await get(api, `${KEX}/fin`);
  assert(marked.metadata.deletionTimestamp, "deletionTimestamp is set");
  assertEquals(marked.metadata.finalizers, ["example.com/block"]);
  assertEquals(
    await k.ok(["get", "kex", "fin", "-o", "jsonpath={.metadata.deletionTimestamp}"]),
    marked.metadata.deletionTimestamp,
  );
  assertEquals(
    lines(
      await k.ok(["patch", "kex", "fin", "--type=merge", "-p", '{"metadata":{"finalizers":null}}']),
    ),
    ["kopfexample.kopf.dev/fin patched"],
  );
  await gone(api, `${KEX}/fin`);
  const notFound = await k.fails(["get", "kex", "fin"]);
  assertMatch(
    notFound.stderr,
    /Error from server \(NotFound\): kopfexamples\.kopf\.dev "fin" not found/,
  );

  // A waiting delete ends when the finalizer goes (it watches with a fieldSelector).
  await k.ok(["create", "-f", path]);
  const started = Date.now();
  const deleting = k.run(["delete", "kex", "fin", "--timeout=15s"]);
  await eventually(async () => {
    assert((await get(api, `${KEX}/fin`)).metadata.deletionTimestamp, "not yet deleting");
  });
  await new Promise((r) => setTimeout(r, 300)); // kubectl is now waiting
  const released = await call(api, "PATCH", `${KEX}/fin`, {
    metadata: { finalizers: null },
  }, "application/merge-patch+json");
  assertEquals(released.status, 200);
  const waited = await deleting;
  assertEquals(waited.code, 0, `delete: ${waited.stderr}`);
  assertEquals(lines(waited.stdout), ['kopfexample.kopf.dev "fin" deleted']);
  assert(Date.now() - started < 5_000, "delete ended promptly after the finalizer went");

  // Without finalizers, the waiting delete is prompt.
  await k.ok(["create", "-f", await files.write("plain.yaml", KOPF_EXAMPLE("plain"))]);
  const t0 = Date.now();
  assertEquals(lines(await k.ok(["delete", "kex", "plain"])), [
    'kopfexample.kopf.dev "plain" deleted',
  ]);
  assert(Date.now() - t0 < 3_000, `plain delete took ${Date.now() - t0} ms`);
  await gone(api, `${KEX}/plain`);
});

scenario(
  "get -w: rows for created, modified, deleted objects; no bookmark rows",
  async (k, api) => {
    await applyCrd(k);
    const create = async (name: string, duration: string) => {
      const r = await call(api, "POST", KEX, {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: { name },
        spec: { duration },
      });
      assertEquals(r.status, 201);
    };
    await create("first", "1m");
    {
      await using watch = k.watch(["get", "kopfexamples", "-w"]);
      const has = (n: number) => (ls: string[]) => ls.length >= n;
      await watch.until(has(2));
      await create("second", "2m");
      await watch.until(has(3));
      const patched = await call(api, "PATCH", `${KEX}/second`, {
        spec: { duration: "3m" },
      }, "application/merge-patch+json");
      assertEquals(patched.status, 200);
      await watch.until(has(4));
      assertEquals((await call(api, "DELETE", `${KEX}/second`)).status, 200);
      await watch.until(has(5));
      // Quiet for longer than the bookmark period: nothing more may appear.
      await new Promise((r) => setTimeout(r, 1_500));
      await watch.stop();
      assertEquals(watch.lines.map(cells), [
        ["NAME", "DURATION", "CHILDREN", "MESSAGE"],
        ["first", "1m"],
        ["second", "2m"],
        ["second", "3m"],
        ["second", "3m"],
      ]);
    }
    {
      await using watch = k.watch(["get", "kex", "--watch-only", "--output-watch-events"]);
      // No initial listing: wait until the watch is open before writing.
      await eventually(() => assert(api.server.watches.size > 0, "watch not open yet"));
      await create("third", "4m");
      const done = await call(api, "PATCH", `${KEX}/third/status`, {
        status: { create_fn: { message: "done" } },
      }, "application/merge-patch+json");
      assertEquals(done.status, 200);
      assertEquals((await call(api, "DELETE", `${KEX}/third`)).status, 200);
      await watch.until((ls) => ls.length >= 4);
      await new Promise((r) => setTimeout(r, 1_500));
      await watch.stop();
      assertEquals(watch.lines.map(cells), [
        ["EVENT", "NAME", "DURATION", "CHILDREN", "MESSAGE"],
        ["ADDED", "third", "4m"],
        ["MODIFIED", "third", "4m", "done"],
        ["DELETED", "third", "4m", "done"],
      ]);
    }
  },
);

scenario(
  "typed create commands store what kubectl meant (1.33 sends them as protobuf)",
  async (k, api) => {
    // Each command's object, as kubectl itself renders it with --dry-run=client -o json, must be
    // what the server stored (1.27 sends JSON; 1.33 protobuf: both must give the same objects).
    const commands: Array<[string[], string]> = [
      [["create", "serviceaccount", "sa1"], "/api/v1/namespaces/default/serviceaccounts/sa1"],
      [
        ["create", "deployment", "web", "--image=nginx", "--replicas=0", "--port=80"],
        "/apis/apps/v1/namespaces/default/deployments/web",
      ],
      [
        ["create", "service", "nodeport", "svc1", "--tcp=80:http", "--node-port=30080"],
        "/api/v1/namespaces/default/services/svc1",
      ],
      [
        ["create", "job", "j1", "--image=busybox", "--", "echo", "hi"],
        "/apis/batch/v1/namespaces/default/jobs/j1",
      ],
      [
        ["create", "cronjob", "cj1", "--image=busybox", "--schedule=*/5 * * * *", "--", "date"],
        "/apis/batch/v1/namespaces/default/cronjobs/cj1",
      ],
      [
        ["create", "role", "r1", "--verb=get,list", "--resource=pods,deployments.apps"],
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/r1",
      ],
      [
        ["create", "rolebinding", "rb1", "--role=r1", "--serviceaccount=default:sa1", "--user=bob"],
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/rb1",
      ],
      [
        ["create", "clusterrole", "cr1", "--verb=get", "--non-resource-url=/healthz"],
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/cr1",
      ],
      [
        ["create", "clusterrolebinding", "crb1", "--clusterrole=cr1", "--group=devs"],
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/crb1",
      ],
      [
        ["create", "quota", "q1", "--hard=pods=10,requests.memory=1Gi", "--scopes=NotTerminating"],
        "/api/v1/namespaces/default/resourcequotas/q1",
      ],
      [
        ["create", "priorityclass", "pc1", "--value=0", "--preemption-policy=Never"],
        "/apis/scheduling.k8s.io/v1/priorityclasses/pc1",
      ],
      [
        ["create", "poddisruptionbudget", "pdb1", "--selector=app=web", "--max-unavailable=50%"],
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets/pdb1",
      ],
      [
        [
          "create",
          "ingress",
          "ing1",
          "--class=nginx",
          "--rule=foo.com/bar*=svc1:80,tls=my-cert",
          "--default-backend=defsvc:http",
        ],
        "/apis/networking.k8s.io/v1/namespaces/default/ingresses/ing1",
      ],
    ];
    // What kubectl meant is in what was stored (the server adds defaults, as a real one does).
    const within = (meant: unknown, stored: unknown, where: string): void => {
      if (meant === null) return; // e.g. creationTimestamp: null
      if (typeof meant !== "object") return assertEquals(stored, meant, where);
      if (Array.isArray(meant)) {
        assert(Array.isArray(stored) && stored.length === meant.length, `${where}: ${stored}`);
        return meant.forEach((m, i) => within(m, (stored as unknown[])[i], `${where}[${i}]`));
      }
      assert(stored && typeof stored === "object", `${where} is missing`);
      for (const [key, m] of Object.entries(meant)) {
        within(m, (stored as Record<string, unknown>)[key], `${where}.${key}`);
      }
    };
    for (const [args, path] of commands) {
      const dash = args.indexOf("--");
      const dry = ["--dry-run=client", "-o", "json"];
      const meant = JSON.parse(
        await k.ok(
          dash < 0 ? [...args, ...dry] : [...args.slice(0, dash), ...dry, ...args.slice(dash)],
        ),
      );
      await k.ok(args);
      const stored = await get(api, path);
      delete meant.status;
      within(meant, stored, args.slice(0, 3).join(" "));
    }
    assertEquals(
      (await get(api, "/apis/apps/v1/namespaces/default/deployments/web")).spec.replicas,
      0,
    );
  },
);

scenario("namespaces: create, fill, delete with contents; terminating refuses", async (k, api) => {
  await applyCrd(k);
  await using files = await manifests();
  // `create namespace` and `create configmap` go through typed clients: 1.33 sends protobuf.
  assertEquals(lines(await k.ok(["create", "namespace", "kx"])), ["namespace/kx created"]);
  assertEquals(lines(await k.ok(["-n", "kx", "create", "configmap", "c1", "--from-literal=a=b"])), [
    "configmap/c1 created",
  ]);
  assertEquals(
    lines(await k.ok(["-n", "kx", "create", "secret", "generic", "s1", "--from-literal=p=q"])),
    ["secret/s1 created"],
  );
  await k.ok(["create", "-f", await files.write("o.yaml", KOPF_EXAMPLE("o1", "", "kx"))]);
  const ns = await get(api, "/api/v1/namespaces/kx");
  assertEquals(ns.metadata.labels, { "kubernetes.io/metadata.name": "kx" });
  assertEquals(ns.status.phase, "Active");
  assertEquals((await get(api, "/api/v1/namespaces/kx/configmaps/c1")).data, { a: "b" });
  const secret = await get(api, "/api/v1/namespaces/kx/secrets/s1");
  assertEquals([secret.type, secret.data], ["Opaque", { p: btoa("q") }]);
  assertEquals(lines(await k.ok(["-n", "kx", "get", "kex", "-o", "name"])), [
    "kopfexample.kopf.dev/o1",
  ]);

  const t0 = Date.now();
  assertEquals(lines(await k.ok(["delete", "namespace", "kx"])), ['namespace "kx" deleted']);
  assert(Date.now() - t0 < 5_000, "namespace deletion is prompt");
  await gone(api, "/api/v1/namespaces/kx");
  await gone(api, "/api/v1/namespaces/kx/configmaps/c1");
  await gone(api, "/api/v1/namespaces/kx/secrets/s1");
  await gone(api, "/apis/kopf.dev/v1/namespaces/kx/kopfexamples/o1");
  assertMatch((await k.fails(["get", "ns", "kx"])).stderr, /namespaces "kx" not found/);

  // A namespace held by an object's finalizer stays Terminating and refuses new content.
  await k.ok(["create", "namespace", "kt"]);
  await k.ok([
    "create",
    "-f",
    await files.write(
      "held.yaml",
      KOPF_EXAMPLE("held", "  finalizers: [example.com/block]\n", "kt"),
    ),
  ]);
  await k.ok(["delete", "namespace", "kt", "--wait=false"]);
  await api.settled();
  const terminating = await get(api, "/api/v1/namespaces/kt");
  assertEquals(terminating.status.phase, "Terminating");
  assert(terminating.metadata.deletionTimestamp, "the namespace is deleting");
  assert(
    (await get(api, "/apis/kopf.dev/v1/namespaces/kt/kopfexamples/held")).metadata
      .deletionTimestamp,
    "its content is deleting",
  );
  const refused = await call(api, "POST", "/api/v1/namespaces/kt/configmaps", {
    metadata: { name: "late" },
  });
  assertEquals(refused.status, 403);
  assertEquals(
    refused.body.message,
    "unable to create new content in namespace kt because it is being terminated",
  );
  const refusedK = await k.fails(["-n", "kt", "create", "configmap", "late"]);
  assertMatch(refusedK.stderr, /because it is being terminated/);
  const released = await call(api, "PATCH", "/apis/kopf.dev/v1/namespaces/kt/kopfexamples/held", {
    metadata: { finalizers: null },
  }, "application/merge-patch+json");
  assertEquals(released.status, 200);
  await eventually(() => gone(api, "/api/v1/namespaces/kt"));
});

scenario("wait for Established; api-resources lists short names", async (k, api) => {
  await applyCrd(k);
  assertEquals(
    lines(
      await k.ok([
        "wait",
        "--for=condition=Established",
        "crd/kopfexamples.kopf.dev",
        "--timeout=10s",
      ]),
    ),
    ["customresourcedefinition.apiextensions.k8s.io/kopfexamples.kopf.dev condition met"],
  );
  const resources = lines(await k.ok(["api-resources", "--api-group=kopf.dev"]));
  assertEquals(resources.map(cells), [
    ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"],
    ["kopfexamples", "kopfexes,kopfex,kexes,kex", "kopf.dev/v1", "true", "KopfExample"],
  ]);
  const all = lines(await k.ok(["api-resources", "-o", "name"]));
  for (const name of ["kopfexamples.kopf.dev", "namespaces", "configmaps"]) {
    assert(all.includes(name), `api-resources lists ${name}: ${all.join(" ")}`);
  }

  // A condition that becomes true later ends a waiting `kubectl wait` (list+watch by name).
  await k.ok(["apply", "-f", OBJ]);
  const waiting = k.run(["wait", "--for=condition=Ready", "kex/kopf-example-1", "--timeout=15s"]);
  await new Promise((r) => setTimeout(r, 500));
  const st = await call(api, "PATCH", `${KEX}/kopf-example-1/status`, {
    status: { conditions: [{ type: "Ready", status: "True" }] },
  }, "application/merge-patch+json");
  assertEquals(st.status, 200);
  const waited = await waiting;
  assertEquals(waited.code, 0, `wait: ${waited.stderr}`);
  assertEquals(lines(waited.stdout), ["kopfexample.kopf.dev/kopf-example-1 condition met"]);
});

scenario("strict schema: unknown fields and invalid values are refused", async (k, api) => {
  await using files = await manifests();
  await k.ok(["apply", "-f", await files.write("crd.yaml", WIDGETS_CRD)]);
  await k.ok(["wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=10s"]);
  const widget = (name: string, spec: string) =>
    `apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: ${name}, namespace: default}\nspec: ${spec}\n`;
  const unknown = await files.write("unknown.yaml", widget("w1", "{size: 3, shape: round}"));
  for (const verb of ["create", "apply"]) {
    const r = await k.fails([verb, "-f", unknown]);
    assertMatch(
      r.stderr,
      /Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec\.shape"/,
    );
  }
  await gone(api, "/apis/example.com/v1/namespaces/default/widgets/w1");
  // --validate=warn stores it without the field and warns; --validate=false silently prunes.
  const warned = await k.run(["create", "--validate=warn", "-f", unknown]);
  assertEquals(warned.code, 0, warned.stderr);
  assertMatch(warned.stderr, /Warning: unknown field "spec\.shape"/);
  assertEquals((await get(api, "/apis/example.com/v1/namespaces/default/widgets/w1")).spec, {
    size: 3,
  });
  const w2 = await files.write("w2.yaml", widget("w2", "{size: 3, shape: round}"));
  const quiet = await k.run(["create", "--validate=false", "-f", w2]);
  assertEquals([quiet.code, quiet.stderr], [0, ""]);
  assertEquals((await get(api, "/apis/example.com/v1/namespaces/default/widgets/w2")).spec, {
    size: 3,
  });

  const bad = await files.write("bad.yaml", widget("w3", '{size: "big", color: blue}'));
  const invalid = await k.fails(["create", "-f", bad]);
  assertEquals(
    lines(invalid.stderr),
    [
      'The Widget "w3" is invalid: ',
      '* spec.color: Unsupported value: "blue": supported values: "red", "green"',
      '* spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
    ].map((l) => l.trimEnd()),
  );
  const small = await files.write("small.yaml", widget("w4", "{size: 0}"));
  assertMatch(
    (await k.fails(["apply", "-f", small])).stderr,
    /spec\.size: Invalid value: 0: spec\.size in body should be greater than or equal to 1/,
  );
  const missing = await files.write("missing.yaml", widget("w5", "{color: red}"));
  assertMatch((await k.fails(["create", "-f", missing])).stderr, /spec\.size: Required value/);
  assertEquals(lines(await k.ok(["get", "wdg", "-o", "name"])), [
    "widget.example.com/w1",
    "widget.example.com/w2",
  ]);
});

const WANTED = ["1.27", "1.33"];

/**
 * How many scenarios run at once, each with its own server and kubectl `HOME`: they mostly wait
 * on kubectl's processes and on watches, so a few at a time leave the machine less idle.
 */
const AT_ONCE = 3;

// Per version, one test whose steps are the scenarios, named as they are (steps that overlap
// cannot have the sanitizers, which watch the whole test). A longer limit than the default: it
// is the sum of ten scenarios on a machine the suite loads.
testEachKubectl(WANTED, `the scenarios (${AT_ONCE} at a time)`, async (bin, t) => {
  const queue = [...SCENARIOS];
  const passed = await Promise.all(Array.from({ length: AT_ONCE }, async () => {
    let all = true;
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [name, fn] = next;
      all = await t.step({
        name,
        fn: async () => {
          await using api = await startApiServer({ bookmarkSeconds: 1 });
          await using k = await Kubectl.create(bin, api.kubeconfig.path);
          await fn(k, api, bin);
        },
        sanitizeOps: false,
        sanitizeResources: false,
        sanitizeExit: false,
      }) && all;
    }
    return all;
  }));
  assert(passed.every(Boolean), "a scenario failed: see its step");
}, { timeout: 300_000 });
