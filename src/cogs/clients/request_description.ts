/**
 * The Kubernetes verb and resource of a request, as the API server's audit and metrics name
 * them ({@link describeRequest}), for the API client's per-attempt records.
 *
 * @module
 */

/**
 * The Kubernetes verb and resource of a request, as the API server's audit
 * and metrics name them.
 *
 * @param method The HTTP method.
 * @param path The path (no query).
 * @param watch Whether it is a watch (`?watch=true`).
 * @returns The verb, `plural[.group]`, and the subresource (frozen: shared by the same kind of
 *   requests).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeRequest } from "./api.ts";
 * assert.deepEqual(describeRequest("PATCH", "/apis/kopf.dev/v1/namespaces/ns/kopfexamples/kex1/status"), { verb: "patch", resource: "kopfexamples.kopf.dev", subresource: "status" });
 * ```
 */
export function describeRequest(
  method: string,
  path: string,
  watch = false,
): { verb: string; resource: string; subresource: string | undefined } {
  // The first 8 non-empty segments of the path (no more are looked at), as offsets.
  const query = path.indexOf("?");
  const stop = query < 0 ? path.length : query;
  let count = 0;
  for (let from = 0; from < stop;) {
    let to = path.indexOf("/", from);
    if (to < 0 || to > stop) to = stop;
    if (to > from) {
      if (count < 8) {
        SEGMENTS[2 * count] = from;
        SEGMENTS[2 * count + 1] = to;
      }
      count++;
    }
    from = to + 1;
  }
  let grouped = false;
  let at = count; // where the resource's part starts (none: at the end)
  if (segmentIs(path, count, 0, "api") && count >= 3) at = 2;
  else if (segmentIs(path, count, 0, "apis") && count >= 4) {
    grouped = true;
    at = 3;
  }
  if (segmentIs(path, count, at, "namespaces") && count - at >= 3) at += 2;
  const named = at + 1 < count;
  // The same kind of request as a recent one (every object's patches, say): its description,
  // found by comparing the path's segments in place — no substring, no new object.
  for (let i = 0; i < RECENT.length; i++) {
    const r = RECENT[i]!;
    if (
      r.method === method && r.watch === watch && r.named === named &&
      (r.group === undefined ? !grouped : grouped && segmentIs(path, count, 1, r.group)) &&
      (r.plural === undefined ? at >= count : segmentIs(path, count, at, r.plural)) &&
      (r.sub === undefined ? at + 2 >= count : segmentIs(path, count, at + 2, r.sub))
    ) return r.description;
  }
  const group = grouped ? segment(path, count, 1)! : "";
  const plural = segment(path, count, at);
  const subresource = segment(path, count, at + 2);
  const resource = plural ? (group ? `${plural}.${group}` : plural) : "";
  const upper = method.toUpperCase();
  const verb = named ? ITEM_VERBS[upper] : watch && upper === "GET" ? "watch" : LIST_VERBS[upper];
  const description = Object.freeze({ verb: verb ?? method.toLowerCase(), resource, subresource });
  RECENT[next] = {
    method,
    watch,
    named,
    group: grouped ? group : undefined,
    plural,
    sub: subresource,
    description,
  };
  next = (next + 1) % RECENT_SIZE;
  return description;
}

/** A request's description, and what it was made from (see {@link describeRequest}). */
interface Described {
  method: string;
  watch: boolean;
  named: boolean;
  /** The API group's segment (`apis/<group>/…`); undefined for the core group. */
  group: string | undefined;
  plural: string | undefined;
  sub: string | undefined;
  description: Readonly<{ verb: string; resource: string; subresource: string | undefined }>;
}

/** How many recent descriptions are remembered (an operator makes a few kinds of requests). */
const RECENT_SIZE = 16;
/** The recent descriptions (a ring of {@link RECENT_SIZE}). */
const RECENT: Described[] = [];
/** Where the next description goes in {@link RECENT}. */
let next = 0;

/** Offsets of path segments in {@link describeRequest} (start and end of each; reused). */
const SEGMENTS = new Int32Array(16);

/** The i-th segment that {@link describeRequest} found, or undefined. */
function segment(path: string, count: number, i: number): string | undefined {
  return i < count ? path.slice(SEGMENTS[2 * i], SEGMENTS[2 * i + 1]) : undefined;
}

/** Whether the i-th segment that {@link describeRequest} found is `word`. */
function segmentIs(path: string, count: number, i: number, word: string): boolean {
  return i < count && SEGMENTS[2 * i + 1]! - SEGMENTS[2 * i]! === word.length &&
    path.startsWith(word, SEGMENTS[2 * i]);
}

const ITEM_VERBS: Record<string, string> = {
  GET: "get",
  HEAD: "get",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
  POST: "create",
};
const LIST_VERBS: Record<string, string> = {
  GET: "list",
  HEAD: "list",
  POST: "create",
  DELETE: "deletecollection",
};
