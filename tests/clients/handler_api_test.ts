/**
 * The handlers' API client (`kopf.KubeClient`, the context's `api`, `kopf.api()`) over real
 * HTTP against the embedded API server: every verb, every resource form, every error class;
 * the operator's networking settings (retries of 429/503 with Retry-After, concurrency).
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import {
  AlreadyExistsError,
  ConflictError,
  ForbiddenError,
  KubeClient,
  NotFoundError,
  Resource,
  UnprocessableError,
} from "../../mod.ts";
import { createKopfExampleCrd, setup } from "./_setup.ts";
import { until } from "../reactor/_setup.ts";

const NS = { namespace: "default" };

async function env(settings: kopf.OperatorSettings | undefined = undefined) {
  const e = await setup({}, settings ? { settings } : {});
  await createKopfExampleCrd(e.api);
  return { ...e, kube: new KubeClient(e.api) };
}

Deno.test("KubeClient resolves every resource form through discovery", async () => {
  await using e = await env();
  const forms: kopf.ResourceRef[] = [
    "kopfexamples",
    "kopfexample",
    "KopfExample",
    "kex",
    "kopfexamples.kopf.dev",
    "kopfexamples.v1.kopf.dev",
    ["kopf.dev", "kopfexamples"],
    ["kopf.dev", "v1", "kopfexamples"],
    ["kopf.dev/v1", "kopfexamples"],
    { group: "kopf.dev", plural: "kopfexamples" },
    { apiVersion: "kopf.dev/v1", kind: "KopfExample" },
    new Resource("kopf.dev", "v1", "kopfexamples"),
  ];
  for (const form of forms) {
    const r = await e.kube.resolve(form);
    assert.equal(String(r), "kopfexamples.v1.kopf.dev", `form ${JSON.stringify(form)}`);
    assert.equal(r.namespaced, true); // from discovery, also for a bare Resource
  }
  assert.equal(String(await e.kube.resolve("deployments.apps")), "deployments.v1.apps");
  assert.equal(String(await e.kube.resolve(["v1", "pods"])), "pods.v1");
  assert.equal(
    String(await e.kube.resolve("kopfexamples.v1beta1.kopf.dev")),
    "kopfexamples.v1beta1.kopf.dev",
  );
  await assert.rejects(e.kube.resolve("nothings"), kopf.ResourceSelectorError);
});

/** Waits until the client resolves the KopfExamples' short name (a new discovery sees their CRD). */
async function resolvesKex(kube: KubeClient): Promise<void> {
  await until(async () => {
    try {
      return String(await kube.resolve("kex")) === "kopfexamples.v1.kopf.dev";
    } catch {
      return false;
    }
  }, "discovery of the new CRD");
}

Deno.test("KubeClient sees a CRD created after its first discovery", async () => {
  await using e = await setup();
  const kube = new KubeClient(e.api);
  await kube.resolve("pods"); // discovery cached without kopfexamples
  await createKopfExampleCrd(e.api);
  await resolvesKex(kube);
});

Deno.test("KubeClient resolves a name once per discovery: the same resource, no selection again; a new discovery resolves anew", async () => {
  await using e = await setup();
  const kube = new KubeClient(e.api);
  const pods = await kube.resolve("pods");
  assert.equal(await kube.resolve("pods"), pods, "the same Resource: resolved once");
  assert.equal(await kube.resolve(pods), pods, "a Resource given resolves to the discovered one");
  // Selecting does not run again for a resolved name: a selector that would fail is not asked.
  const select = kopf.Selector.prototype.selectOne;
  kopf.Selector.prototype.selectOne = () => {
    throw new Error("selected again");
  };
  try {
    assert.equal(await kube.resolve("pods"), pods);
    await assert.rejects(kube.resolve("configmaps"), /selected again/); // not resolved before
  } finally {
    kopf.Selector.prototype.selectOne = select;
  }
  // A name not served yet makes a new discovery; after it, names resolve from the new one.
  await createKopfExampleCrd(e.api);
  await resolvesKex(kube);
  const again = await kube.resolve("pods");
  assert.notEqual(again, pods, "resolved from the new discovery");
  assert.equal(String(again), "pods.v1");
});

Deno.test("KubeClient: create, get, list, replace, delete of a ConfigMap; 404 and 409 errors", async () => {
  await using e = await env();
  const api = e.kube;
  const created = await api.create("configmaps", {
    metadata: { name: "cm1", labels: { app: "x" } },
    data: { a: "1" },
  }, NS);
  assert.equal(created.metadata.namespace, "default");
  assert.equal(created.kind, "ConfigMap");
  await assert.rejects(
    api.create("cm", { metadata: { name: "cm1" } }, NS),
    (e: unknown) => e instanceof AlreadyExistsError && e instanceof ConflictError && e.code === 409,
  );

  const got = await api.get<{ data: { a: string } }>(["v1", "configmaps"], "cm1", NS);
  assert.equal(got.data.a, "1");
  await assert.rejects(
    api.get("configmaps", "absent", NS),
    (e: unknown) => e instanceof NotFoundError && e.reason === "NotFound",
  );

  await api.create("configmaps", { metadata: { name: "cm2" } }, NS);
  const all = await api.list("configmaps", NS);
  assert.deepEqual(all.items.map((i) => i.metadata.name).sort(), ["cm1", "cm2"]);
  assert.ok(all.resourceVersion);
  assert.ok(all.items.every((i) => i.kind === "ConfigMap" && i.apiVersion === "v1"));
  const labelled = await api.list("configmaps", { ...NS, labelSelector: "app=x" });
  assert.deepEqual(labelled.items.map((i) => i.metadata.name), ["cm1"]);
  const everywhere = await api.list("namespaces");
  assert.ok(everywhere.items.some((i) => i.metadata.name === "default"));

  const replaced = await api.replace("configmaps", { ...got, data: { a: "2" } });
  assert.equal(replaced.data.a, "2");
  await assert.rejects( // a stale resourceVersion: a Conflict, not AlreadyExists
    api.replace("configmaps", { ...got, data: { a: "3" } }),
    (e: unknown) =>
      e instanceof ConflictError && !(e instanceof AlreadyExistsError) && e.reason === "Conflict",
  );
  await assert.rejects(
    api.replace("configmaps", { metadata: { name: "absent", namespace: "default" } }),
    NotFoundError,
  );

  await api.delete("configmaps", "cm1", NS);
  await assert.rejects(api.get("configmaps", "cm1", NS), NotFoundError);
  await assert.rejects(api.delete("configmaps", "cm1", NS), NotFoundError);
});

Deno.test("KubeClient patches: merge (status split), JSON patch with test, strategic, subresource", async () => {
  await using e = await env();
  const api = e.kube;
  await api.create("kex", { metadata: { name: "kex1" }, spec: { size: 1 } }, NS);
  const merged = await api.patch("kex", "kex1", { spec: { size: 2 }, status: { phase: "Up" } }, NS);
  assert.equal(merged.spec.size, 2);
  assert.equal(merged.status.phase, "Up"); // went to /status (the CRD has the subresource)
  const status = await api.patch("kex", "kex1", { status: { phase: "Down" } }, {
    ...NS,
    subresource: "status",
  });
  assert.equal(status.status.phase, "Down");

  const jsonPatched = await api.patch("kex", "kex1", [
    { op: "test", path: "/spec/size", value: 2 },
    { op: "replace", path: "/spec/size", value: 3 },
  ], { ...NS, type: "json" });
  assert.equal(jsonPatched.spec.size, 3);
  await assert.rejects(
    api.patch("kex", "kex1", [{ op: "test", path: "/spec/size", value: 99 }], {
      ...NS,
      type: "json",
    }),
    UnprocessableError,
  );
  await assert.rejects(api.patch("kex", "absent", { spec: {} }, NS), NotFoundError);

  await api.create("deployments.apps", {
    metadata: { name: "d1" },
    spec: {
      selector: { matchLabels: { app: "d" } },
      template: {
        metadata: { labels: { app: "d" } },
        spec: { containers: [{ name: "a", image: "a:1" }, { name: "b", image: "b:1" }] },
      },
    },
  }, NS);
  const strategic = await api.patch("deployments", "d1", {
    spec: { template: { spec: { containers: [{ name: "b", image: "b:2" }] } } },
  }, { ...NS, type: "strategic" });
  // Strategic merge: containers merge by name (a merge patch would have replaced the list).
  assert.deepEqual(
    strategic.spec.template.spec.containers.map((c: { name: string; image: string }) =>
      `${c.name}=${c.image}`
    ),
    ["a=a:1", "b=b:2"],
  );
});

Deno.test("KubeClient.apply: server-side apply with a field manager; conflicts unless forced", async () => {
  await using e = await env();
  const api = e.kube;
  const first = await api.apply("configmaps", { metadata: { name: "ssa" }, data: { a: "1" } }, {
    ...NS,
    fieldManager: "one",
  });
  assert.equal(first.data.a, "1");
  assert.equal(first.kind, "ConfigMap");
  await assert.rejects(
    api.apply("configmaps", { metadata: { name: "ssa" }, data: { a: "2" } }, {
      ...NS,
      fieldManager: "two",
    }),
    (e: unknown) => e instanceof ConflictError && e.code === 409,
  );
  const forced = await api.apply("configmaps", {
    metadata: { name: "ssa", namespace: "default" },
    data: { a: "2" },
  }, {
    fieldManager: "two",
    force: true,
  });
  assert.equal(forced.data.a, "2");
  // The same through patch(type: "apply").
  const patched = await api.patch("configmaps", "ssa", {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "ssa" },
    data: { a: "2", b: "3" },
  }, { ...NS, type: "apply", fieldManager: "two" });
  assert.equal(patched.data.b, "3");
});

Deno.test("KubeClient.delete: propagationPolicy Orphan keeps the children; Background removes them", async () => {
  await using e = await env();
  const api = e.kube;
  for (const [parent, policy] of [["p1", "Orphan"], ["p2", "Background"]] as const) {
    const owner = await api.create("configmaps", { metadata: { name: parent } }, NS);
    await api.create("configmaps", {
      metadata: {
        name: `${parent}-child`,
        ownerReferences: [{
          apiVersion: "v1",
          kind: "ConfigMap",
          name: parent,
          uid: owner.metadata.uid,
        }],
      },
    }, NS);
    await api.delete("configmaps", parent, { ...NS, propagationPolicy: policy });
  }
  await e.server.settled();
  await until(async () => {
    const names = (await api.list("configmaps", NS)).items.map((i) => i.metadata.name);
    return names.includes("p1-child") && !names.includes("p2-child");
  }, "the garbage collector");
  const orphan = await api.get("configmaps", "p1-child", NS);
  assert.equal(orphan.metadata.ownerReferences, undefined);
});

Deno.test("KubeClient: 422 Invalid and 403 Forbidden (a namespace being terminated)", async () => {
  await using e = await env();
  const api = e.kube;
  await assert.rejects(
    api.create("configmaps", { metadata: { name: "Not_A_Valid_Name" } }, NS),
    (e: unknown) => e instanceof UnprocessableError && e.reason === "Invalid",
  );
  await api.create("namespaces", {
    metadata: { name: "closing", finalizers: ["example.com/hold"] },
  });
  await api.delete("namespaces", "closing");
  await assert.rejects(
    api.create("configmaps", { metadata: { name: "late" } }, { namespace: "closing" }),
    (e: unknown) => e instanceof ForbiddenError && e.code === 403,
  );
});

Deno.test("KubeClient.watch: existing objects as ADDED, then changes; stops on the signal", async () => {
  await using e = await env();
  const api = e.kube;
  await api.create("configmaps", { metadata: { name: "before" } }, NS);
  const stop = new AbortController();
  const seen: string[] = [];
  const watching = (async () => {
    for await (const { type, object } of api.watch("cm", { ...NS, signal: stop.signal })) {
      seen.push(`${type} ${object.metadata.name}`);
      if (type === "DELETED") stop.abort();
    }
  })();
  await until(() => seen.includes("ADDED before"), "the initial listing");
  await api.create("configmaps", { metadata: { name: "after" } }, NS);
  await api.patch("configmaps", "after", { data: { x: "1" } }, NS);
  await api.delete("configmaps", "after", NS);
  await watching;
  assert.deepEqual(seen, ["ADDED before", "ADDED after", "MODIFIED after", "DELETED after"]);

  // Breaking out of the loop ends the watch too (no signal needed).
  for await (const event of api.watch("namespaces")) {
    assert.equal(event.type, "ADDED");
    break;
  }
});

Deno.test("KubeClient follows the operator's networking settings: 503 and 429 are retried after Retry-After", async () => {
  const settings = new kopf.OperatorSettings();
  settings.networking.errorBackoffs = Array(500).fill(0.01);
  await using e = await env(settings);
  await e.kube.resolve("configmaps"); // discovery, before the faults
  // Deterministic: every request fails until the test has seen the fault answered twice, then the
  // fault is switched off and the same create (still retrying) succeeds.
  const kinds = { rate503: "error503", rate429: "error429" } as const;
  for (const [i, [rate, counter]] of Object.entries(kinds).entries()) {
    const before = e.server.faultCounts[counter];
    e.server.setFaults({ [rate]: 1, retryAfterSeconds: 0 });
    const creating = e.kube.create("configmaps", { metadata: { name: `cm${i}` } }, NS);
    await until(() => e.server.faultCounts[counter] >= before + 2, `two injected ${counter}s`);
    e.server.setFaults({ [rate]: null });
    assert.equal((await creating).metadata?.name, `cm${i}`);
  }
  assert.equal((await e.kube.list("configmaps", NS)).items.length, 2);

  // With retries off, the error escalates as its class.
  settings.networking.errorBackoffs = [];
  e.server.setFaults({ rate503: 1 });
  await assert.rejects(e.kube.get("configmaps", "cm0", NS), kopf.ServerError);
});

Deno.test("kopf.api() outside of an operator says how to get a client", () => {
  assert.throws(() => kopf.api(), /only inside a running operator.*KubeClient\.fromVault/);
});
