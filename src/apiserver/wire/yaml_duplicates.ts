/**
 * Keys sent twice in a YAML body (JSON is YAML too): server-side apply's
 * `application/apply-patch+yaml` and a create's or update's
 * `application/yaml`. kube-apiserver decodes them leniently (the last value
 * wins) and then, under `fieldValidation=Strict` or `Warn`, strictly with
 * go-yaml, whose error names each repeated key by the line of its second
 * occurrence: `line 10: key "paused" already set in map`.
 *
 * js-yaml stops at the first duplicate, so a body that has some is parsed
 * again with each found key renamed on its own line (the line numbers stay)
 * until none is left — only for such bodies, at most 100 times.
 *
 * @module
 */

import { load } from "npm:js-yaml@^5";

/** How many duplicates are named at most. */
const MAX_REPORTED = 100;

/**
 * Parses YAML text as kube's lenient decoder does: a key sent twice keeps its last value.
 *
 * @param text The YAML (or JSON) text.
 * @returns The parsed value.
 * @throws {Error} js-yaml's error for text that is not YAML.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseYamlLenient } from "./yaml_duplicates.ts";
 * assert.deepEqual(parseYamlLenient("a: 1\na: 2\n"), { a: 2 });
 * ```
 */
export function parseYamlLenient(text: string): unknown {
  return load(text, { json: true });
}

/**
 * go-yaml's strict decoding errors of YAML text: one per key sent twice in a mapping.
 *
 * @param text YAML (or JSON) text that parses leniently.
 * @returns `line N: key "k" already set in map` per duplicate, in the order found; empty when
 * there are none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { yamlDuplicates } from "./yaml_duplicates.ts";
 * assert.deepEqual(yamlDuplicates("spec:\n  paused: true\n  paused: false\n"), [
 *   'line 3: key "paused" already set in map',
 * ]);
 * assert.deepEqual(yamlDuplicates('{"a": 1,\n "a": 2}'), ['line 2: key "a" already set in map']);
 * ```
 */
export function yamlDuplicates(text: string): string[] {
  const found: string[] = [];
  let current = text;
  for (let n = 0; n < MAX_REPORTED; n++) {
    const mark = duplicateAt(current);
    if (!mark) break;
    const key = keyAt(current, mark.position);
    if (!key) break;
    found.push(`line ${mark.line + 1}: key ${JSON.stringify(key.name)} already set in map`);
    // Rename this occurrence (same line) and look for the next one.
    current = `${current.slice(0, key.end)}__kopf_duplicate_${n}${current.slice(key.end)}`;
  }
  return found;
}

/** Where strict parsing finds a duplicated key, if it does. */
function duplicateAt(text: string): { line: number; position: number } | undefined {
  try {
    load(text);
    return undefined;
  } catch (e) {
    const err = e as { reason?: string; mark?: { line: number; position: number } };
    if (err.reason !== "duplicated mapping key" || !err.mark) return undefined;
    return { line: err.mark.line, position: err.mark.position };
  }
}

/** The key that starts at (or, quoted, just inside) `position`, and where its name ends. */
function keyAt(text: string, position: number): { name: string; end: number } | undefined {
  let start = position;
  const before = text[start - 1];
  const quote = text[start] === '"' || text[start] === "'"
    ? text[start]
    : before === '"' || before === "'"
    ? before
    : undefined;
  if (quote) {
    if (text[start] === quote) start++;
    let end = start;
    while (end < text.length && text[end] !== quote) end += text[end] === "\\" ? 2 : 1;
    const raw = text.slice(start - 1, end + 1);
    let name: string;
    try {
      name = quote === '"' ? JSON.parse(raw) : raw.slice(1, -1).replaceAll("''", "'");
    } catch {
      name = raw.slice(1, -1);
    }
    return { name, end };
  }
  const colon = text.indexOf(":", start);
  const newline = text.indexOf("\n", start);
  if (colon < 0 || (newline >= 0 && newline < colon)) return undefined;
  const name = text.slice(start, colon).trim();
  return { name, end: start + text.slice(start, colon).trimEnd().length };
}
