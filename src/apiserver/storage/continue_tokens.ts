/**
 * The `continue` tokens of paged lists in kube-apiserver's own format
 * (unpadded URL-safe base64 of `{"v","rv","start"}`), written and read with
 * its refusals, so that a client may hand one from a real cluster's habits
 * and get the same 400s.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";

const TOKEN_VERSION = "meta.k8s.io/v1";

/**
 * A continue token as kube-apiserver writes it: unpadded URL-safe base64 of
 * `{"v":"meta.k8s.io/v1","rv":N,"start":"<key after the last item>"}`
 * (rv -1: continue at the latest resourceVersion).
 *
 * @param start The key to start from (the last key and a NUL).
 * @param rv The snapshot's resourceVersion, or -1.
 * @returns The token.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeContinue, encodeContinue } from "./continue_tokens.ts";
 * assert.deepEqual(decodeContinue(encodeContinue("default/a\u0000", 7)), { rv: 7, start: "default/a\u0000" });
 * ```
 */
export function encodeContinue(start: string, rv: number): string {
  const json = JSON.stringify({ v: TOKEN_VERSION, rv, start });
  const bytes = new TextEncoder().encode(json);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Reads a continue token, with kube-apiserver's refusals.
 *
 * @param token The token.
 * @returns Its resourceVersion and start key.
 * @throws {ApiError} 400 `invalid continue token: continue key is not valid…`.
 */
export function decodeContinue(token: string): { rv: number; start: string } {
  const invalid = (why: string) => ApiError.badRequest(`invalid continue token: ${why}`);
  let parsed: { v?: unknown; rv?: unknown; start?: unknown };
  try {
    if (!/^[A-Za-z0-9_-]*$/.test(token)) throw new Error("illegal base64 data");
    const binary = atob(token.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    if (typeof parsed !== "object" || parsed === null) throw new Error("not an object");
  } catch (e) {
    throw invalid(`continue key is not valid: ${(e as Error).message}`);
  }
  if (parsed.v !== TOKEN_VERSION) {
    throw invalid(
      `continue key is not valid: server does not recognize this encoded version ${
        String(parsed.v ?? "")
      }`,
    );
  }
  const rv = typeof parsed.rv === "number" && Number.isInteger(parsed.rv) ? parsed.rv : 0;
  if (rv === 0) {
    throw invalid(
      "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
    );
  }
  const start = typeof parsed.start === "string" ? parsed.start : "";
  if (!start) {
    throw invalid("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)");
  }
  // As path.Clean: a key that climbs out of the resource (../) or is not in canonical form.
  const path = start.startsWith("/") ? start : `/${start}`;
  if (/\/\.{1,2}(\/|$)|\/\/|.\/$/.test(path)) throw invalid(`continue key is not valid: ${start}`);
  return { rv, start: path.slice(1) };
}
