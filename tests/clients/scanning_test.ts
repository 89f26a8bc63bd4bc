import assert from "node:assert/strict";
import { readVersion, scanResources } from "../../src/cogs/clients/scanning.ts";
import { deleteObject } from "../../src/cogs/clients/deleting.ts";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { Selector } from "../../src/cogs/structs/references.ts";
import { ConnectionInfo, Vault } from "../../src/cogs/structs/credentials.ts";
import { CRDS, createKopfExampleCrd, eventually, setup } from "./_setup.ts";

Deno.test("scanResources() finds the built-ins with their names, scope, verbs, subresources", async () => {
  await using env = await setup();
  const resources = await scanResources(env.api);
  const pods = new Selector("pods").selectOne(resources);
  assert.equal(String(pods), "pods.v1");
  assert.equal(pods.kind, "Pod");
  assert.equal(pods.singular, "pod");
  assert.ok(pods.shortcuts.has("po"));
  assert.equal(pods.namespaced, true);
  assert.ok(pods.verbs.has("watch"));
  assert.ok(pods.subresources.has("status"));
  assert.ok(!resources.some((r) => r.plural.includes("/")), "subresources are folded");
  const namespaces = new Selector("v1", "namespaces").selectOne(resources);
  assert.equal(namespaces.namespaced, false);
  assert.equal(new Selector("deployments.apps").selectOne(resources).apiVersion, "apps/v1");
  assert.equal(
    new Selector("apiextensions.k8s.io", "customresourcedefinitions").selectOne(resources).kind,
    "CustomResourceDefinition",
  );
  assert.ok(new Selector("events").select(resources).length >= 1);
  assert.equal((await readVersion(env.api)).major, "1");
});

Deno.test("a CRD created at run time appears in the next scan, with preferred versions", async () => {
  await using env = await setup();
  const before = await scanResources(env.api);
  assert.deepEqual(new Selector("kopfexamples").select(before), []);
  await createKopfExampleCrd(env.api);
  let after = await scanResources(env.api, { groups: ["kopf.dev"] });
  await eventually(
    async () => {
      after = await scanResources(env.api, { groups: ["kopf.dev"] });
      return after.length === 2;
    },
    5,
    "the CRD to be served",
  );
  const versions = after.map((r) => `${r}:${r.preferred}`).sort();
  assert.deepEqual(versions, [
    "kopfexamples.v1.kopf.dev:true",
    "kopfexamples.v1beta1.kopf.dev:false",
  ]);
  const kex = new Selector("kex").selectOne(after);
  assert.equal(kex.version, "v1", "a versionless selector takes the preferred version");
  assert.ok(kex.subresources.has("status"));
  assert.ok(kex.categories.has("all"));
  assert.equal(
    new Selector("kopf.dev", "v1beta1", "KopfExample").selectOne(after).version,
    "v1beta1",
  );
  assert.ok(after.every((r) => r.group === "kopf.dev"), "groups limit the scan");

  await deleteObject(env.api, CRDS, null, "kopfexamples.kopf.dev");
  await eventually(async () =>
    (await scanResources(env.api, { groups: ["kopf.dev"] })).length === 0
  );
});

Deno.test("a group-version that 404s between /apis and its own request has no resources", async () => {
  await using env = await setup();
  // Let /apis announce a group that the server does not serve (as happens
  // when the last CRD of a group is deleted between the two requests).
  const api = new ApiClient({
    vault: env.vault,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      if (!url.endsWith("/apis")) return response;
      const body = await response.json();
      body.groups.push({
        name: "gone.example.com",
        versions: [{ groupVersion: "gone.example.com/v1", version: "v1" }],
        preferredVersion: { groupVersion: "gone.example.com/v1", version: "v1" },
      });
      return Response.json(body);
    },
  });
  const resources = await scanResources(api);
  assert.ok(resources.length > 10);
  assert.ok(!resources.some((r) => r.group === "gone.example.com"));
  assert.equal(env.server.countRequests({ code: 404 }), 1);
});

Deno.test("scanResources(): a name resolves at its group's preferred version, else at the group's first version that serves it (as kubectl)", async () => {
  await using env = await setup();
  // Discovery as a cluster answers it when two CRDs share a group: one serves v2 (preferred, as
  // the highest version), the other v1 only; a third serves both.
  const lists: Record<string, unknown> = {
    "/api": { versions: ["v1"] },
    "/api/v1": { resources: [{ name: "pods", kind: "Pod", namespaced: true }] },
    "/apis": {
      groups: [{
        name: "kopf.dev",
        versions: [{ version: "v1" }, { version: "v2" }, { version: "v1beta1" }],
        preferredVersion: { version: "v2" },
      }],
    },
    "/apis/kopf.dev/v2": {
      resources: [
        { name: "newcomers", kind: "Newcomer", namespaced: true },
        { name: "both", kind: "Both", namespaced: true },
      ],
    },
    "/apis/kopf.dev/v1": {
      resources: [
        { name: "kopfexamples", kind: "KopfExample", shortNames: ["kex"], namespaced: true },
        { name: "kopfexamples/status", kind: "KopfExample", namespaced: true },
        { name: "both", kind: "Both", namespaced: true },
      ],
    },
    "/apis/kopf.dev/v1beta1": {
      resources: [{ name: "kopfexamples", kind: "KopfExample", namespaced: true }],
    },
  };
  const api = new ApiClient({
    vault: env.vault,
    fetch: (url) => {
      const path = new URL(url).pathname;
      return Promise.resolve(
        path in lists ? Response.json(lists[path]) : new Response("{}", { status: 404 }),
      );
    },
  });
  const resources = await scanResources(api);
  const preferred = resources.filter((r) => r.preferred).map(String).sort();
  assert.deepEqual(preferred, [
    "both.v2.kopf.dev",
    "kopfexamples.v1.kopf.dev", // v1 is listed before v1beta1: the server's priority order
    "newcomers.v2.kopf.dev",
    "pods.v1",
  ]);
  const kex = new Selector("kex").selectOne(resources);
  assert.equal(String(kex), "kopfexamples.v1.kopf.dev");
  assert.ok(kex.subresources.has("status"));
  assert.equal(String(new Selector("kopfexamples.kopf.dev").selectOne(resources)), String(kex));
  assert.equal(String(new Selector("kopf.dev", "kopfexamples").selectOne(resources)), String(kex));
  assert.equal(String(new Selector("both").selectOne(resources)), "both.v2.kopf.dev");
  assert.equal(
    String(new Selector("kopf.dev", "v1beta1", "kopfexamples").selectOne(resources)),
    "kopfexamples.v1beta1.kopf.dev",
  );
  // A name that no version serves: the message is the one it always was.
  assert.throws(
    () => new Selector("kopf.dev", "absentees").selectOne(resources),
    new RegExp(
      'Resource "absentees.kopf.dev" is not served by the cluster: create its CRD first, ' +
        'or check the name with "kubectl api-resources"',
    ),
  );
});

Deno.test("scanResources() reads at most 4 group-versions at once, over as many connections (HTTP/1.1: each is kept idle after)", async () => {
  await using env = await setup();
  let inFlight = 0;
  let most = 0;
  let groupVersions = 0;
  const connections = new Set<number>();
  // A proxy in front of the server: it holds every group-version's answer for 20 ms, so that
  // what the client sends at once is in flight at once; it sees the client's connections.
  await using proxy = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    async (req, info) => {
      connections.add(info.remoteAddr.port);
      const { pathname, search } = new URL(req.url);
      const groupVersion = /^\/api\/[^/]+$|^\/apis\/[^/]+\/[^/]+$/.test(pathname);
      if (groupVersion) {
        groupVersions++;
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 20));
      }
      try {
        const answer = await fetch(env.server.url + pathname + search);
        return new Response(await answer.arrayBuffer(), {
          status: answer.status,
          headers: { "content-type": answer.headers.get("content-type") ?? "application/json" },
        });
      } finally {
        if (groupVersion) inFlight--;
      }
    },
  );
  using vault = new Vault({
    test: new ConnectionInfo({ server: `http://127.0.0.1:${proxy.addr.port}` }),
  });
  const resources = await scanResources(new ApiClient({ vault }));
  const direct = await scanResources(env.api);
  assert.ok(direct.length > 10);
  assert.deepEqual(resources.map(String).sort(), direct.map(String).sort());
  assert.ok(groupVersions > 2 * 4, `the scan is wider than its limit: ${groupVersions}`);
  assert.equal(most, 4, "at most 4 group-versions in flight, and the 4 used");
  assert.ok(connections.size <= 4, `connections: ${connections.size}`);
});

Deno.test("scanResources() under 429s and 503s finds what it finds without them; a cut answer fails the scan, not hangs it", async () => {
  await using env = await setup();
  const direct = await scanResources(env.api);
  // The first try of every group-version answered 429 or 503 in turn (the embedded server's
  // fault switches spare discovery): each is retried in its slot, which it keeps meanwhile.
  const tried = new Set<string>();
  let refused = 0;
  const refusing = new ApiClient({
    vault: env.vault,
    settings: { networking: { errorBackoffs: [0.01, 0.01, 0.01] } },
    fetch: (url, init) => {
      const path = new URL(url).pathname;
      if (!/^\/apis?\/[^/]+(\/[^/]+)?$/.test(path) || tried.has(path)) return fetch(url, init);
      tried.add(path);
      const code = refused++ % 2 ? 503 : 429;
      return Promise.resolve(Response.json(
        {
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          code,
          details: { retryAfterSeconds: 0 },
        },
        { status: code, headers: { "retry-after": "0" } },
      ));
    },
  });
  const faulted = await scanResources(refusing);
  assert.deepEqual(faulted.map(String).sort(), direct.map(String).sort());
  assert.ok(refused > 8, `refused: ${refused}`);
  // Every group-version's answer cut in the middle of its JSON: the scan rejects with the
  // client's error, while more group-versions than its slots wait.
  const api = new ApiClient({
    vault: env.vault,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      if (!/\/apis\/[^/]+\/[^/]+$/.test(new URL(url).pathname)) return response;
      const text = await response.text();
      return new Response(text.slice(0, text.length >> 1), {
        headers: { "content-type": "application/json" },
      });
    },
  });
  await assert.rejects(scanResources(api), /not JSON/);
});
