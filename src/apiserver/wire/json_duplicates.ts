/**
 * Fields sent twice in one JSON object. `JSON.parse` keeps the last and says nothing; kube-apiserver
 * decodes with sigs.k8s.io/json's strict mode, which reports each one (`duplicate field
 * "metadata.name"`) — refused under `fieldValidation=Strict` (kubectl's default), a warning under
 * `Warn` (the server's default), unnoticed under `Ignore`.
 *
 * Finding them must not slow the writes that have none. The body is scanned once anyway (for
 * its nesting depth); that scan also counts the members (`:` outside strings), and the parsed
 * value's keys are counted: only when the text has more members than the value has keys was
 * some key sent twice, and only then is the text walked again to name them.
 *
 * @module
 */

/** The duplicates of a body: their paths and where every path first appears. */
export interface Duplicates {
  /** `duplicate field` paths (kube's form: `spec.containers[0].name`), with their order. */
  found: Array<{ path: string; at: number }>;
  /** The order in which each key path first appears in the text (for interleaving). */
  order: Map<string, number>;
  /** A YAML body's duplicates as go-yaml words them (`line 5: key "name" already set in map`). */
  yaml?: string[];
}

/**
 * The nesting depth of JSON text and its number of object members, in one pass (strings,
 * escapes included, skipped; the text need not be valid JSON).
 *
 * @param text The JSON text.
 * @param max Where to stop: the depth returned is then `max + 1` and members are not counted on.
 * @returns The deepest nesting and the count of `:` outside strings.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { depthAndMembers } from "./json_duplicates.ts";
 * assert.deepEqual(depthAndMembers('{"a":{"b":"x:y"},"a":1}', 100), { depth: 2, members: 3 });
 * ```
 */
export function depthAndMembers(text: string, max: number): { depth: number; members: number } {
  let depth = 0;
  let deepest = 0;
  let members = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) { // a string: skip to its closing quote (natively), one not escaped
      let end = text.indexOf('"', i + 1);
      while (end > 0) {
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (end < 0) break;
      i = end;
    } else if (c === 0x3a) members++;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > max) return { depth: deepest, members };
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return { depth: deepest, members };
}

/**
 * The number of keys of every object in a parsed JSON value.
 *
 * @param value The value.
 * @returns The sum of their key counts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { countKeys } from "./json_duplicates.ts";
 * assert.equal(countKeys({ a: { b: 1 }, c: [{ d: 2 }, 3] }), 4);
 * ```
 */
export function countKeys(value: unknown): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === "object") stack.push(x);
    } else {
      for (const k in v) {
        n++;
        const x = (v as Record<string, unknown>)[k];
        if (x !== null && typeof x === "object") stack.push(x);
      }
    }
  }
  return n;
}

/**
 * Names the fields sent twice in valid JSON text, with kube's paths (`.`-joined keys, `[i]` for
 * array items), each once, at most 100 (as sigs.k8s.io/json keeps them).
 *
 * @param text Valid JSON text.
 * @returns The duplicates, in the order their second occurrence appears, and the first-seen
 * order of every key path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findDuplicates } from "./json_duplicates.ts";
 * const { found } = findDuplicates('{"a":1,"b":[{"c":1,"c":2}],"a":3}');
 * assert.deepEqual(found.map((d) => d.path), ["b[0].c", "a"]);
 * ```
 */
export function findDuplicates(text: string): Duplicates {
  const found: Duplicates["found"] = [];
  const order = new Map<string, number>();
  const reported = new Set<string>();
  // One frame per open container: its path, and for an object the keys seen, for an array
  // the index of the item being read.
  const frames: Array<{ path: string; keys?: Set<string>; index: number }> = [];
  let at = 0;
  let key: string | undefined; // the key whose value comes next
  const childPath = (frame: { path: string; keys?: Set<string>; index: number }) =>
    frame.keys ? (frame.path ? `${frame.path}.${key}` : key!) : `${frame.path}[${frame.index}]`;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = frames[frames.length - 1];
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (top?.keys && key === undefined && nextNonSpace(text, end) === 0x3a) {
        key = JSON.parse(text.slice(i, end)) as string;
        const path = top.path ? `${top.path}.${key}` : key;
        if (top.keys.has(key)) {
          if (!reported.has(path) && found.length < 100) {
            reported.add(path);
            found.push({ path, at });
          }
        } else top.keys.add(key);
        if (!order.has(path)) order.set(path, at);
        at++;
      }
      i = end - 1;
    } else if (c === 0x7b || c === 0x5b) {
      const path = top ? childPath(top) : "";
      frames.push({ path, ...(c === 0x7b ? { keys: new Set<string>() } : {}), index: 0 });
      key = undefined;
    } else if (c === 0x7d || c === 0x5d) {
      frames.pop();
      key = undefined;
    } else if (c === 0x2c) {
      if (top && !top.keys) top.index++;
      key = undefined;
    }
  }
  return { found, order };
}

/** The offset after the string that starts at `i` (a quote). */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return text.length;
}

function nextNonSpace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return c;
    i++;
  }
  return -1;
}

/**
 * The strict decoding errors of a write, as kube-apiserver lists them: for a built-in kind (a
 * typed decode) duplicates and unknown fields in the order they appear in the body, a field
 * both unknown and sent twice reported as unknown only; otherwise (custom resources, patches)
 * the duplicates first, then the unknown fields.
 *
 * @param duplicates The body's duplicates, if any.
 * @param unknown The unknown field paths, in the order found.
 * @param typed Whether the kind is built in.
 * @param strict Whether for a 400 (a YAML body's duplicates are then one error, go-yaml's
 *   `yaml: unmarshal errors:` with a line per key; as warnings, one each).
 * @returns The messages (`duplicate field "…"`, `unknown field "…"`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findDuplicates, strictErrors } from "./json_duplicates.ts";
 * const dups = findDuplicates('{"spec":{"x":1,"x":2,"paused":true,"paused":false}}');
 * assert.deepEqual(strictErrors(dups, ["spec.x"], true), [
 *   'unknown field "spec.x"',
 *   'duplicate field "spec.paused"',
 * ]);
 * ```
 */
export function strictErrors(
  duplicates: Duplicates | undefined,
  unknown: string[],
  typed: boolean,
  strict = false,
): string[] {
  const yaml = duplicates?.yaml ?? [];
  if (yaml.length) {
    return [
      ...(strict ? [`yaml: unmarshal errors:\n  ${yaml.join("\n  ")}`] : yaml),
      ...unknown.map((p) => `unknown field "${p}"`),
    ];
  }
  const found = duplicates?.found ?? [];
  if (!typed) {
    return [
      ...found.map((d) => `duplicate field "${d.path}"`),
      ...unknown.map((p) => `unknown field "${p}"`),
    ];
  }
  const under = (path: string, parent: string) =>
    path === parent || path.startsWith(`${parent}.`) || path.startsWith(`${parent}[`);
  const rows = [
    ...found
      .filter((d) => !unknown.some((u) => under(d.path, u)))
      .map((d) => ({ at: d.at, text: `duplicate field "${d.path}"` })),
    ...unknown.map((p, i) => ({
      at: duplicates?.order.get(p) ?? Number.MAX_SAFE_INTEGER - unknown.length + i,
      text: `unknown field "${p}"`,
    })),
  ];
  return rows.sort((a, b) => a.at - b.at).map((r) => r.text);
}
