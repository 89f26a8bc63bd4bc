/**
 * `@kubernetes/client-node` (2.x) on the paths `client_node_test.ts` leaves out: a list paged
 * with `limit`/`_continue`, the typed API's patches in each content type (set per call with
 * `setHeaderOptions("Content-Type", …)`; its default is a JSON patch), and server-side apply
 * with and without `force`, through both the typed and the generic API.
 *
 * Why: each of these is a place where the client and the server must agree on more than
 * JSON — a continue token handed back verbatim, a list merged by its merge key only for a
 * strategic merge patch, an apply conflict that only `force=true` overrides.
 *
 * @module
 */

import * as k8s from "@kubernetes/client-node";
import { type RunningApiServer, startApiServer } from "../../testing.ts";

function assert(condition: unknown, message = "assertion failed"): asserts condition {
  if (!condition) throw new Error(message);
}

function assertEquals(actual: unknown, expected: unknown, message = ""): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${message ? `${message}: ` : ""}expected ${e}, got ${a}`);
}

function kubeConfigOf(api: RunningApiServer): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(api.kubeconfig.path);
  return kc;
}

/** Awaits a rejection with a client-node `ApiException` of this HTTP code; returns its Status. */
async function rejectsWithCode(
  promise: Promise<unknown>,
  code: number,
): Promise<{ reason?: string; message?: string }> {
  try {
    await promise;
  } catch (e) {
    assert(e instanceof k8s.ApiException, `expected an ApiException, got ${e}`);
    assertEquals(e.code, code, "HTTP code");
    return typeof e.body === "string" ? JSON.parse(e.body) : e.body;
  }
  throw new Error(`expected a rejection with HTTP ${code}, but the call succeeded`);
}

Deno.test("client-node: a list paged by limit/_continue returns every object once, in order", async () => {
  await using api = await startApiServer();
  const core = kubeConfigOf(api).makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: "paging" } } });
  for (let i = 0; i < 7; i++) {
    await core.createNamespacedConfigMap({
      namespace: "paging",
      body: { metadata: { name: `cm-${i}` } },
    });
  }
  const whole = await core.listNamespacedConfigMap({ namespace: "paging" });
  const all = whole.items.map((o) => o.metadata!.name!);
  assert(all.length >= 7, `at least the 7 made: ${all}`);

  const pages: string[][] = [];
  const remaining: (number | undefined)[] = [];
  let token: string | undefined;
  do {
    const page = await core.listNamespacedConfigMap({
      namespace: "paging",
      limit: 3,
      ...(token ? { _continue: token } : {}),
    });
    pages.push(page.items.map((o) => o.metadata!.name!));
    remaining.push(page.metadata?.remainingItemCount);
    token = page.metadata?._continue || undefined;
    assert(pages.length <= 10, "the paging ends");
  } while (token);

  assertEquals(pages.flat(), all, "the pages together are the whole list");
  assert(pages.slice(0, -1).every((p) => p.length === 3), `full pages but the last: ${pages}`);
  assertEquals(
    remaining,
    pages.map((_, i) => i === pages.length - 1 ? undefined : all.length - 3 * (i + 1)),
    "remainingItemCount on every page but the last",
  );
});

interface PatchRow {
  name: string;
  /** The Content-Type set on the call; none is the typed API's default (a JSON patch). */
  contentType?: string;
  body: unknown;
  /** The containers' names and the replicas after the patch. */
  expect: { containers: string[]; replicas: number };
}

const PATCHES: PatchRow[] = [
  {
    name: "the default (JSON patch)",
    body: [{ op: "replace", path: "/spec/replicas", value: 3 }],
    expect: { containers: ["a"], replicas: 3 },
  },
  {
    name: "a JSON patch, asked for",
    contentType: k8s.PatchStrategy.JsonPatch,
    body: [{
      op: "add",
      path: "/spec/template/spec/containers/-",
      value: { name: "b", image: "b" },
    }],
    expect: { containers: ["a", "b"], replicas: 1 },
  },
  {
    name: "a merge patch replaces the containers list",
    contentType: k8s.PatchStrategy.MergePatch,
    body: { spec: { template: { spec: { containers: [{ name: "b", image: "b" }] } } } },
    expect: { containers: ["b"], replicas: 1 },
  },
  {
    // New items go first: kube's mergeSortedSlice puts patch items it cannot place by the
    // server's order ahead of the server-only ones (no $setElementOrder was sent).
    name: "a strategic merge patch merges the containers by name",
    contentType: k8s.PatchStrategy.StrategicMergePatch,
    body: {
      spec: { replicas: 2, template: { spec: { containers: [{ name: "b", image: "b" }] } } },
    },
    expect: { containers: ["b", "a"], replicas: 2 },
  },
];

for (const row of PATCHES) {
  Deno.test(`client-node: patchNamespacedDeployment with ${row.name}`, async () => {
    await using api = await startApiServer();
    const apps = kubeConfigOf(api).makeApiClient(k8s.AppsV1Api);
    const labels = { app: "p" };
    await apps.createNamespacedDeployment({
      namespace: "default",
      body: {
        metadata: { name: "p" },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: { containers: [{ name: "a", image: "a" }] },
          },
        },
      },
    });
    const request = { namespace: "default", name: "p", body: row.body as object };
    const patched = row.contentType
      ? await apps.patchNamespacedDeployment(
        request,
        k8s.setHeaderOptions("Content-Type", row.contentType),
      )
      : await apps.patchNamespacedDeployment(request);
    assertEquals({
      containers: patched.spec?.template.spec?.containers.map((c) => c.name),
      replicas: patched.spec?.replicas,
    }, row.expect);
  });
}

Deno.test("client-node: server-side apply conflicts for a second manager; force takes the field over", async () => {
  await using api = await startApiServer();
  const kc = kubeConfigOf(api);
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const applied = (k: string) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "ssa", namespace: "default" },
    data: { k },
  });
  const SSA = k8s.PatchStrategy.ServerSideApply;

  // The generic API: create by apply.
  const first = await objects.patch<k8s.V1ConfigMap>(
    applied("a"),
    undefined,
    undefined,
    "one",
    undefined,
    SSA,
  );
  assertEquals(first.data, { k: "a" });

  // Another manager, the same field, a different value: 409 naming the owner.
  const conflict = await rejectsWithCode(
    objects.patch(applied("b"), undefined, undefined, "two", undefined, SSA),
    409,
  );
  assertEquals(conflict.reason, "Conflict");
  assertEquals(conflict.message, 'Apply failed with 1 conflict: conflict with "one": .data.k');

  // The typed API with force=true: the field changes hands.
  const forced = await core.patchNamespacedConfigMap(
    { namespace: "default", name: "ssa", body: applied("b"), fieldManager: "two", force: true },
    k8s.setHeaderOptions("Content-Type", SSA),
  );
  assertEquals(forced.data, { k: "b" });
  const owners = (forced.metadata?.managedFields ?? [])
    .filter((m) => JSON.stringify(m.fieldsV1 ?? {}).includes('"f:k"'))
    .map((m) => [m.manager, m.operation]);
  assertEquals(owners, [["two", "Apply"]]);
});
