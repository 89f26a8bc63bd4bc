/**
 * Objects nested too deeply are refused before they are decoded or stored: one
 * request must not break the reads and watches of a resource for everyone.
 */
import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { call, readEvents } from "./_http.ts";

/** Reads a watch stream's events one at a time, across calls (unlike `readEvents`). */
class Events {
  #reader: ReadableStreamDefaultReader<string>;
  #buffer = "";
  constructor(res: Response) {
    this.#reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  }
  // deno-lint-ignore no-explicit-any
  async next(label: string, timeoutMs = 5000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const nl = this.#buffer.indexOf("\n");
      if (nl >= 0) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        if (line.trim()) return JSON.parse(line);
        continue;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${label}: no watch event within ${timeoutMs} ms`)),
          Math.max(0, deadline - Date.now()),
        );
      });
      try {
        const chunk = await Promise.race([this.#reader.read(), timeout]);
        if (chunk.done) throw new Error(`${label}: the watch ended`);
        this.#buffer += chunk.value;
      } finally {
        clearTimeout(timer);
      }
    }
  }
  async close(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}

const CM = "/api/v1/namespaces/default/configmaps";
const ALL_CM = "/api/v1/configmaps";
const EP = "/api/v1/namespaces/default/endpoints";
const KEX = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";

/** JSON text of `{"a":{"a":…{}…}}`, `depth` objects deep. */
function nested(depth: number): string {
  return '{"a":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
}

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "kopfexamples.kopf.dev" },
  spec: {
    group: "kopf.dev",
    scope: "Namespaced",
    names: { plural: "kopfexamples", singular: "kopfexample", kind: "KopfExample" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      },
    }],
  },
};

/** Every way of reading configmaps still works, and `watcher` sees the next write. */
async function assertConfigMapsServe(base: string, watcher: Events, label: string) {
  const after = await call(base, "POST", CM, { metadata: { name: `after-${label}` } });
  assert.equal(
    after.status,
    201,
    `${label}: a plain create afterwards: ${JSON.stringify(after.body)}`,
  );
  assert.equal((await call(base, "GET", `${CM}/after-${label}`)).status, 200, `${label}: GET`);
  const list = await call(base, "GET", CM);
  assert.equal(list.status, 200, `${label}: namespaced LIST`);
  const all = await call(base, "GET", ALL_CM);
  assert.equal(all.status, 200, `${label}: cluster-wide LIST`);
  const watch = await fetch(`${base}${ALL_CM}?watch=true&resourceVersion=0`);
  assert.equal(watch.status, 200, `${label}: a new WATCH`);
  const initial = await readEvents(watch, list.body.items.length, 5000);
  assert.equal(initial.length, list.body.items.length, `${label}: a new WATCH lists them all`);
  const seen = await watcher.next(label);
  assert.equal(seen.object?.metadata?.name, `after-${label}`, `${label}: the open watcher`);
}

Deno.test("a ConfigMap nested 100,000 deep is refused (400) and configmaps still serve", async () => {
  await using api = await startApiServer();
  const watcher = new Events(await fetch(`${api.url}${ALL_CM}?watch=true`));
  const bodies: [string, string][] = [
    ["top-level field", `{"metadata":{"name":"deep"},"x":${nested(100_000)}}`],
    ["data", `{"metadata":{"name":"deep"},"data":${nested(100_000)}}`],
    ["metadata", `{"metadata":{"name":"deep","labels":${nested(100_000)}}}`],
    ["arrays", `{"metadata":{"name":"deep"},"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}`],
    ["just over", `{"metadata":{"name":"deep"},"x":${nested(1_000)}}`],
  ];
  for (const [label, body] of bodies) {
    const r = await call(api.url, "POST", CM, body);
    assert.equal(r.status, 400, `${label}: ${JSON.stringify(r.body).slice(0, 300)}`);
    assert.equal(r.body.kind, "Status");
    assert.match(r.body.message, /exceeded max depth.*1000 levels/);
    assert.equal((await call(api.url, "GET", `${CM}/deep`)).status, 404, `${label}: not stored`);
    await assertConfigMapsServe(api.url, watcher, label.replace(/\W/g, ""));
  }
  // Within the limit is fine.
  const ok = await call(api.url, "POST", CM, `{"metadata":{"name":"ok"},"x":${nested(990)}}`);
  assert.equal(ok.status, 201, JSON.stringify(ok.body).slice(0, 300));
  await watcher.close();
});

Deno.test("patches, apply (JSON and YAML) and PUT cannot nest an object too deeply", async () => {
  await using api = await startApiServer();
  const watcher = new Events(await fetch(`${api.url}${ALL_CM}?watch=true`));
  assert.equal((await call(api.url, "POST", CM, { metadata: { name: "p" } })).status, 201);
  await watcher.next("before");
  const cases: [string, string, string, string][] = [
    ["merge", "PATCH", `{"x":${nested(100_000)}}`, "application/merge-patch+json"],
    ["strategic", "PATCH", `{"x":${nested(100_000)}}`, "application/strategic-merge-patch+json"],
    [
      "json",
      "PATCH",
      `[{"op":"add","path":"/x","value":${nested(100_000)}}]`,
      "application/json-patch+json",
    ],
    [
      "apply json",
      "PATCH",
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p"},"x":${nested(100_000)}}`,
      "application/apply-patch+yaml",
    ],
    [
      "apply yaml flow",
      "PATCH",
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\nx: ${"[".repeat(100_000)}${
        "]".repeat(100_000)
      }\n`,
      "application/apply-patch+yaml",
    ],
    [
      "apply yaml block",
      "PATCH",
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\nx:\n` +
      Array.from({ length: 1_100 }, (_, i) => `${" ".repeat(i + 1)}a:\n`).join(""),
      "application/apply-patch+yaml",
    ],
    ["put", "PUT", `{"metadata":{"name":"p"},"x":${nested(100_000)}}`, "application/json"],
  ];
  for (const [label, method, body, type] of cases) {
    const path = `${CM}/p${type.includes("apply") ? "?fieldManager=t" : ""}`;
    const r = await call(api.url, method, path, body, type);
    assert.equal(r.status, 400, `${label}: ${JSON.stringify(r.body).slice(0, 300)}`);
    assert.equal(r.body.kind, "Status", label);
    await assertConfigMapsServe(api.url, watcher, label.replace(/\W/g, ""));
  }
  // Two JSON patches, each within the limit, would make an object twice as deep as allowed.
  // (On Endpoints, which keep any field: a ConfigMap drops unknown fields, as kube's does.)
  assert.equal((await call(api.url, "POST", EP, { metadata: { name: "p" } })).status, 201);
  const half = nested(600);
  const first = await call(
    api.url,
    "PATCH",
    `${EP}/p`,
    `[{"op":"add","path":"/x","value":${half}}]`,
    "application/json-patch+json",
  );
  assert.equal(first.status, 200, JSON.stringify(first.body).slice(0, 300));
  const deepPath = "/x" + "/a".repeat(598);
  const second = await call(
    api.url,
    "PATCH",
    `${EP}/p`,
    `[{"op":"add","path":"${deepPath}/b","value":${half}}]`,
    "application/json-patch+json",
  );
  assert.equal(second.status, 400, JSON.stringify(second.body).slice(0, 300));
  assert.match(second.body.message, /the object nests .* deeper than 1000 levels/);
  await assertConfigMapsServe(api.url, watcher, "twopatches");
  await watcher.close();
});

Deno.test("a custom resource nested 100,000 deep in its spec is refused; the resource still serves", async () => {
  await using api = await startApiServer();
  const made = await call(
    api.url,
    "POST",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    crd,
  );
  assert.equal(made.status, 201, JSON.stringify(made.body));
  await api.settled();
  const r = await call(
    api.url,
    "POST",
    KEX,
    `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"deep"},"spec":${
      nested(100_000)
    }}`,
  );
  assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 300));
  assert.equal((await call(api.url, "GET", KEX)).status, 200);
  assert.equal((await call(api.url, "GET", "/apis/kopf.dev/v1/kopfexamples")).status, 200);
  const ok = await call(api.url, "POST", KEX, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "ok" },
    spec: {},
  });
  assert.equal(ok.status, 201);
});
