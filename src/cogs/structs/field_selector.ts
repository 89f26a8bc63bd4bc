/**
 * Kubernetes field selectors (`?fieldSelector=metadata.name=web,status.phase!=Failed`):
 * parsing into requirements and matching them against an object's fields.
 *
 * Why our own: the embedded API server filters lists and watches by field, and
 * the operator can ask for field-selected watches; both need the same reading
 * of the syntax, including the backslash escapes that Kubernetes allows in
 * values (`\,`, `\=`, `\\`).
 *
 * Which fields a resource supports is not decided here: the API server passes
 * a getter and rejects unsupported fields itself. Whitespace around field
 * names, operators and values is ignored (Kubernetes keeps it, but no
 * selectable field has it), so `a = b, c != d` reads as `a=b,c!=d`.
 *
 * @module
 */

import { SelectorError } from "./selector_error.ts";

/** One requirement of a field selector: a field path, `=` or `!=`, and a value. */
export type FieldRequirement = {
  /** The field path, e.g. `metadata.name` or `status.phase`. */
  field: string;
  /** Equality (`=`, also written `==`) or inequality (`!=`). */
  operator: "=" | "!=";
  /** The value, with escapes already resolved. */
  value: string;
};

/** Splits on commas that are not escaped with a backslash. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") i++;
    else if (ch === ",") {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

/** Resolves `\\`, `\,` and `\=`; rejects other escapes and bare `,`/`=`. */
function unescapeValue(value: string, term: string): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === "\\") {
      const next = value[i + 1];
      if (next !== "\\" && next !== "," && next !== "=") {
        const sequence = next === undefined ? "\\ at the end" : `\\${next}`;
        throw new SelectorError(
          `invalid field selector: invalid escape sequence ${sequence} in "${term}" ` +
            `(only \\\\, \\, and \\= are allowed)`,
        );
      }
      out += next;
      i++;
    } else if (ch === "=" || ch === ",") {
      throw new SelectorError(
        `invalid field selector: unescaped '${ch}' in the value of "${term}" (write it as \\${ch})`,
      );
    } else {
      out += ch;
    }
  }
  return out;
}

/**
 * Parses a field selector string: comma-separated `field=value`,
 * `field==value` or `field!=value`, with `\,`, `\=` and `\\` escapes in values.
 * Empty requirements (`a=b,,c=d`) are skipped, as Kubernetes does.
 *
 * @param text The selector; empty selects everything.
 * @returns The requirements, in the order written.
 * @throws {SelectorError} When a requirement has no operator or no field
 * name, or a value has a bad escape or an unescaped `,`/`=`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseFieldSelector } from "./field_selector.ts";
 *
 * assert.deepEqual(parseFieldSelector("metadata.name=web,status.phase!=Failed"), [
 *   { field: "metadata.name", operator: "=", value: "web" },
 *   { field: "status.phase", operator: "!=", value: "Failed" },
 * ]);
 * assert.deepEqual(parseFieldSelector(String.raw`spec.note==a\,b`), [
 *   { field: "spec.note", operator: "=", value: "a,b" },
 * ]);
 * assert.throws(() => parseFieldSelector("metadata.name"), { name: "SelectorError" });
 * ```
 */
export function parseFieldSelector(text: string): FieldRequirement[] {
  const requirements: FieldRequirement[] = [];
  for (const raw of splitTerms(text)) {
    const term = raw.trim();
    if (term === "") continue;
    const match = /!=|==|=/.exec(term);
    if (match === null) {
      throw new SelectorError(
        `invalid field selector: can't understand "${term}" in "${text}" ` +
          `(expected field=value, field==value or field!=value)`,
      );
    }
    const field = term.slice(0, match.index).trim();
    if (field === "") {
      throw new SelectorError(`invalid field selector: no field name in "${term}"`);
    }
    const value = unescapeValue(term.slice(match.index + match[0].length).trim(), term);
    requirements.push({ field, operator: match[0] === "!=" ? "!=" : "=", value });
  }
  return requirements;
}

/**
 * Whether an object's fields satisfy every requirement. An absent field
 * compares as the empty string, so `spec.nodeName=` selects unscheduled pods.
 *
 * @param reqs The requirements; none matches everything.
 * @param get Reads one field of the object by its path; `undefined` if absent.
 * @returns True when all requirements hold.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { matchesFields, parseFieldSelector } from "./field_selector.ts";
 *
 * const fields: Record<string, string> = { "metadata.name": "web" };
 * const get = (field: string) => fields[field];
 * assert.equal(matchesFields(parseFieldSelector("metadata.name=web"), get), true);
 * assert.equal(matchesFields(parseFieldSelector("spec.nodeName="), get), true);
 * assert.equal(matchesFields(parseFieldSelector("metadata.name!=web"), get), false);
 * ```
 */
export function matchesFields(
  reqs: FieldRequirement[],
  get: (field: string) => string | undefined,
): boolean {
  for (const { field, operator, value } of reqs) {
    const actual = get(field) ?? "";
    if ((actual === value) !== (operator === "=")) return false;
  }
  return true;
}
