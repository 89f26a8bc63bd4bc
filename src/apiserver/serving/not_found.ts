/**
 * The two 404s of kube-apiserver. A path that no handler claims falls through its chain of
 * servers (aggregator → apiextensions → kube-apiserver) to the last one, which answers as Go's
 * `http.NotFound` does: plain text, `404 page not found`. A path under an API prefix that
 * kube-apiserver's REST container owns (`/api/…`, `/apis/<built-in group>/…`) but matches no
 * route gets the container's JSON Status instead (`the server could not find the requested
 * resource`, empty details). Custom resources are served outside that container: an unknown
 * plural, version or scope under a CRD's group is the plain-text 404, an unknown subresource of
 * a served one a NotFound naming the object.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import { builtinResources } from "../builtins/builtins.ts";

let builtinGroups: Set<string> | undefined;

/**
 * Whether kube-apiserver's REST container owns the paths under `/apis/<group>` (the group has
 * built-in resources), so that an unmatched path there gets a JSON Status, not plain text.
 *
 * @param group The API group ("" for the core group, always owned: `/api`).
 * @returns True for the core group and the built-in groups.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ownedByRestContainer } from "./not_found.ts";
 * assert.equal(ownedByRestContainer("apps"), true);
 * assert.equal(ownedByRestContainer("kopf.dev"), false);
 * ```
 */
export function ownedByRestContainer(group: string): boolean {
  builtinGroups ??= new Set(builtinResources().map((d) => d.group));
  return group === "" || builtinGroups.has(group);
}

/**
 * Go's `http.NotFound`: `404 page not found` and a newline, as plain text with `nosniff`.
 *
 * @returns The response.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pageNotFound } from "./not_found.ts";
 * const res = pageNotFound();
 * assert.equal(res.status, 404);
 * assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
 * assert.equal(await res.text(), "404 page not found\n");
 * ```
 */
export function pageNotFound(): Response {
  return new Response("404 page not found\n", {
    status: 404,
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "x-content-type-options": "nosniff",
    },
  });
}

/**
 * The REST container's 404 for a path it owns but has no route for.
 *
 * @returns The error (a Status with empty details).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { noRoute } from "./not_found.ts";
 * assert.equal(noRoute().toStatus().message, "the server could not find the requested resource");
 * ```
 */
export function noRoute(): ApiError {
  return new ApiError(404, "NotFound", "the server could not find the requested resource", {});
}

/**
 * The 404 of a path under `/api` or `/apis/<group>` that serves nothing: JSON where the REST
 * container owns the group, plain text elsewhere.
 *
 * @param group The API group of the path.
 * @returns A response to return, or throws the JSON error.
 * @throws {ApiError} 404 for a group the REST container owns.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unservedPath } from "./not_found.ts";
 * assert.equal(unservedPath("kopf.dev").status, 404);
 * assert.throws(() => unservedPath("apps"), { code: 404 });
 * ```
 */
export function unservedPath(group: string): Response {
  if (ownedByRestContainer(group)) throw noRoute();
  return pageNotFound();
}
