/**
 * Checks the `-n/--namespace` patterns before the operator starts: a pattern
 * that cannot be a pattern (an unclosed `[`, a bare `!`, an empty glob, a
 * character no namespace name can hold) would otherwise match nothing and
 * leave the operator serving nothing, silently.
 *
 * A pattern is comma-separated globs (`*`, `?`, `[abc]`, `[!abc]`), each
 * optionally negated by one leading `!`; namespace names are lower-case DNS
 * labels (`a-z`, `0-9`, `-`).
 *
 * @module
 */

/**
 * Why a `-n` pattern cannot be a pattern, or undefined when it can.
 *
 * @param pattern The pattern as given.
 * @returns What is wrong and how to fix it (one line), or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { patternProblem } from "./_patterns.ts";
 * assert.deepEqual(patternProblem("myapp-*,!*-pr-*"), undefined);
 * assert.deepEqual(patternProblem("!"), "'!' excludes nothing: put a name or glob after it, e.g. '!kube-*'");
 * ```
 */
export function patternProblem(pattern: string): string | undefined {
  if (!pattern.trim()) return "it is empty: give a namespace name or a glob, e.g. 'team-*'";
  const globs = pattern.split(",");
  for (const raw of globs) {
    const glob = raw.trim();
    const it = globs.length > 1 ? `the glob '${glob}'` : "it";
    if (!glob) {
      return "it has an empty glob between commas: remove the extra comma";
    }
    const body = glob.startsWith("!") ? glob.slice(1) : glob;
    if (!body) return "'!' excludes nothing: put a name or glob after it, e.g. '!kube-*'";
    if (body.startsWith("!")) {
      return `${it} negates twice: use one '!' before the glob, e.g. '!${body.replace(/^!+/, "")}'`;
    }
    for (let i = 0; i < body.length; i++) {
      const c = body[i]!;
      if (c === "[") {
        const end = body.indexOf("]", i + 2);
        if (end < 0) {
          return `${it} has an unclosed '[': close it (e.g. '[abc]') or remove it`;
        }
        const set = body.slice(i + 1, end).replace(/^[!^]/, "");
        if (!/^[a-z0-9-]+$/.test(set)) {
          return `${it} has a bracket '[${set}]' that no namespace name can match: ` +
            `use lower-case letters, digits and '-' in it`;
        }
        i = end;
      } else if (c === "]") {
        return `${it} has a ']' without '[': remove it or open the bracket`;
      } else if (!/[a-z0-9*?-]/.test(c)) {
        return `${it} has '${c}', which no namespace name holds: ` +
          `names are lower-case letters, digits and '-'; globs add * ? [abc] and a leading !`;
      }
    }
  }
  return undefined;
}
