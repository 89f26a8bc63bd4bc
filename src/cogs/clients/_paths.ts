/**
 * The few file path operations that finding and reading kubeconfig files needs — join, directory,
 * absolute or not — with the host's separator (`\` and `/` on Windows, `/` elsewhere).
 *
 * Why not `node:path`: importing it brings Deno's Node `process` with it (≈1.4 MiB of an idle
 * operator's memory, measured with `node:async_hooks` beside it) for three one-line functions.
 *
 * @module
 */

/** Whether paths are Windows' (drive letters, `\` as well as `/`). */
const WINDOWS = Deno.build.os === "windows";

/** The host's path separator: `\` on Windows, `/` elsewhere. */
export const SEPARATOR: string = WINDOWS ? "\\" : "/";

/**
 * Whether a path is absolute: `/…` (and on Windows also `\…` and `C:\…` or `C:/…`).
 *
 * @param path The path.
 * @returns Whether it is absolute.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isAbsolutePath } from "./_paths.ts";
 * assert.equal(isAbsolutePath("/etc/ca.crt"), true);
 * assert.equal(isAbsolutePath("certs/ca.crt"), false);
 * ```
 */
export function isAbsolutePath(path: string): boolean {
  const rest = WINDOWS ? path.replace(/^[A-Za-z]:/, "") : path;
  return rest !== "" && isSeparator(rest[0]!);
}

/**
 * Joins path segments with the host's separator and normalises the result as `node:path`'s
 * `join()` does: empty and `.` segments dropped, `..` taking back the segment before it (above a
 * relative path's start it stays), separators collapsed, a trailing one kept.
 *
 * @param parts The segments; the first one decides whether the result is absolute.
 * @returns The joined path (`.` when nothing is left).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { joinPath } from "./_paths.ts";
 * if (Deno.build.os !== "windows") {
 *   assert.equal(joinPath("/home/u/.kube", "../certs/./ca.crt"), "/home/u/certs/ca.crt");
 *   assert.equal(joinPath("/home/u", ".kube", "config"), "/home/u/.kube/config");
 * }
 * ```
 */
export function joinPath(...parts: string[]): string {
  const joined = parts.filter((p) => p !== "").join("/");
  const drive = WINDOWS ? /^[A-Za-z]:/.exec(joined)?.[0] ?? "" : "";
  const rest = joined.slice(drive.length);
  const absolute = rest !== "" && isSeparator(rest[0]!);
  const out: string[] = [];
  for (const segment of rest.split(WINDOWS ? /[\\/]+/ : /\/+/)) {
    if (segment === "" || segment === ".") continue;
    if (segment === ".." && out.length && out.at(-1) !== "..") out.pop();
    else if (segment !== ".." || !absolute) out.push(segment);
  }
  const body = out.join(SEPARATOR);
  const path = drive + (absolute ? SEPARATOR + body : body || ".");
  const trailing = rest.length > 1 && isSeparator(rest.at(-1)!) && !path.endsWith(SEPARATOR);
  return trailing ? path + SEPARATOR : path;
}

/**
 * The directory of a path, as `node:path`'s `dirname()` gives it: everything before the separator
 * in front of the last name (trailing separators ignored), `/` for a file in the root, `.` for a
 * bare name.
 *
 * @param path The path.
 * @returns Its directory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { directoryOf } from "./_paths.ts";
 * if (Deno.build.os !== "windows") {
 *   assert.equal(directoryOf("/home/u/.kube/config"), "/home/u/.kube");
 *   assert.equal(directoryOf("/config"), "/");
 *   assert.equal(directoryOf("config"), ".");
 * }
 * ```
 */
export function directoryOf(path: string): string {
  const drive = WINDOWS ? /^[A-Za-z]:/.exec(path)?.[0] ?? "" : "";
  const rest = path.slice(drive.length);
  if (rest === "") return drive || ".";
  const rooted = isSeparator(rest[0]!);
  let end = -1;
  let inName = false;
  for (let i = rest.length - 1; i >= 1; i--) {
    if (!isSeparator(rest[i]!)) inName = true;
    else if (inName) {
      end = i;
      break;
    }
  }
  if (end === -1) return drive + (rooted ? rest[0]! : drive ? "" : ".");
  if (rooted && end === 1) return drive + rest.slice(0, 2);
  return drive + rest.slice(0, end);
}

/** Whether a character separates path segments here. */
function isSeparator(char: string): boolean {
  return char === "/" || WINDOWS && char === "\\";
}
