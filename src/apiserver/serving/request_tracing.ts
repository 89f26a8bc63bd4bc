/**
 * The embedded API server's part in a trace, as kube-apiserver's with its tracing on: a server
 * span per request (`<METHOD> <route>`, e.g. `POST /apis/kopf.dev/v1/namespaces/{namespace}/kopfexamples`),
 * continuing the request's `traceparent`, with the HTTP semantic conventions' attributes and the
 * answer's status; the admission and conversion webhooks the request calls out to are called
 * inside it, so they carry its trace on (the `fetch` of the webhook client sends `traceparent`
 * itself; the `node:https` call of webhook_tls.ts is given it).
 *
 * Watches have no span: they last as long as their client keeps them, and belong to no one
 * request's work.
 *
 * server.ts calls {@link traceRequest} only when tracing is on (`OTEL_DENO=true` for the
 * server's process): with it off, nothing here runs.
 *
 * @module
 */

import { httpServerAttributes } from "../../cogs/tracing/attributes.ts";
import {
  endSpan,
  extractTraceContext,
  inSpan,
  SpanKinds,
  startSpan,
} from "../../cogs/tracing/tracing.ts";

/** Requests already in their span (the handler is called again inside it). */
const traced = new WeakSet<Request>();

/**
 * Serves a request in a server span: undefined when it is already in one (the call from inside
 * the span) or is a watch, and the caller serves it as usual.
 *
 * @param req The request.
 * @param url Its URL.
 * @param handle Serves it (called again, inside the span).
 * @returns The answer, or undefined.
 */
export function traceRequest(
  req: Request,
  url: URL,
  handle: (req: Request) => Promise<Response>,
): Promise<Response> | undefined {
  if (traced.has(req)) return undefined;
  const watch = url.searchParams.get("watch");
  if (watch === "true" || watch === "1") return undefined;
  traced.add(req);
  const parent = extractTraceContext((name) => req.headers.get(name));
  const attributes = httpServerAttributes(
    req.method,
    url.pathname + url.search,
    url.protocol.replace(":", ""),
    req.headers.get("user-agent"),
  );
  attributes["http.route"] = kubeRoute(url.pathname);
  const span = startSpan(`${req.method} ${attributes["http.route"]}`, attributes, {
    kind: SpanKinds.SERVER,
    ...(parent ? { parent } : { root: true }),
  });
  return inSpan(span, handle, req).then((res) => {
    span?.setAttribute("http.response.status_code", res.status);
    if (res.status >= 500) {
      span?.setAttribute("error.type", String(res.status));
      span?.setStatus({ code: 2 });
    }
    endSpan(span);
    return res;
  }, (error) => {
    endSpan(span, error);
    throw error;
  });
}

/**
 * A request path as a route of few values: the namespace and the object's name become
 * `{namespace}` and `{name}`.
 *
 * @param path The request's path.
 * @returns The route.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { kubeRoute } from "./request_tracing.ts";
 * assert.equal(kubeRoute("/apis/kopf.dev/v1/namespaces/ns1/kopfexamples/x/status"), "/apis/kopf.dev/v1/namespaces/{namespace}/kopfexamples/{name}/status");
 * assert.equal(kubeRoute("/api/v1/namespaces/ns1"), "/api/v1/namespaces/{name}");
 * assert.equal(kubeRoute("/api/v1/nodes/n1"), "/api/v1/nodes/{name}");
 * assert.equal(kubeRoute("/apis/apps/v1/deployments"), "/apis/apps/v1/deployments");
 * assert.equal(kubeRoute("/openapi/v2"), "/openapi/v2");
 * ```
 */
export function kubeRoute(path: string): string {
  const parts = path.split("/");
  // ["", "api", "v1", …] or ["", "apis", group, version, …]
  const at = parts[1] === "api" ? 3 : parts[1] === "apis" && parts.length > 3 ? 4 : -1;
  if (at < 0) return path;
  const out = parts.slice(0, at);
  let i = at;
  if (parts[i] === "namespaces" && parts.length > i + 2) {
    out.push("namespaces", "{namespace}");
    i += 2;
  }
  if (i < parts.length) out.push(parts[i]!); // the resource
  if (i + 1 < parts.length) out.push("{name}");
  out.push(...parts.slice(i + 2)); // the subresource
  return out.join("/");
}
