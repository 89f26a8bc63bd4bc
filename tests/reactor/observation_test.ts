/**
 * What the operator observes of the cluster, and what it does without it:
 * `-n` when the operator may not list namespaces (403) serves the literal
 * names as they are (the docs' fallback) and says in one line that patterns
 * need the list; `settings.scanning.disabled` follows neither namespaces nor
 * CRDs (the literal `-n` names only, the resources found at start only).
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { type Cluster, cluster, crd, delay, until } from "./_setup.ts";

/**
 * A proxy in front of the embedded API server that answers 403 to listing and watching
 * namespaces (as RBAC without that permission does), and passes everything else through.
 */
async function forbiddingNamespaces(c: Cluster): Promise<AsyncDisposable & { kubeconfig: string }> {
  const upstream = c.api.url.replace(/\/+$/, "");
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    if (req.method === "GET" && url.pathname === "/api/v1/namespaces") {
      return Response.json({
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message:
          'namespaces is forbidden: User "system:serviceaccount:default:op" cannot list resource "namespaces" in API group "" at the cluster scope',
        reason: "Forbidden",
        code: 403,
      }, { status: 403 });
    }
    const body = req.body ? await req.arrayBuffer() : undefined;
    const res = await fetch(`${upstream}${url.pathname}${url.search}`, {
      method: req.method,
      headers: req.headers,
      ...(body ? { body } : {}),
    });
    return new Response(res.body, { status: res.status, headers: res.headers });
  });
  const dir = await Deno.makeTempDir({ prefix: "kopf-forbidding-" });
  const kubeconfig = `${dir}/kubeconfig`;
  const proxyUrl = `http://127.0.0.1:${server.addr.port}`;
  await Deno.writeTextFile(kubeconfig, c.api.kubeconfig.yaml.replaceAll(upstream, proxyUrl));
  return {
    kubeconfig,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function kexHandlers(): { registry: kopf.OperatorRegistry; seen: string[] } {
  const registry = new kopf.OperatorRegistry();
  const seen: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn({ namespace, name }) {
    seen.push(`${namespace}/${name}`);
  });
  return { registry, seen };
}

Deno.test("observation: -n without the permission to list namespaces serves the literal names as they are", async () => {
  await using c = await cluster();
  for (const ns of ["ns1", "team-a", "other"]) await c.createNamespace(ns);
  await using proxy = await forbiddingNamespaces(c);
  const { registry, seen } = kexHandlers();
  const runner = await KopfRunner.start(
    ["run", "--standalone", "-n", "ns1", "-n", "team-*", "-n", "ns-later"],
    { registry, kubeconfig: proxy.kubeconfig },
  );
  try {
    await c.createKex("ns1", "kex1");
    await c.createKex("team-a", "kex2");
    await c.createKex("other", "kex3");
    // A namespace created after the start: watched from the start "as is", served once it exists.
    await c.createNamespace("ns-later");
    await c.createKex("ns-later", "kex4");
    await until(() => seen.includes("ns1/kex1") && seen.includes("ns-later/kex4"), "literal ns");
    await delay(100);
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0, runner.output);
  assert.deepEqual(seen.sort(), ["ns-later/kex4", "ns1/kex1"]);
  const warnings = runner.output.split("\n").filter((l) => l.includes("WARNING"));
  assert.equal(warnings.length, 1, runner.output);
  assert.match(
    warnings[0]!,
    /Not enough permissions to list namespaces: serving the namespaces ns1, ns-later as they are; the patterns team-\* need the list of namespaces and are ignored\.$/,
  );
  assert.doesNotMatch(runner.output, /^\s+at /m, "no stack traces");
});

Deno.test("observation: scanning.disabled follows neither namespaces nor CRDs", async () => {
  await using c = await cluster({ requestLog: true });
  for (const ns of ["ns1", "team-a"]) await c.createNamespace(ns);
  const { registry, seen } = kexHandlers();
  kopf.on.event({ category: "kopf-tests" }, { registry, id: "byCategory" }, ({ body }) => {
    seen.push(`category:${body.kind}/${body.metadata.name}`);
  });
  kopf.on.create("latewidgets", { registry }, function late({ name }) {
    seen.push(`late:${name}`);
  });
  const settings = new kopf.OperatorSettings();
  settings.scanning.disabled = true;
  const runner = await KopfRunner.start(["run", "--standalone", "-n", "ns1", "-n", "team-*"], {
    registry,
    settings,
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await c.createKex("ns1", "kex1");
    await c.createKex("team-a", "kex2");
    await until(() => seen.includes("ns1/kex1"), "the literal namespace");
    await c.createCrd(crd({
      group: "late.example.com",
      plural: "latewidgets",
      kind: "LateWidget",
      scope: "Namespaced",
      categories: ["kopf-tests"],
    }));
    await c.call("POST", "/apis/late.example.com/v1/namespaces/ns1/latewidgets", {
      apiVersion: "late.example.com/v1",
      kind: "LateWidget",
      metadata: { name: "w1" },
    });
    await delay(800); // longer than the rescan's debounce (0.5 s), were there one
    await c.createKex("ns1", "marker");
    await until(() => seen.includes("ns1/marker"), "the marker");
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0, runner.output);
  assert.deepEqual([...new Set(seen)].sort(), [
    "category:KopfExample/kex1",
    "category:KopfExample/marker",
    "ns1/kex1",
    "ns1/marker",
  ]);
  const warnings = runner.output.split("\n").filter((l) => l.includes("WARNING"));
  assert.equal(warnings.length, 2, runner.output);
  assert.match(
    warnings[0]!,
    /Resource "latewidgets" is not served by the cluster: create its CRD first, or check the name with "kubectl api-resources"; scanning is disabled: it is served after a restart\.$/,
  );
  assert.match(
    warnings[1]!,
    /Scanning is disabled: serving the namespaces ns1 as they are; the patterns team-\* need the list of namespaces and are ignored\.$/,
  );
  const observed = c.requests.filter((l) =>
    /\/api\/v1\/namespaces[?\s]|customresourcedefinitions[?\s]/.test(l) && !/POST/.test(l)
  );
  assert.deepEqual(observed, [], "no listing or watching of namespaces or CRDs");
});
