/**
 * Shared set-up of the reactor tests: an embedded API server with the
 * example CRD (plus a cluster-scoped one when asked), raw HTTP helpers to
 * create and delete objects without kubectl, and a bounded `until()`.
 *
 * @module
 */

import {
  type RunningApiServer,
  startApiServer,
  type StartApiServerOptions,
} from "../../testing.ts";

/** The repository root (with a trailing slash). */
export const ROOT = new URL("../../", import.meta.url).pathname;

/** A namespaced CRD: kopfexamples.kopf.dev (short name "kex", category "kopf-tests"). */
export const KEX_CRD = crd({
  group: "kopf.dev",
  plural: "kopfexamples",
  kind: "KopfExample",
  scope: "Namespaced",
  shortNames: ["kex"],
  categories: ["kopf-tests"],
});

/** A cluster-scoped CRD: kopfclusterexamples.kopf.dev. */
export const CLUSTER_CRD = crd({
  group: "kopf.dev",
  plural: "kopfclusterexamples",
  kind: "KopfClusterExample",
  scope: "Cluster",
  shortNames: ["kcx"],
  categories: [],
});

/**
 * A CRD manifest with one served version (v1) and a status subresource.
 *
 * @param o Names and scope.
 * @returns The manifest.
 */
export function crd(o: {
  group: string;
  plural: string;
  kind: string;
  scope: "Namespaced" | "Cluster";
  shortNames?: string[];
  categories?: string[];
  version?: string;
}): Record<string, unknown> {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${o.plural}.${o.group}` },
    spec: {
      group: o.group,
      scope: o.scope,
      names: {
        kind: o.kind,
        plural: o.plural,
        singular: o.kind.toLowerCase(),
        shortNames: o.shortNames ?? [],
        categories: o.categories ?? [],
      },
      versions: [{
        name: o.version ?? "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
              status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            },
          },
        },
      }],
    },
  };
}

/** The parsed answer of one request. */
export interface Answer {
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/**
 * Sends one request to the server (with its token, if any); throws on an error status.
 *
 * @param api The server.
 * @param method The method.
 * @param path The path (and query).
 * @param body A JSON body.
 * @param options The token; which error statuses are fine; the content type.
 * @returns Status and parsed body.
 */
export async function call(
  api: RunningApiServer,
  method: string,
  path: string,
  body?: unknown,
  options: { token?: string; ok?: number[]; contentType?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : undefined;
  if (res.status >= 400 && !(options.ok ?? []).includes(res.status)) {
    throw new Error(`${method} ${path} -> ${res.status}: ${text}`);
  }
  return { status: res.status, body: parsed };
}

/** The cluster of a test: the server and helpers bound to it. */
export interface Cluster extends AsyncDisposable {
  api: RunningApiServer;
  /** Lines the server logged, one per request (with `requestLog: true`). */
  requests: string[];
  /** Sends a request (throws on error statuses). */
  call(method: string, path: string, body?: unknown, ok?: number[]): Promise<Answer>;
  /** Creates a CRD and waits until discovery serves it. */
  createCrd(manifest: Record<string, unknown>): Promise<void>;
  /** Creates a namespace. */
  createNamespace(name: string): Promise<void>;
  /** Creates a KopfExample. */
  createKex(namespace: string, name: string, extra?: Record<string, unknown>): Promise<Answer>;
  /** Reads a KopfExample (undefined when absent). */
  // deno-lint-ignore no-explicit-any
  getKex(namespace: string, name: string): Promise<any>;
}

/**
 * Starts an API server with kopfexamples (and, if asked, the cluster-scoped CRD).
 *
 * @param options Server options (the faults switched on after the CRDs are served), plus
 *   `clusterCrd` and `requestLog`.
 * @returns The cluster; dispose it with `await using`.
 */
export async function cluster(
  options: StartApiServerOptions & { clusterCrd?: boolean; requestLog?: boolean } = {},
): Promise<Cluster> {
  // The faults are switched on once the CRDs are served: the set-up's own requests are not the
  // test (a 429 injected into the CRD's creation failed a run).
  const { clusterCrd, requestLog, faults, ...rest } = options;
  const requests: string[] = [];
  const api = await startApiServer({
    ...rest,
    ...(requestLog ? { verbose: true, log: (line: string) => requests.push(line) } : {}),
  });
  const token = rest.token;
  const c: Cluster = {
    api,
    requests,
    call: (method, path, body, ok) =>
      call(api, method, path, body, { ...(token ? { token } : {}), ...(ok ? { ok } : {}) }),
    async createCrd(manifest) {
      await c.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", manifest);
      const spec = manifest.spec as { group: string; names: { plural: string } };
      await until(async () => {
        const r = await c.call("GET", `/apis/${spec.group}/v1`, undefined, [404]);
        return r.status === 200 &&
          // deno-lint-ignore no-explicit-any
          r.body.resources.some((x: any) => x.name === spec.names.plural);
      }, `discovery of ${spec.names.plural}`);
    },
    async createNamespace(name) {
      await c.call("POST", "/api/v1/namespaces", { metadata: { name } });
    },
    createKex(namespace, name, extra = {}) {
      return c.call("POST", `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`, {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: { name },
        spec: { field: "value" },
        ...extra,
      });
    },
    async getKex(namespace, name) {
      const r = await c.call(
        "GET",
        `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples/${name}`,
        undefined,
        [404],
      );
      return r.status === 404 ? undefined : r.body;
    },
    async [Symbol.asyncDispose]() {
      await api.stop();
    },
  };
  await c.createCrd(KEX_CRD);
  if (clusterCrd) await c.createCrd(CLUSTER_CRD);
  if (faults) api.setFaults(faults);
  return c;
}

/**
 * Waits until a condition holds, polling every 20 ms; fails after the timeout.
 *
 * @param condition The condition (sync or async).
 * @param what What is awaited (for the error).
 * @param timeoutSeconds The bound (default 10 s).
 * @returns When it holds.
 * @throws {Error} On timeout.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutSeconds = 10,
): Promise<void> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutSeconds}s: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Sleeps.
 *
 * @param ms Milliseconds.
 * @returns After the delay.
 */
/**
 * Starts `kopf run --standalone <file>` as a process of its own against a cluster's kubeconfig
 * (stdout piped; stderr piped or dropped).
 */
export function spawnKopfRun(
  file: string,
  kubeconfig: string,
  stderr: "piped" | "null" = "piped",
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}cli.ts`, "run", "-A", "--standalone", file],
    env: { KUBECONFIG: kubeconfig, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr,
  }).spawn();
}

export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
