/**
 * Bodies as the operator keeps them in memory between cycles: without
 * `metadata.managedFields` and the `kubectl.kubernetes.io/last-applied-configuration`
 * annotation. Both are often the largest parts of an object (the server's
 * field ownership, and a second copy of the whole object as JSON), and no
 * framework code reads them; an operator of 10,000 objects with daemons would
 * otherwise hold them 10,000 times.
 *
 * Only kept bodies are trimmed (the live bodies of daemons and timers, the
 * parents of reconcilers); the handlers of a cycle get the body as the watch
 * brought it, whole. What a watcher remembers of every object it has seen, to
 * report the deletions it missed, is less still: a stub ({@link stubBody}). The body itself is never changed: a trimmed one is a
 * shallow copy with its own `metadata` (and `annotations`), sharing the rest.
 *
 * @module
 */

import { setOwn } from "./_json.ts";

/** The annotation `kubectl apply` keeps its last input in (as in configs/conventions.ts). */
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** A body with optional metadata, as far as trimming looks into it. */
type Trimmable = { metadata?: unknown } & Record<string, unknown>;

/**
 * The body without `metadata.managedFields` and the last-applied annotation — the body itself
 * if it has neither (no copy then).
 *
 * @param body The object.
 * @returns The trimmed object (a shallow copy), or the body itself.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { trimBody } from "./trimming.ts";
 * const body = {
 *   metadata: {
 *     name: "x",
 *     managedFields: [{ manager: "kubectl" }],
 *     annotations: { a: "1", "kubectl.kubernetes.io/last-applied-configuration": "{}" },
 *   },
 *   spec: { size: 1 },
 * };
 * assert.deepEqual(JSON.parse(JSON.stringify(trimBody(body))), {"metadata":{"name":"x","annotations":{"a":"1"}},"spec":{"size":1}});
 * assert.deepEqual(body.metadata.managedFields.length, 1);
 * const plain = { metadata: { name: "y" } };
 * assert.deepEqual(trimBody(plain) === plain, true);
 * ```
 */
export function trimBody<T extends Trimmable>(body: T): T {
  const meta = body.metadata as Record<string, unknown> | null | undefined;
  if (typeof meta !== "object" || meta === null) return body;
  const annotations = meta.annotations as Record<string, unknown> | null | undefined;
  const lastApplied = typeof annotations === "object" && annotations !== null &&
    Object.hasOwn(annotations, LAST_APPLIED);
  if (meta.managedFields === undefined && !lastApplied) return body;
  // Copied key by key, in their order (a kept body prints as the object does, less the two).
  const trimmed: Record<string, unknown> = {};
  for (const key of Object.keys(meta)) {
    if (key === "managedFields") continue;
    if (key === "annotations" && lastApplied) {
      const others: Record<string, unknown> = {};
      for (const name of Object.keys(annotations)) {
        if (name !== LAST_APPLIED) setOwn(others, name, annotations[name]);
      }
      trimmed.annotations = others;
    } else setOwn(trimmed, key, meta[key]);
  }
  return { ...body, metadata: trimmed };
}

/**
 * What a watcher keeps of an object between its events: `apiVersion`, `kind` and the trimmed
 * `metadata` ({@link trimBody}) — names, uid, resourceVersion, labels, annotations, finalizers,
 * owners —, not `spec`, `status` or `data`, which may be most of an object (a pod's status) and
 * which nothing reads once the object's events are processed. Shares what it keeps with the body.
 *
 * @param body The object.
 * @returns The stub: a new object with at most those three keys (the metadata the body's own,
 *   unless trimming copied it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stubBody } from "./trimming.ts";
 * const pod = {
 *   apiVersion: "v1",
 *   kind: "Pod",
 *   metadata: { name: "p", uid: "1", managedFields: [{ manager: "kubelet" }] },
 *   spec: { containers: [] },
 *   status: { phase: "Running" },
 * };
 * assert.deepEqual(JSON.parse(JSON.stringify(stubBody(pod))), {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","uid":"1"}});
 * ```
 */
export function stubBody<T extends Trimmable>(
  body: T,
): Pick<T, "apiVersion" | "kind" | "metadata"> {
  const stub: Trimmable = {};
  if (body.apiVersion !== undefined) stub.apiVersion = body.apiVersion;
  if (body.kind !== undefined) stub.kind = body.kind;
  if (body.metadata !== undefined) stub.metadata = trimBody(body).metadata;
  return stub as Pick<T, "apiVersion" | "kind" | "metadata">;
}
