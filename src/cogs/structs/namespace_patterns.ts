/**
 * The namespace patterns of `-n` (`'ns-*'`, `'!kube-*'`, `'myapp-*,!*-pr-*'`, a
 * RegExp): whether a namespace is served, and which patterns are plain names
 * an operator can serve without listing namespaces.
 *
 * @module
 */

/** A namespace pattern of `-n`: comma-separated globs and `!negations`, or a RegExp. */
export type NamespacePattern = string | RegExp;

/**
 * Whether a namespace matches one pattern or any of several (as several `-n`
 * options do). One pattern is comma-separated globs (`*`, `?`, `[abc]`,
 * `[!abc]`); a glob starting with `!` excludes. If the first glob is a
 * negation, a leading `*` is implied. The first glob is decisive: a namespace
 * it does not match never matches; later inclusive globs only re-include
 * namespaces that a negation excluded. A RegExp must match the whole name.
 *
 * @param patterns One pattern or several; several match if any matches.
 * @param name The namespace name.
 * @returns True if the namespace is served.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { matchNamespace } from "./namespace_patterns.ts";
 *
 * assert.ok(matchNamespace("ns-*", "ns-1"));
 * assert.ok(!matchNamespace("!kube-*", "kube-system"));
 * assert.ok(matchNamespace(["a", "b"], "b"));
 * const p = "myapp-*,!*-pr-*,*-pr-123";
 * assert.deepEqual(
 *   ["myapp-live", "myapp-pr-456", "myapp-pr-123", "otherapp-pr-123"].map((n) => matchNamespace(p, n)),
 *   [true, false, true, false],
 * );
 * ```
 */
export function matchNamespace(
  patterns: NamespacePattern | Iterable<NamespacePattern>,
  name: string,
): boolean {
  const list = typeof patterns === "string" || patterns instanceof RegExp
    ? [patterns]
    : [...patterns];
  return list.some((pattern) => matchOne(pattern, name));
}

function matchOne(pattern: NamespacePattern, name: string): boolean {
  if (pattern instanceof RegExp) {
    const m = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, "")).exec(name);
    return m !== null && m.index === 0 && m[0].length === name.length;
  }
  const globs = pattern.split(",").map((g) => g.trim());
  if (!globs.length || globs[0]!.startsWith("!")) globs.unshift("*");
  const first = globToRegExp(globs[0]!).test(name);
  let matches = first;
  for (const glob of globs.slice(1)) {
    if (glob.startsWith("!")) {
      matches = matches && !globToRegExp(glob.replace(/^!+/, "")).test(name);
    } else {
      matches = matches || (first && globToRegExp(glob).test(name));
    }
  }
  return matches;
}

/**
 * The patterns that are plain namespace names (no globs, negations, commas,
 * or regexps): what an operator can still serve "as is" when it may not
 * list namespaces.
 *
 * @param patterns The `-n` patterns.
 * @returns The plain names among them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { selectSpecificNamespaces } from "./namespace_patterns.ts";
 * assert.deepEqual(selectSpecificNamespaces(["ns1", "ns-*", "!x", /re/]), ["ns1"]);
 * ```
 */
export function selectSpecificNamespaces(patterns: Iterable<NamespacePattern>): string[] {
  const out = new Set<string>();
  for (const p of patterns) {
    if (typeof p === "string" && !/[!*?,[]/.test(p)) out.add(p);
  }
  return [...out];
}

// fnmatch-style glob → anchored RegExp: * ? [seq] [!seq]; everything else literal.
function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") re += ".*";
    else if (c === "?") re += ".";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end < 0) {
        re += "\\[";
        continue;
      }
      let body = glob.slice(i + 1, end);
      if (body.startsWith("!")) body = "^" + body.slice(1);
      else if (body.startsWith("^")) body = "\\" + body;
      re += `[${body.replace(/\\/g, "\\\\")}]`;
      i = end;
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "s");
}
