/**
 * The attributes of our spans, by name: OpenTelemetry's semantic conventions where they have
 * one (HTTP client and server, `k8s.namespace.name`, `error.type`), and the documented `kopf.*`
 * set where they do not (docs/tracing.md lists both).
 *
 * Why pure functions of plain values: the call sites build attributes only when tracing is on,
 * and these builders are tested without a tracer (tests/tracing/attributes_test.ts).
 *
 * @module
 */

import type { Attributes } from "./tracing.ts";

/** The resource of an object, as spans name it (group, version, plural). */
export interface ResourceNames {
  /** The API group ("" for the core group). */
  readonly group: string;
  /** The version. */
  readonly version: string;
  /** The plural name. */
  readonly plural: string;
}

/** The metadata of an object that its spans carry. */
export interface ObjectMeta {
  /** The namespace (absent: cluster-scoped). */
  namespace?: string | undefined;
  /** The name. */
  name?: string | undefined;
  /** The uid. */
  uid?: string | undefined;
  /** The resourceVersion. */
  resourceVersion?: string | undefined;
}

/**
 * A resource as spans name it: `plural.group/version`, or `plural/version` in the core group.
 *
 * @param resource The resource.
 * @returns The name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resourceName } from "./attributes.ts";
 * assert.equal(resourceName({ group: "kopf.dev", version: "v1", plural: "kopfexamples" }), "kopfexamples.kopf.dev/v1");
 * assert.equal(resourceName({ group: "", version: "v1", plural: "pods" }), "pods/v1");
 * ```
 */
export function resourceName(resource: ResourceNames): string {
  return `${resource.plural}${resource.group ? `.${resource.group}` : ""}/${resource.version}`;
}

/**
 * The attributes of an object's span: `kopf.resource`, `k8s.namespace.name`,
 * `kopf.object.name`, `kopf.object.uid`, `kopf.object.resource_version` (the absent ones left
 * out).
 *
 * @param resource The object's resource.
 * @param meta Its metadata.
 * @returns The attributes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { objectAttributes } from "./attributes.ts";
 * const r = { group: "kopf.dev", version: "v1", plural: "kopfexamples" };
 * assert.deepEqual(objectAttributes(r, { namespace: "ns", name: "x", uid: "u1", resourceVersion: "7" }), {
 *   "kopf.resource": "kopfexamples.kopf.dev/v1",
 *   "k8s.namespace.name": "ns",
 *   "kopf.object.name": "x",
 *   "kopf.object.uid": "u1",
 *   "kopf.object.resource_version": "7",
 * });
 * ```
 */
export function objectAttributes(
  resource: ResourceNames,
  meta: ObjectMeta | undefined,
): Attributes {
  const out: Attributes = { "kopf.resource": resourceName(resource) };
  if (meta?.namespace) out["k8s.namespace.name"] = meta.namespace;
  if (meta?.name) out["kopf.object.name"] = meta.name;
  if (meta?.uid) out["kopf.object.uid"] = meta.uid;
  if (meta?.resourceVersion) out["kopf.object.resource_version"] = meta.resourceVersion;
  return out;
}

/** What became of a handler run, as `kopf.handler.outcome` says it. */
export type HandlerOutcomeName =
  | "success"
  | "temporary"
  | "permanent"
  | "ignored"
  | "delayed";

/**
 * The outcome of a handler run by name: `success`; `temporary` (an error, to be retried after a
 * delay); `permanent` (an error, for good); `ignored` (an error the errors mode ignores);
 * `delayed` (no error, but unfinished: sub-handlers to come back to).
 *
 * @param outcome The run's outcome: whether it is final, its error, whether an error was caught.
 * @returns The name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { outcomeName } from "./attributes.ts";
 * assert.equal(outcomeName({ final: true }, false), "success");
 * assert.equal(outcomeName({ final: false, error: new Error("x"), delay: 5 }, true), "temporary");
 * assert.equal(outcomeName({ final: true, error: new Error("x") }, true), "permanent");
 * assert.equal(outcomeName({ final: true }, true), "ignored");
 * assert.equal(outcomeName({ final: false, delay: 1 }, false), "delayed");
 * ```
 */
export function outcomeName(
  outcome: { final: boolean; error?: unknown; delay?: number | undefined },
  caught: boolean,
): HandlerOutcomeName {
  if (outcome.error !== undefined) return outcome.final ? "permanent" : "temporary";
  if (!outcome.final) return "delayed";
  return caught ? "ignored" : "success";
}

/**
 * The attributes of an HTTP client span (semantic conventions): `http.request.method`,
 * `url.full`, `server.address`, `server.port`.
 *
 * @param method The method.
 * @param url The full URL.
 * @returns The attributes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { httpClientAttributes } from "./attributes.ts";
 * assert.deepEqual(httpClientAttributes("PATCH", "https://k8s:6443/api/v1/namespaces/a/pods/b"), {
 *   "http.request.method": "PATCH",
 *   "url.full": "https://k8s:6443/api/v1/namespaces/a/pods/b",
 *   "server.address": "k8s",
 *   "server.port": 6443,
 * });
 * assert.equal(httpClientAttributes("GET", "http://127.0.0.1/api")["server.port"], 80);
 * ```
 */
export function httpClientAttributes(method: string, url: string): Attributes {
  const out: Attributes = { "http.request.method": method, "url.full": url };
  const m = /^(https?):\/\/(\[[^\]]*\]|[^/:?#]*)(?::(\d+))?/.exec(url);
  if (m) {
    out["server.address"] = m[2]!.replace(/^\[(.*)\]$/, "$1");
    out["server.port"] = m[3] ? Number(m[3]) : m[1] === "https" ? 443 : 80;
  }
  return out;
}

/**
 * The attributes of an HTTP server span (semantic conventions): `http.request.method`,
 * `url.path`, `url.query` (when there is one), `url.scheme`, `user_agent.original` (when sent).
 *
 * @param method The method.
 * @param target The request target (path and query).
 * @param scheme `http` or `https`.
 * @param userAgent The User-Agent header, if any.
 * @returns The attributes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { httpServerAttributes } from "./attributes.ts";
 * assert.deepEqual(httpServerAttributes("POST", "/api/v1/pods?dryRun=All", "https", "kubectl/v1.31"), {
 *   "http.request.method": "POST",
 *   "url.path": "/api/v1/pods",
 *   "url.query": "dryRun=All",
 *   "url.scheme": "https",
 *   "user_agent.original": "kubectl/v1.31",
 * });
 * ```
 */
export function httpServerAttributes(
  method: string,
  target: string,
  scheme: string,
  userAgent?: string | null,
): Attributes {
  const q = target.indexOf("?");
  const out: Attributes = {
    "http.request.method": method,
    "url.path": q < 0 ? target : target.slice(0, q),
  };
  if (q >= 0 && q < target.length - 1) out["url.query"] = target.slice(q + 1);
  out["url.scheme"] = scheme;
  if (userAgent) out["user_agent.original"] = userAgent;
  return out;
}
