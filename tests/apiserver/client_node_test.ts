/**
 * The embedded API server driven by the official JavaScript client,
 * `@kubernetes/client-node` (2.x, on Deno's Node compatibility layer, where
 * it speaks HTTP through undici): generic CRUD with `KubernetesObjectApi`,
 * the typed APIs, list+watch with and without bookmarks, informers that must
 * recover from 410 Gone and from closed watches, token and client-certificate
 * auth, and injected 429/503 answers.
 *
 * Why: operators written in TypeScript use this client, and it is a reader of
 * our wire format independent of kubectl and of our own client, with its own
 * opinions: it refuses plain `http://` unless the kubeconfig says
 * `insecure-skip-tls-verify`; `KubernetesObjectApi.patch()` defaults to
 * strategic merge (415 for custom resources), the typed `patch*()` methods to
 * JSON patch, so a merge patch must be asked for by content type.
 *
 * Client-node quirks that shape these tests:
 * - A plain `yaml` parse of a CRD must go through `k8s.loadYaml` (or the
 *   model classes) before it is sent: the serializer reads model property
 *   names, so `x-kubernetes-preserve-unknown-fields` is silently dropped.
 * - Under Deno, aborting a watch (which is what `informer.stop()` does) never
 *   calls the watch's `done` callback: undici's response body does not error
 *   when the request is aborted after the headers (the socket does close, and
 *   the client's leftover inactivity timer is unref'd). So plain watches are
 *   ended from the server side, where the client sees a clean end.
 * - An informer reconnects after a closed watch with a growing delay (1 s,
 *   2 s, 4 s …, reset by any event), and `stop()` during that delay does not
 *   prevent the delayed reconnect; so informers are stopped only while their
 *   watch is open.
 *
 * @module
 */

import * as k8s from "@kubernetes/client-node";
import { load as parseYaml } from "js-yaml";
import { type RunningApiServer, startApiServer } from "../../testing.ts";

// ---------------------------------------------------------------------------
// Helpers

function assert(condition: unknown, message = "assertion failed"): asserts condition {
  if (!condition) throw new Error(message);
}

function assertEquals(actual: unknown, expected: unknown, message = ""): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${message ? `${message}: ` : ""}expected ${e}, got ${a}`);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Awaits a promise, or rejects after `ms` (leaving no timer behind). */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls until `fn` returns something truthy (errors count as "not yet"). */
async function waitFor<T>(
  what: string,
  fn: () => T | Promise<T>,
  timeoutMs = 5000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (true) {
    try {
      const value = await fn();
      if (value) return value as NonNullable<T>;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: lastError });
    }
    await delay(20);
  }
}

/** Awaits a rejection with a client-node `ApiException` of this HTTP code; returns its Status. */
async function rejectsWithCode(
  promise: Promise<unknown>,
  code: number,
): Promise<{ reason?: string; code?: number; message?: string }> {
  try {
    await promise;
  } catch (e) {
    assert(e instanceof k8s.ApiException, `expected an ApiException, got ${e}`);
    assertEquals(e.code, code, "HTTP code");
    const body = typeof e.body === "string" ? e.body : JSON.stringify(e.body ?? null);
    try {
      return JSON.parse(body) ?? {};
    } catch {
      return {};
    }
  }
  throw new Error(`expected a rejection with HTTP ${code}, but the call succeeded`);
}

function kubeConfigOf(api: RunningApiServer): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(api.kubeconfig.path);
  return kc;
}

function rvOf(obj: k8s.KubernetesObject | undefined): number {
  const rv = Number(obj?.metadata?.resourceVersion);
  assert(
    Number.isInteger(rv) && rv > 0,
    `not a resourceVersion: ${obj?.metadata?.resourceVersion}`,
  );
  return rv;
}

interface KopfExample extends k8s.KubernetesObject {
  spec?: Record<string, unknown>;
}

interface WatchEvent {
  type: string;
  object: k8s.KubernetesObject;
}

/** A running client-node watch whose events are collected. */
interface CollectedWatch {
  events: WatchEvent[];
  /** Settles with the `done` callback's error (null for a clean end). */
  ended: Promise<unknown>;
}

async function collectWatch(
  kc: k8s.KubeConfig,
  path: string,
  params: Record<string, string | number | boolean>,
): Promise<CollectedWatch> {
  const events: WatchEvent[] = [];
  let end!: (err: unknown) => void;
  const ended = new Promise<unknown>((resolve) => end = resolve);
  await new k8s.Watch(kc).watch(
    path,
    params,
    (type, object) => events.push({ type, object }),
    (err) => end(err ?? null),
  );
  return { events, ended };
}

/** Ends every open watch from the server side and waits for the clients to see the end. */
async function endWatches(api: RunningApiServer, ...watches: CollectedWatch[]): Promise<void> {
  api.server.watches.closeAll();
  for (const w of watches) {
    assertEquals(
      await within(w.ended, 3000, "the watch to end"),
      null,
      "the watch's done callback after a server-side close",
    );
  }
}

type Informer<T extends k8s.KubernetesObject> = k8s.Informer<T> & k8s.ObjectCache<T>;

/** Stops an informer while its watch is open (see the module doc), waiting for nothing else. */
async function stopInformer<T extends k8s.KubernetesObject>(
  api: RunningApiServer,
  informer: Informer<T>,
): Promise<void> {
  try {
    await waitFor("the informer's watch to be open", () => api.server.watches.size === 1);
  } finally {
    await informer.stop();
  }
}

/** `name → resourceVersion` of a list of objects, sorted by name. */
function versions(items: readonly k8s.KubernetesObject[]): Record<string, string> {
  const pairs = items.map((o) => [o.metadata?.name ?? "", o.metadata?.resourceVersion ?? ""]);
  pairs.sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0));
  return Object.fromEntries(pairs);
}

/**
 * examples/crd.yaml, parsed with `yaml` (`plain`) and as client-node's model (`model`).
 *
 * Only the model survives client-node's serializer intact: it reads model
 * property names (`x_kubernetes_preserve_unknown_fields`), so a plain object's
 * `x-kubernetes-preserve-unknown-fields` is silently dropped on the way out, and
 * the server then (rightly) prunes every field of the custom objects' spec.
 */
async function exampleCrd(): Promise<{
  plain: k8s.V1CustomResourceDefinition;
  model: k8s.V1CustomResourceDefinition;
}> {
  const text = await Deno.readTextFile(new URL("../../examples/crd.yaml", import.meta.url));
  const plain = parseYaml(text) as k8s.V1CustomResourceDefinition;
  return { plain, model: k8s.loadYaml<k8s.V1CustomResourceDefinition>(text) };
}

/** `x-kubernetes-preserve-unknown-fields` of the spec in a CRD model's first version. */
function preservesUnknownSpecFields(crd: k8s.V1CustomResourceDefinition): boolean | undefined {
  return crd.spec?.versions?.[0]?.schema?.openAPIV3Schema?.properties?.spec
    ?.x_kubernetes_preserve_unknown_fields;
}

const MERGE_PATCH = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);

// ---------------------------------------------------------------------------
// 1. CRUD through KubernetesObjectApi

Deno.test("KubernetesObjectApi: a CRD, then create/read/patch/replace/list/delete a custom object", async () => {
  await using api = await startApiServer();
  const objects = k8s.KubernetesObjectApi.makeApiClient(kubeConfigOf(api));

  // A plain parse of the YAML loses x-kubernetes-preserve-unknown-fields on the way out
  // (see exampleCrd()): a dry run shows what the server would have stored.
  const { plain, model: crd } = await exampleCrd();
  const dry = await objects.create(plain, undefined, "All");
  assertEquals(preservesUnknownSpecFields(dry), undefined, "a plain-parsed CRD as sent");

  assertEquals(preservesUnknownSpecFields(crd), true, "the CRD as client-node's model");
  const crdRef = {
    apiVersion: crd.apiVersion,
    kind: crd.kind,
    metadata: { name: crd.metadata!.name! },
  };
  await rejectsWithCode(objects.read(crdRef), 404); // the dry run stored nothing
  const createdCrd = await objects.create(crd);
  assertEquals(createdCrd.metadata?.name, "kopfexamples.kopf.dev");
  assertEquals(preservesUnknownSpecFields(createdCrd), true, "the stored CRD");
  await waitFor("the CRD to be Established", async () => {
    const got = await objects.read<k8s.V1CustomResourceDefinition>(crdRef);
    return got.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
  });
  // Served: discovery knows the kind (KubernetesObjectApi resolves the URL through it).
  const empty = await waitFor(
    "kopfexamples to be served",
    () => objects.list<KopfExample>("kopf.dev/v1", "KopfExample", "default"),
  );
  assertEquals(empty.items, []);

  const ref = {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "kex1", namespace: "default" },
  };
  const created = await objects.create<KopfExample>({ ...ref, spec: { duration: "1m" } });
  assertEquals(created.metadata?.generation, 1);
  assertEquals(created.spec, { duration: "1m" });
  assert(created.metadata?.uid, "a uid");
  const rv1 = rvOf(created);

  const read = await objects.read<KopfExample>(ref);
  assertEquals(read.metadata?.resourceVersion, created.metadata?.resourceVersion);
  assertEquals(read.spec, { duration: "1m" });

  // KubernetesObjectApi.patch() defaults to strategic merge: a real server answers 415 for CRs.
  const status415 = await rejectsWithCode(
    objects.patch<KopfExample>({ ...ref, spec: { duration: "2m" } }),
    415,
  );
  assertEquals(status415.reason, "UnsupportedMediaType");

  // A merge patch of the spec: resourceVersion up, generation up.
  const patched = await objects.patch<KopfExample>(
    { ...ref, spec: { duration: "2m", field: "x" } },
    undefined,
    undefined,
    "client-node-test",
    undefined,
    k8s.PatchStrategy.MergePatch,
  );
  assertEquals(patched.spec, { duration: "2m", field: "x" });
  assertEquals(patched.metadata?.generation, 2);
  const rv2 = rvOf(patched);
  assert(rv2 > rv1, `resourceVersion must increase: ${rv1} → ${rv2}`);

  // A merge patch of metadata only: resourceVersion up, generation unchanged.
  const labelled = await objects.patch<KopfExample>(
    { ...ref, metadata: { ...ref.metadata, labels: { color: "blue" } } },
    undefined,
    undefined,
    undefined,
    undefined,
    k8s.PatchStrategy.MergePatch,
  );
  assertEquals(labelled.metadata?.labels, { color: "blue" });
  assertEquals(labelled.metadata?.generation, 2);
  const rv3 = rvOf(labelled);
  assert(rv3 > rv2, `resourceVersion must increase: ${rv2} → ${rv3}`);

  // Replace with the current resourceVersion: accepted; a spec change bumps generation.
  const replaced = await objects.replace<KopfExample>({
    ...labelled,
    spec: { duration: "3m" },
  });
  assertEquals(replaced.spec, { duration: "3m" });
  assertEquals(replaced.metadata?.generation, 3);
  assertEquals(replaced.metadata?.labels, { color: "blue" });
  const rv4 = rvOf(replaced);
  assert(rv4 > rv3, `resourceVersion must increase: ${rv3} → ${rv4}`);

  // Replace with a stale resourceVersion: 409 Conflict, nothing changes.
  const conflict = await rejectsWithCode(
    objects.replace<KopfExample>({ ...labelled, spec: { duration: "4m" } }),
    409,
  );
  assertEquals(conflict.reason, "Conflict");
  assertEquals((await objects.read<KopfExample>(ref)).metadata?.resourceVersion, String(rv4));

  // Replace with the same content: no change, no new resourceVersion, no generation bump.
  const same = await objects.replace<KopfExample>(replaced);
  assertEquals(same.metadata?.resourceVersion, String(rv4));
  assertEquals(same.metadata?.generation, 3);

  const listed = await objects.list<KopfExample>("kopf.dev/v1", "KopfExample", "default");
  assertEquals(listed.items.map((o) => o.metadata?.name), ["kex1"]);
  assertEquals(listed.items[0]?.metadata?.resourceVersion, String(rv4));
  assert(rvOf(listed) >= rv4, "a list's resourceVersion is at least its items'");

  await objects.delete(ref);
  await rejectsWithCode(objects.read(ref), 404);
  await rejectsWithCode(objects.delete(ref), 404);
  assertEquals((await objects.list("kopf.dev/v1", "KopfExample", "default")).items, []);
});

Deno.test("KubernetesObjectApi: create/read/patch/replace/list/delete a ConfigMap", async () => {
  await using api = await startApiServer();
  const objects = k8s.KubernetesObjectApi.makeApiClient(kubeConfigOf(api));
  const ref = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "cm1", namespace: "default" },
  };

  const created = await objects.create<k8s.V1ConfigMap>({ ...ref, data: { a: "1" } });
  assertEquals(created.data, { a: "1" });
  const rv1 = rvOf(created);
  await rejectsWithCode(objects.create<k8s.V1ConfigMap>({ ...ref, data: { a: "1" } }), 409);

  // The default strategy (strategic merge) works for built-ins.
  const strategic = await objects.patch<k8s.V1ConfigMap>({ ...ref, data: { b: "2" } });
  assertEquals(strategic.data, { a: "1", b: "2" });
  const rv2 = rvOf(strategic);
  assert(rv2 > rv1, `resourceVersion must increase: ${rv1} → ${rv2}`);

  // Merge patch: null deletes a key.
  const merged = await objects.patch<k8s.V1ConfigMap>(
    { ...ref, data: { a: null as unknown as string, c: "3" } },
    undefined,
    undefined,
    undefined,
    undefined,
    k8s.PatchStrategy.MergePatch,
  );
  assertEquals(merged.data, { b: "2", c: "3" });
  const rv3 = rvOf(merged);
  assert(rv3 > rv2, `resourceVersion must increase: ${rv2} → ${rv3}`);

  const replaced = await objects.replace<k8s.V1ConfigMap>({ ...merged, data: { d: "4" } });
  assertEquals(replaced.data, { d: "4" });
  const rv4 = rvOf(replaced);
  assert(rv4 > rv3, `resourceVersion must increase: ${rv3} → ${rv4}`);
  const conflict = await rejectsWithCode(
    objects.replace<k8s.V1ConfigMap>({ ...merged, data: { e: "5" } }),
    409,
  );
  assertEquals(conflict.reason, "Conflict");

  const read = await objects.read<k8s.V1ConfigMap>(ref);
  assertEquals(read.data, { d: "4" });
  assertEquals(read.metadata?.resourceVersion, String(rv4));

  const listed = await objects.list<k8s.V1ConfigMap>("v1", "ConfigMap", "default");
  assertEquals(listed.items.filter((o) => o.metadata?.name === "cm1").map((o) => o.data), [{
    d: "4",
  }]);

  await objects.delete(ref);
  await rejectsWithCode(objects.read(ref), 404);
  const after = await objects.list("v1", "ConfigMap", "default");
  assertEquals(after.items.filter((o) => o.metadata?.name === "cm1"), []);
});

// ---------------------------------------------------------------------------
// 2. The typed APIs

Deno.test("CoreV1Api and CustomObjectsApi: basic calls", async () => {
  await using api = await startApiServer();
  const kc = kubeConfigOf(api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const extensions = kc.makeApiClient(k8s.ApiextensionsV1Api);

  const namespaces = await core.listNamespace();
  const names = namespaces.items.map((n) => n.metadata?.name);
  assert(names.includes("default") && names.includes("kube-system"), `namespaces: ${names}`);

  const cm = await core.createNamespacedConfigMap({
    namespace: "default",
    body: { metadata: { name: "typed" }, data: { k: "v" } },
  });
  assertEquals(cm.metadata?.namespace, "default");
  assertEquals(cm.data, { k: "v" });
  const got = await core.readNamespacedConfigMap({ namespace: "default", name: "typed" });
  assertEquals(got.metadata?.uid, cm.metadata?.uid);

  // The typed patch methods default to JSON patch: a merge-patch body is rejected…
  const notAPatch = await rejectsWithCode(
    core.patchNamespacedConfigMap({
      namespace: "default",
      name: "typed",
      body: { data: { k: "w" } },
    }),
    400,
  );
  assert(notAPatch.message, "the Status says why");
  // …so the content type is set explicitly.
  const patched = await core.patchNamespacedConfigMap(
    { namespace: "default", name: "typed", body: { data: { k: "w" } } },
    MERGE_PATCH,
  );
  assertEquals(patched.data, { k: "w" });
  assert(rvOf(patched) > rvOf(cm), "resourceVersion must increase");

  const { model: crd } = await exampleCrd();
  await extensions.createCustomResourceDefinition({ body: crd });
  const where = { group: "kopf.dev", version: "v1", namespace: "default", plural: "kopfexamples" };
  const empty = await waitFor(
    "kopfexamples to be served",
    () => custom.listNamespacedCustomObject(where) as Promise<{ items: unknown[] }>,
  );
  assertEquals(empty.items, []);
  await custom.createNamespacedCustomObject({
    ...where,
    body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "c1" }, spec: {} },
  });
  const list = await custom.listNamespacedCustomObject(where) as { items: KopfExample[] };
  assertEquals(list.items.map((o) => o.metadata?.name), ["c1"]);
  const statusPatched = await custom.patchNamespacedCustomObjectStatus(
    { ...where, name: "c1", body: { status: { ok: true } } },
    MERGE_PATCH,
  ) as KopfExample & { status?: unknown };
  assertEquals(statusPatched.status, { ok: true });
  assertEquals(statusPatched.metadata?.generation, 1);
});

// ---------------------------------------------------------------------------
// 3. List + watch

Deno.test("Watch: ADDED/MODIFIED/DELETED in order with their resourceVersions; bookmarks only when asked", async () => {
  await using api = await startApiServer({ bookmarkSeconds: 1 });
  const kc = kubeConfigOf(api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const path = "/api/v1/namespaces/default/configmaps";
  await core.createNamespacedConfigMap({
    namespace: "default",
    body: { metadata: { name: "before" } },
  });
  const list = await core.listNamespacedConfigMap({ namespace: "default" });
  const listRv = list.metadata?.resourceVersion;
  assert(listRv, "a list resourceVersion");

  const withBookmarks = await collectWatch(kc, path, {
    allowWatchBookmarks: true,
    resourceVersion: listRv,
  });
  const withoutBookmarks = await collectWatch(kc, path, { resourceVersion: listRv });
  try {
    const created = await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "watched" }, data: { n: "1" } },
    });
    const patched = await core.patchNamespacedConfigMap(
      { namespace: "default", name: "watched", body: { data: { n: "2" } } },
      MERGE_PATCH,
    );
    await core.deleteNamespacedConfigMap({ namespace: "default", name: "watched" });

    const nonBookmarks = (w: CollectedWatch) => w.events.filter((e) => e.type !== "BOOKMARK");
    await waitFor(
      "three events on both watches",
      () => nonBookmarks(withBookmarks).length >= 3 && nonBookmarks(withoutBookmarks).length >= 3,
    );
    await waitFor(
      "a bookmark after the DELETED event",
      () =>
        withBookmarks.events.findIndex((e) => e.type === "BOOKMARK") >
          withBookmarks.events.findIndex((e) => e.type === "DELETED"),
      3000,
    );
    // Give the unasked watch the same time to (wrongly) receive a bookmark.
    await delay(1200);

    for (const w of [withBookmarks, withoutBookmarks]) {
      const events = nonBookmarks(w);
      assertEquals(events.map((e) => e.type), ["ADDED", "MODIFIED", "DELETED"]);
      assertEquals(events.map((e) => e.object.metadata?.name), ["watched", "watched", "watched"]);
      assertEquals(events[0]!.object.metadata?.resourceVersion, created.metadata?.resourceVersion);
      assertEquals(events[1]!.object.metadata?.resourceVersion, patched.metadata?.resourceVersion);
      assertEquals((events[1]!.object as k8s.V1ConfigMap).data, { n: "2" });
      assert(rvOf(events[2]!.object) > rvOf(patched), "DELETED carries a newer resourceVersion");
    }
    assertEquals(withoutBookmarks.events.filter((e) => e.type === "BOOKMARK"), []);

    const bookmarks = withBookmarks.events.filter((e) => e.type === "BOOKMARK");
    assert(bookmarks.length >= 1, "at least one bookmark");
    const lastEventRv = rvOf(nonBookmarks(withBookmarks)[2]!.object);
    for (const b of bookmarks) {
      assertEquals(b.object.kind, "ConfigMap");
      assertEquals(b.object.apiVersion, "v1");
      assert(rvOf(b.object) >= Number(listRv), "a bookmark's resourceVersion is not older");
    }
    assert(rvOf(bookmarks.at(-1)?.object) >= lastEventRv, "the last bookmark is at the last event");

    // Resuming from the last bookmark replays nothing old.
    const resumed = await collectWatch(kc, path, {
      resourceVersion: bookmarks.at(-1)!.object.metadata!.resourceVersion!,
    });
    await delay(200);
    assertEquals(resumed.events, []);
    await endWatches(api, withBookmarks, withoutBookmarks, resumed);
  } finally {
    api.server.watches.closeAll();
  }
});

Deno.test("Watch: resourceVersion 0 replays the current state as ADDED; an expired one gets ERROR 410", async () => {
  await using api = await startApiServer();
  const kc = kubeConfigOf(api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const path = "/api/v1/namespaces/default/configmaps";
  for (const name of ["a", "b"]) {
    await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name } } });
  }
  const list = await core.listNamespacedConfigMap({ namespace: "default" });
  const oldRv = list.metadata!.resourceVersion!;
  await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "c" } } });

  const replay = await collectWatch(kc, path, { resourceVersion: "0" });
  await waitFor("three ADDED events", () => replay.events.length >= 3);
  assertEquals(replay.events.map((e) => `${e.type} ${e.object.metadata?.name}`).sort(), [
    "ADDED a",
    "ADDED b",
    "ADDED c",
  ]);
  await endWatches(api, replay);

  api.expireResourceVersions();
  const expired = await collectWatch(kc, path, { resourceVersion: oldRv });
  assertEquals(
    await within(expired.ended, 3000, "the watch to end"),
    null,
    "the server ends the stream after the ERROR",
  );
  assertEquals(expired.events.map((e) => e.type), ["ERROR"]);
  const status = expired.events[0]!.object as unknown as k8s.V1Status;
  assertEquals([status.kind, status.code, status.reason], ["Status", 410, "Expired"]);
  assertEquals(api.faultCounts.expiredWatches, 1);
});

// ---------------------------------------------------------------------------
// 4. Informers: recovery from 410 and from closed watches

async function startConfigMapInformer(
  kc: k8s.KubeConfig,
  namespace: string,
): Promise<{ informer: Informer<k8s.V1ConfigMap>; log: string[]; errors: unknown[] }> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const informer = k8s.makeInformer(
    kc,
    `/api/v1/namespaces/${namespace}/configmaps`,
    () => core.listNamespacedConfigMap({ namespace }),
  );
  const log: string[] = [];
  const errors: unknown[] = [];
  informer.on("add", (o) => log.push(`add ${o.metadata?.name}`));
  informer.on("update", (o) => log.push(`update ${o.metadata?.name}`));
  informer.on("delete", (o) => log.push(`delete ${o.metadata?.name}`));
  informer.on("connect", () => log.push("connect"));
  informer.on("error", (e) => errors.push(e));
  await informer.start();
  return { informer, log, errors };
}

async function serverConfigMaps(
  core: k8s.CoreV1Api,
  namespace: string,
): Promise<Record<string, string>> {
  return versions((await core.listNamespacedConfigMap({ namespace })).items);
}

Deno.test("makeInformer: relists after 410 Gone and ends equal to the server", async () => {
  await using api = await startApiServer();
  const kc = kubeConfigOf(api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: "inf" } } });
  for (const name of ["a", "b", "c"]) {
    await core.createNamespacedConfigMap({ namespace: "inf", body: { metadata: { name } } });
  }
  const { informer, log, errors } = await startConfigMapInformer(kc, "inf");
  try {
    assertEquals(versions(informer.list()), await serverConfigMaps(core, "inf"));
    await waitFor("the informer's watch", () => api.server.watches.size === 1);
    const listsBefore = api.countRequests({ verb: "list", resource: "configmaps" });

    // The outage: the watch goes silent while things change.
    api.setFaults({ stallWatches: true });
    await core.deleteNamespacedConfigMap({ namespace: "inf", name: "a" });
    await core.createNamespacedConfigMap({ namespace: "inf", body: { metadata: { name: "d" } } });
    await core.patchNamespacedConfigMap(
      { namespace: "inf", name: "b", body: { data: { v: "1" } } },
      MERGE_PATCH,
    );
    await delay(100);
    assert(informer.get("a", "inf"), "the stalled informer has not seen the delete");
    assert(!informer.get("d", "inf"), "the stalled informer has not seen the create");
    assert(api.faultCounts.watchStalled >= 1, "the watch was stalled");

    // History is compacted and the watch closed: resuming from its last RV gets 410.
    api.setFaults({ stallWatches: null });
    api.expireResourceVersions();
    const expected = await serverConfigMaps(core, "inf");
    assertEquals(Object.keys(expected), ["b", "c", "d"]);
    await waitFor(
      "the informer to match the server",
      () => JSON.stringify(versions(informer.list())) === JSON.stringify(expected),
    );
    assert(api.faultCounts.expiredWatches > 0, "the server answered a resumed watch with 410");
    assert(
      api.countRequests({ verb: "list", resource: "configmaps" }) > listsBefore,
      "the informer relisted",
    );
    assertEquals(informer.get("b", "inf")?.data, { v: "1" });
    for (const entry of ["delete a", "add d", "update b"]) {
      assert(log.includes(entry), `informer events ${JSON.stringify(log)} lack "${entry}"`);
    }
    assertEquals(errors, []);

    // And it keeps following live changes afterwards.
    await waitFor("the informer's new watch", () => api.server.watches.size === 1);
    await core.createNamespacedConfigMap({ namespace: "inf", body: { metadata: { name: "e" } } });
    await waitFor("the informer to see e", () => informer.get("e", "inf"));
    assertEquals(versions(informer.list()), await serverConfigMaps(core, "inf"));
  } finally {
    await stopInformer(api, informer);
  }
});

Deno.test("makeInformer: reconnects when watches close every second and stays consistent", async () => {
  await using api = await startApiServer({ faults: { closeWatchesEvery: 1 } });
  const kc = kubeConfigOf(api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const { informer, errors } = await startConfigMapInformer(kc, "default");
  try {
    // Changes spread over ~3.5 s, across several watch closures.
    for (let i = 0; i < 12; i++) {
      const name = `cm${i % 4}`;
      const exists = informer.get(name, "default") ??
        (await core.listNamespacedConfigMap({ namespace: "default" })).items.find((o) =>
          o.metadata?.name === name
        );
      if (i % 5 === 4 && exists) {
        await core.deleteNamespacedConfigMap({ namespace: "default", name });
      } else if (exists) {
        await core.patchNamespacedConfigMap(
          { namespace: "default", name, body: { data: { i: String(i) } } },
          MERGE_PATCH,
        );
      } else {
        await core.createNamespacedConfigMap({
          namespace: "default",
          body: { metadata: { name }, data: { i: String(i) } },
        });
      }
      await delay(300);
    }
    const expected = await serverConfigMaps(core, "default");
    await waitFor(
      "the informer to match the server",
      () => JSON.stringify(versions(informer.list())) === JSON.stringify(expected),
      8000,
    );
    assert(api.faultCounts.watchClosed >= 2, `watches closed: ${api.faultCounts.watchClosed}`);
    const watches = api.countRequests({ verb: "watch", resource: "configmaps" });
    assert(watches >= 3, `the informer reconnected: ${watches} watch requests`);
    assertEquals(errors, []);

    // Stop the fault, let the last faulty watch expire, then stop on a quiet open watch.
    api.setFaults({ closeWatchesEvery: null });
    await delay(1100);
  } finally {
    api.setFaults({ closeWatchesEvery: null });
    await stopInformer(api, informer);
  }
});

// ---------------------------------------------------------------------------
// 5. Auth

Deno.test("auth: a bearer token from the generated kubeconfig works; a wrong one gets 401", async () => {
  await using api = await startApiServer({ token: "s3cret" });
  const kc = kubeConfigOf(api);
  assertEquals(kc.getCurrentUser()?.token, "s3cret");
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const namespaces = await core.listNamespace();
  assert(namespaces.items.some((n) => n.metadata?.name === "default"), "lists namespaces");
  await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "t" } } });

  // A watch authenticates too.
  const watch = await collectWatch(kc, "/api/v1/namespaces/default/configmaps", {
    resourceVersion: "0",
  });
  await waitFor("the ADDED event", () => watch.events.length === 1);
  await endWatches(api, watch);

  const wrong = new k8s.KubeConfig();
  wrong.loadFromString(api.kubeconfig.yaml.replace("token: s3cret", "token: wrong"));
  assertEquals(wrong.getCurrentUser()?.token, "wrong");
  await rejectsWithCode(wrong.makeApiClient(k8s.CoreV1Api).listNamespace(), 401);
  const unauthorizedWatch = await collectWatch(wrong, "/api/v1/namespaces", {});
  const err = await unauthorizedWatch.ended as { statusCode?: number };
  assertEquals(err?.statusCode, 401);
  assert(api.countRequests({ code: 401 }) >= 2, "the server counted the 401s");
});

Deno.test("auth: TLS with a client certificate from the generated kubeconfig", async () => {
  await using api = await startApiServer({ tls: true });
  assert(api.url.startsWith("https://"), api.url);
  const kc = new k8s.KubeConfig();
  kc.loadFromString(api.kubeconfig.yaml);
  assert(kc.getCurrentUser()?.certData, "the kubeconfig carries a client certificate");
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const namespaces = await core.listNamespace();
  assert(namespaces.items.some((n) => n.metadata?.name === "default"), "lists namespaces");
  const cm = await core.createNamespacedConfigMap({
    namespace: "default",
    body: { metadata: { name: "over-tls" } },
  });
  assertEquals(cm.metadata?.name, "over-tls");

  const watch = await collectWatch(kc, "/api/v1/namespaces/default/configmaps", {
    resourceVersion: "0",
  });
  await waitFor("the ADDED event over TLS", () => watch.events.length === 1);
  await endWatches(api, watch);
});

// ---------------------------------------------------------------------------
// 6. Injected 429/503

Deno.test("faults: injected 429 and 503 carry Retry-After and are counted", async () => {
  await using api = await startApiServer({ faults: { rate429: 1, retryAfterSeconds: 2 } });
  const url = `${api.url}/api/v1/namespaces/default/configmaps`;

  const r429 = await fetch(url);
  const s429 = await r429.json();
  assertEquals(r429.status, 429);
  assertEquals(r429.headers.get("retry-after"), "2");
  assertEquals([s429.kind, s429.reason, s429.code], ["Status", "TooManyRequests", 429]);
  assertEquals(s429.details?.retryAfterSeconds, 2);
  assertEquals(api.faultCounts.error429, 1);

  api.setFaults({ rate429: null, rate503: 1, retryAfterSeconds: 5 });
  const r503 = await fetch(url, { method: "POST", body: "{}" });
  const s503 = await r503.json();
  assertEquals(r503.status, 503);
  assertEquals(r503.headers.get("retry-after"), "5");
  assertEquals([s503.reason, s503.code], ["ServiceUnavailable", 503]);
  assertEquals(s503.details?.retryAfterSeconds, 5);
  assertEquals(api.faultCounts.error503, 1);

  // Client-node surfaces them as ApiExceptions with the code and the header.
  const core = kubeConfigOf(api).makeApiClient(k8s.CoreV1Api);
  try {
    await core.listNamespacedConfigMap({ namespace: "default" });
    throw new Error("expected a 503");
  } catch (e) {
    assert(e instanceof k8s.ApiException, `an ApiException, got ${e}`);
    assertEquals(e.code, 503);
    assertEquals(e.headers["retry-after"], "5");
  }
  assertEquals(api.faultCounts.error503, 2);
  assertEquals(api.countRequests({ code: 503 }), 2);
  assertEquals(api.countRequests({ code: 429 }), 1);

  // Writes-only scope: reads pass, writes fail.
  api.setFaults({ errorScope: "writes" });
  assertEquals((await fetch(url)).status, 200);
  const write = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ metadata: { name: "x" } }),
  });
  await write.body?.cancel();
  assertEquals(write.status, 503);

  // Off again: everything passes, and nothing more is counted.
  api.setFaults({ rate503: null });
  const ok = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ metadata: { name: "x" } }),
  });
  await ok.body?.cancel();
  assertEquals(ok.status, 201);
  assertEquals(api.faultCounts.error503, 3);
});
