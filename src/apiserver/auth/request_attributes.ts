/**
 * What a request asks to do, in the terms authorization speaks: kube-apiserver's
 * `RequestInfo`. Read from the URL and method alone, before routing — so a
 * request for a resource that does not exist is refused (403) the same way as
 * one that does, as kube-apiserver refuses it, and the rules never depend on
 * what this server happens to serve.
 *
 * The rules of kube-apiserver's `RequestInfoFactory`:
 * - `/api/<v>/...` and `/apis/<g>/<v>/...` with a resource are resource requests;
 *   everything else (`/api`, `/api/v1`, `/apis/<g>/<v>`, `/healthz`, `/openapi/v2`)
 *   is a non-resource request whose verb is the lower-cased method (`get`, `post`).
 * - The verb: GET/HEAD → `get`, on a collection `list`, or `watch` with `?watch=true`;
 *   POST → `create`; PUT → `update`; PATCH → `patch`; DELETE → `delete`, on a
 *   collection `deletecollection`.
 * - `/namespaces/<ns>/<resource>/...` sets the namespace; `/namespaces/<ns>` itself is
 *   the resource `namespaces` named `<ns>` *in* the namespace `<ns>` (and so are its
 *   `status` and `finalize` subresources).
 * - A list or watch with `fieldSelector=metadata.name=<n>` is about the name `<n>`
 *   (so `resourceNames` rules can allow it, as `kubectl get cm x -w` needs).
 *
 * @module
 */

import { parseFieldSelector } from "../../cogs/structs/field_selector.ts";
import { queryBool } from "../wire/query_params.ts";

/** A request as authorization sees it. */
export interface RequestAttributes {
  /** True for `/api/<v>/<resource>…` and `/apis/<g>/<v>/<resource>…`. */
  resourceRequest: boolean;
  /** `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`; or the lower-cased method of a non-resource request. */
  verb: string;
  /** The URL path (what `nonResourceURLs` match). */
  path: string;
  /** The API group ("" for the core group). */
  apiGroup: string;
  /** The API version. */
  apiVersion: string;
  /** The namespace ("" when none). */
  namespace: string;
  /** The resource's plural, e.g. `pods`. */
  resource: string;
  /** The subresource, e.g. `status` ("" when none). */
  subresource: string;
  /** The object's name ("" when none). */
  name: string;
}

/** Subresources of a namespace, which are not resources inside it. */
const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

/**
 * Reads the authorization attributes of a request.
 *
 * @param method The HTTP method.
 * @param url The request URL.
 * @returns The attributes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { requestAttributes } from "./request_attributes.ts";
 * const a = requestAttributes("GET", new URL("http://x/api/v1/namespaces/default/pods?watch=true"));
 * assert.deepEqual([a.verb, a.resource, a.namespace], ["watch", "pods", "default"]);
 * const d = requestAttributes("GET", new URL("http://x/apis/apps/v1"));
 * assert.deepEqual([d.resourceRequest, d.verb, d.path], [false, "get", "/apis/apps/v1"]);
 * ```
 */
export function requestAttributes(method: string, url: URL): RequestAttributes {
  const attrs: RequestAttributes = {
    resourceRequest: false,
    verb: method.toLowerCase(),
    path: url.pathname,
    apiGroup: "",
    apiVersion: "",
    namespace: "",
    resource: "",
    subresource: "",
    name: "",
  };
  let parts = url.pathname.split("/").filter(Boolean).map(safeDecode);
  if (parts.length < 3 || (parts[0] !== "api" && parts[0] !== "apis")) return attrs;
  const grouped = parts[0] === "apis";
  parts = parts.slice(1);
  if (grouped) {
    if (parts.length < 3) return attrs;
    attrs.apiGroup = parts[0]!;
    parts = parts.slice(1);
  }
  attrs.resourceRequest = true;
  attrs.apiVersion = parts[0]!;
  parts = parts.slice(1);

  switch (method.toUpperCase()) {
    case "POST":
      attrs.verb = "create";
      break;
    case "GET":
    case "HEAD":
      attrs.verb = "get";
      break;
    case "PUT":
      attrs.verb = "update";
      break;
    case "PATCH":
      attrs.verb = "patch";
      break;
    case "DELETE":
      attrs.verb = "delete";
      break;
    default:
      attrs.verb = "";
  }

  if (parts[0] === "namespaces" && parts.length > 1) {
    attrs.namespace = parts[1]!;
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
  }
  attrs.resource = parts[0] ?? "";
  attrs.name = parts[1] ?? "";
  attrs.subresource = parts[2] ?? "";

  if (!attrs.name && attrs.verb === "get") {
    const watch = url.searchParams.get("watch");
    attrs.verb = watch !== null && queryBool(watch) ? "watch" : "list";
    attrs.name = exactName(url.searchParams.get("fieldSelector"));
  }
  if (!attrs.name && attrs.verb === "delete") attrs.verb = "deletecollection";
  return attrs;
}

/** The name a field selector pins (`metadata.name=x`), or "" when it pins none. */
function exactName(selector: string | null): string {
  if (!selector) return "";
  try {
    for (const req of parseFieldSelector(selector)) {
      if (req.field === "metadata.name" && req.operator === "=") {
        return req.value;
      }
    }
  } catch {
    // A bad selector is the handler's 400 to give; authorization sees no name.
  }
  return "";
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
