/**
 * The limits kube-apiserver holds every request to, checked before anything
 * is decoded: a body is read only up to 3 MiB (413 past it), and JSON is
 * scanned for its nesting depth before `JSON.parse` builds anything from it.
 *
 * Why before: a body that is merely large costs memory while it is read, and
 * an object nested 100,000 levels deep parses fine in V8 but breaks every
 * recursive walk after it (the watch fan-out's `JSON.stringify`, merges,
 * deep copies) — once stored, it breaks reads of the whole resource for
 * everyone. The scan is one `charCodeAt` pass over the text; GET carries no
 * body and costs nothing.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import { depthAndMembers } from "./json_duplicates.ts";

/** kube-apiserver's `MaxRequestBodyBytes`: 3 MiB. */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/**
 * The nesting depth of objects and arrays accepted in a body and in a stored object: 1,000.
 * kube-apiserver's JSON decoding stops at 10,000 (Go's `maxNestingDepth`, "exceeded max
 * depth"), but V8's stack does not carry the server's recursive walks (strategic merge,
 * server-side apply, deep copies) that far: they overflow near 3,000. A real object rarely
 * nests 30 deep.
 */
export const MAX_JSON_DEPTH = 1_000;

/**
 * The 413 of a request body over the limit, worded as kube-apiserver words it.
 *
 * @param limit The limit in bytes.
 * @returns The error.
 */
export function requestTooLarge(limit: number): ApiError {
  return new ApiError(
    413,
    "RequestEntityTooLarge",
    `Request entity too large: limit is ${limit}`,
  );
}

/**
 * Reads a request's body, refusing it (413) once it is over `limit` bytes: a
 * `Content-Length` over the limit before reading anything, a chunked body as
 * soon as the bytes counted pass it (the rest is never read).
 *
 * @param req The request.
 * @param limit The limit in bytes (default 3 MiB, kube-apiserver's).
 * @returns The body's bytes (empty when there is none).
 * @throws {ApiError} 413 RequestEntityTooLarge over the limit; 400 on a malformed Content-Length.
 *
 * @example
 * ```ts
 * import { readBodyLimited } from "./request_limits.ts";
 * const ok = await readBodyLimited(new Request("http://x/", { method: "POST", body: "{}" }), 10);
 * if (ok.length !== 2) throw new Error("expected the 2 bytes of the body");
 * const big = new Request("http://x/", { method: "POST", body: "x".repeat(11) });
 * const code = await readBodyLimited(big, 10).then(() => 0, (e) => e.code);
 * if (code !== 413) throw new Error(`expected 413, got ${code}`);
 * ```
 */
export async function readBodyLimited(
  req: Request,
  limit = MAX_REQUEST_BODY_BYTES,
): Promise<Uint8Array<ArrayBuffer>> {
  const declared = req.headers.get("content-length");
  if (declared !== null) {
    if (!/^\d+$/.test(declared.trim())) {
      throw ApiError.badRequest(`the Content-Length header is not a number: ${declared}`);
    }
    if (Number(declared) > limit) {
      await req.body?.cancel().catch(() => {});
      throw requestTooLarge(limit);
    }
  }
  // A declared length within the limit (the listener frames the body by it: no more can come), or
  // a body given whole (not chunked; in-process requests): read at once, natively. Touching
  // `req.body` or a reader loop costs several times as much per request.
  if (declared !== null || !req.headers.has("transfer-encoding")) {
    const bytes = await req.bytes(); // not arrayBuffer(): that copies the bytes once more
    if (bytes.length > limit) throw requestTooLarge(limit);
    return bytes;
  }
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw requestTooLarge(limit);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array<ArrayBuffer>;
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.length;
  }
  return body;
}

/**
 * The deepest nesting of objects and arrays in JSON text, stopping as soon as
 * it passes `max` (strings, escapes included, are skipped; the text need not
 * be valid JSON — the parser judges that afterwards).
 *
 * @param text The JSON text.
 * @param max Where to stop counting.
 * @returns The depth reached, at most `max + 1`.
 *
 * @example
 * ```ts
 * import { jsonDepth } from "./request_limits.ts";
 * if (jsonDepth('{"a":[{"b":"[[[["}]}', 100) !== 3) throw new Error("expected depth 3");
 * if (jsonDepth("[".repeat(50), 10) !== 11) throw new Error("expected to stop at 11");
 * ```
 */
export function jsonDepth(text: string, max = MAX_JSON_DEPTH): number {
  return depthAndMembers(text, max).depth; // one scanner for both (json_duplicates.ts)
}

/**
 * Whether JSON text nests deeper than `max`, as {@link jsonDepth} finds; text with no more than
 * `max` opening brackets in all (in strings too) cannot, and is not scanned further (a fast
 * native search for each bracket, where most objects stored end).
 *
 * @param text The JSON text.
 * @param max The depth limit.
 * @returns True when deeper.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nestsDeeperThan } from "./request_limits.ts";
 * assert.equal(nestsDeeperThan('{"a":[{"b":"[[[["}]}', 3), false);
 * assert.equal(nestsDeeperThan("[".repeat(50), 10), true);
 * assert.equal(nestsDeeperThan('{"a":"' + "[".repeat(50) + '"}', 10), false);
 * ```
 */
export function nestsDeeperThan(text: string, max = MAX_JSON_DEPTH): boolean {
  let openers = 0;
  for (const bracket of OPENERS) {
    for (let i = text.indexOf(bracket); i >= 0; i = text.indexOf(bracket, i + 1)) {
      if (++openers > max) return jsonDepth(text, max) > max;
    }
  }
  return false;
}

const OPENERS = ["{", "["];

/**
 * Parses a JSON request body after holding it to {@link MAX_JSON_DEPTH}.
 *
 * @param text The body.
 * @param max The depth limit.
 * @returns The parsed value.
 * @throws {ApiError} 400 BadRequest when too deep or not JSON.
 *
 * @example
 * ```ts
 * import { parseJsonBody } from "./request_limits.ts";
 * const code = (() => {
 *   try {
 *     parseJsonBody('{"a":' + "[".repeat(20) + "]".repeat(20) + "}", 10);
 *     return 0;
 *   } catch (e) {
 *     return (e as { code: number }).code;
 *   }
 * })();
 * if (code !== 400) throw new Error(`expected 400, got ${code}`);
 * ```
 */
export function parseJsonBody(text: string, max = MAX_JSON_DEPTH): unknown {
  if (jsonDepth(text, max) > max) throw tooDeep(max);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw ApiError.badRequest(`the body is not valid JSON: ${(e as Error).message}`);
  }
}

/**
 * Holds a value decoded from YAML or protobuf to the nesting limit, and YAML's
 * aliases to the size of the text (an alias is a reference: a few lines of
 * them can stand for billions of nodes once the object is written out).
 *
 * @param value The decoded value.
 * @param size The length of the text it was decoded from.
 * @param max The depth limit.
 * @returns The value.
 * @throws {ApiError} 400 when too deep, or when it expands to more nodes than its text has characters.
 *
 * @example
 * ```ts
 * import { checkDecoded } from "./request_limits.ts";
 * let bomb: unknown = "lol"; // what `&a [*b, *b, *b, *b]` ten times over makes
 * for (let i = 0; i < 10; i++) bomb = [bomb, bomb, bomb, bomb];
 * const code = (() => {
 *   try {
 *     checkDecoded(bomb, 20);
 *     return 0;
 *   } catch (e) {
 *     return (e as { code: number }).code;
 *   }
 * })();
 * if (code !== 400) throw new Error(`expected 400, got ${code}`);
 * ```
 */
export function checkDecoded<T>(value: T, size: number, max = MAX_JSON_DEPTH): T {
  let budget = Math.max(size, 1000);
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (--budget < 0) {
      throw ApiError.badRequest(
        "yaml: document contains excessive aliasing: write the object out instead of " +
          "referring to anchors",
      );
    }
    if (v === null || typeof v !== "object") continue;
    if (d + 1 > max) throw tooDeep(max);
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return value;
}

/**
 * The 400 of a body (or the object a write makes) nested too deeply.
 *
 * @param max The limit.
 * @param what What is too deep.
 * @returns The error.
 */
export function tooDeep(max = MAX_JSON_DEPTH, what = "the request body"): ApiError {
  return ApiError.badRequest(
    `json: exceeded max depth: ${what} nests objects and arrays deeper than ${max} levels; ` +
      `flatten it`,
  );
}
