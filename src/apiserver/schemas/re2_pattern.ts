/**
 * CRD schema `pattern`s as kube-apiserver reads them: Go's RE2 syntax,
 * compiled here to JavaScript regular expressions.
 *
 * Why: kube-apiserver refuses a CRD whose pattern Go's `regexp` cannot compile
 * and enforces the others on every custom object; a pattern stored here but
 * never enforced (or enforced with another meaning) lets objects through that
 * a cluster refuses. The two dialects mostly agree; where they differ:
 * - RE2-only syntax is translated: leading flags `(?i)`, `(?s)`, `(?m)`,
 *   `(?P<name>…)`, `\A`, `\z`, `\pL`, `[[:alpha:]]`-style classes.
 * - What RE2 refuses and JavaScript would take is refused: lookarounds
 *   (`(?=`, `(?!`, `(?<=`, `(?<!`) and backreferences (`\1`), worded as Go words them.
 * - What cannot be translated (`(?U)`, flags in mid-pattern, `\Q…\E`,
 *   negated POSIX classes) is accepted and not enforced, rather than refused
 *   or enforced wrongly.
 * - Other compile errors carry JavaScript's wording after Go's prefix
 *   `error parsing regexp: `.
 *
 * @module
 */

/** A compiled pattern, or why it does not compile, or neither (accepted, not enforced). */
export interface CompiledPattern {
  /** The expression to enforce. */
  regexp?: RegExp;
  /** Why the pattern is not a valid RE2 expression (Go's `error parsing regexp: …`). */
  error?: string;
}

const POSIX: Record<string, string> = {
  alnum: "0-9A-Za-z",
  alpha: "A-Za-z",
  ascii: "\\x00-\\x7F",
  blank: "\\t ",
  cntrl: "\\x00-\\x1F\\x7F",
  digit: "0-9",
  graph: "!-~",
  lower: "a-z",
  print: " -~",
  punct: "!-\\/:-@\\[-`{-~",
  space: "\\t\\n\\v\\f\\r ",
  upper: "A-Z",
  word: "0-9A-Za-z_",
  xdigit: "0-9A-Fa-f",
};

const cache = new Map<string, CompiledPattern>();

/**
 * Compiles an RE2 pattern (cached).
 *
 * @param pattern The schema's `pattern`.
 * @returns The expression, or the compile error, or neither when it cannot be translated.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileRe2 } from "./re2_pattern.ts";
 * assert.equal(compileRe2("(?i)^ab\\z").regexp!.test("AB"), true);
 * assert.equal(compileRe2('(["').error!.startsWith("error parsing regexp: "), true);
 * assert.equal(compileRe2("a(?=b)").error, "error parsing regexp: invalid or unsupported Perl syntax: `(?=`");
 * ```
 */
export function compileRe2(pattern: string): CompiledPattern {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const out = compile(pattern);
  if (cache.size >= 1024) cache.clear();
  cache.set(pattern, out);
  return out;
}

function compile(pattern: string): CompiledPattern {
  let flags = "";
  let rest = pattern;
  const lead = /^\(\?([imsU]+)\)/.exec(rest);
  if (lead) {
    if (lead[1]!.includes("U")) return {};
    flags = [...new Set(lead[1]!)].join("");
    rest = rest.slice(lead[0].length);
  }
  let source = "";
  let inClass = false;
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i]!;
    if (c === "\\") {
      const n = rest[i + 1];
      if (n === undefined) {
        return { error: "error parsing regexp: trailing backslash at end of expression: ``" };
      }
      if (!inClass && n >= "1" && n <= "9") {
        return { error: `error parsing regexp: invalid escape sequence: \`\\${n}\`` };
      }
      if (n === "Q") return {};
      if (!inClass && n === "A") source += "^";
      else if (!inClass && n === "z") source += "$";
      else if ((n === "p" || n === "P") && rest[i + 2] !== "{" && rest[i + 2] !== undefined) {
        source += `\\${n}{${rest[i + 2]}}`;
        i++;
      } else source += `\\${n}`;
      i++;
      continue;
    }
    if (inClass) {
      if (c === "[" && rest[i + 1] === ":") {
        const end = rest.indexOf(":]", i + 2);
        const name = end > 0 ? rest.slice(i + 2, end) : "";
        if (name.startsWith("^")) return {};
        const range = POSIX[name];
        if (range !== undefined) {
          source += range;
          i = end + 1;
          continue;
        }
      }
      if (c === "]") inClass = false;
      source += c;
      continue;
    }
    if (c === "[") {
      inClass = true;
      source += c;
      if (rest[i + 1] === "^") source += rest[++i];
      if (rest[i + 1] === "]") { // A leading ] is a literal in RE2 (an empty class in JS).
        source += "\\]";
        i++;
      }
      continue;
    }
    if (c === "(" && rest[i + 1] === "?") {
      const look = /^\(\?(=|!|<=|<!)/.exec(rest.slice(i));
      if (look) {
        return {
          error: `error parsing regexp: invalid or unsupported Perl syntax: \`${look[0]}\``,
        };
      }
      if (rest[i + 2] === "P" && rest[i + 3] === "<") {
        source += "(?<";
        i += 3;
        continue;
      }
      if (/^\(\?[imsU-]+\)/.test(rest.slice(i))) return {};
    }
    source += c;
  }
  for (const mode of ["u", ""]) {
    try {
      return { regexp: new RegExp(source, flags + mode) };
    } catch (e) {
      if (mode === "") return { error: `error parsing regexp: ${(e as Error).message}` };
    }
  }
  return {};
}
