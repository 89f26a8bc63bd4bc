/**
 * Kubernetes' JSONPath (client-go `util/jsonpath`), as kube-apiserver
 * evaluates a CRD's `additionalPrinterColumns[].jsonPath`: the server wraps
 * the path in `{…}`, parses it with this grammar and shows the first result.
 *
 * The grammar: fields `.a` (a backslash escapes a terminator, `.a\.b`),
 * `['key']`, indexes and slices `[0]`, `[-1]`, `[1:3]`, `[::2]`, wildcards
 * `[*]`/`.*`, unions `[0,2]`, recursive descent `..name`, and filters
 * `[?(@.type=="Ready")]` with `==`, `!=`, `<`, `>`, `<=`, `>=` or existence
 * `[?(@.x)]`. Comparisons follow Go's template rules: values of different
 * kinds are incomparable (`==` false, `!=` true). On the server, integral
 * numbers of an object are Go `int64` while numeric literals become `float64`,
 * so `[?(@.replicas==1)]` matches nothing on kube-apiserver — nor here.
 * `range`/`end` are not supported (an error, so an empty cell).
 *
 * @module
 */

import { type JsonPath, Literal, type Node, type Param } from "./jsonpath_parser.ts";

export { type JsonPath, JsonPathError, parseJsonPath } from "./jsonpath_parser.ts";

/** An evaluation error: kube's column shows an empty cell. */
class EvalError extends Error {}

/**
 * Evaluates a parsed path against a value, as client-go's `FindResults` with
 * missing keys allowed: one result list per top-level node.
 *
 * @param path The parsed path.
 * @param data The object.
 * @returns The results of each top-level node.
 * @throws {Error} When evaluation fails (an index out of range, a filter over
 *   several values, an unknown identifier); kube shows an empty cell then.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findResults, parseJsonPath } from "./jsonpath.ts";
 * assert.deepEqual(findResults(parseJsonPath("{.a[-1]}"), { a: [1, 2, 3] }), [[3]]);
 * ```
 */
export function findResults(path: JsonPath, data: unknown): unknown[][] {
  return path.nodes.map((n) => walk([data], n));
}

function walk(input: unknown[], node: Node): unknown[] {
  switch (node.t) {
    case "list":
      return evalList(input, node.nodes);
    case "text":
      return [node.text];
    case "literal":
      return input.map(() => node.value);
    case "field":
      return evalField(input, node.name);
    case "wildcard":
      return input.flatMap((v) => children(v) ?? []);
    case "recursive":
      return evalRecursive(input);
    case "array":
      return input.flatMap((v) => evalArray(v, node.params));
    case "union":
      return node.lists.flatMap((l) => evalList(input, l));
    case "filter":
      return input.flatMap((v) => evalFilter(v, node));
    case "identifier":
      throw new EvalError(`unrecognized identifier ${node.name}`);
  }
}

function evalList(input: unknown[], nodes: Node[]): unknown[] {
  let cur = input;
  for (const n of nodes) cur = walk(cur, n);
  return cur;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Literal);
}

function evalField(input: unknown[], name: string): unknown[] {
  if (name === "") return input.filter((v) => v !== null && v !== undefined);
  const out: unknown[] = [];
  for (const v of input) {
    if (isMap(v) && Object.hasOwn(v, name)) out.push(v[name]);
  }
  return out;
}

/** The members of an array, or a map's values in key order; undefined for scalars. */
function children(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (isMap(v)) {
    return Object.keys(v).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((k) => v[k]);
  }
  return undefined;
}

function evalRecursive(input: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const v of input) {
    const kids = children(v);
    if (kids?.length) {
      out.push(v);
      out.push(...evalRecursive(kids));
    }
  }
  return out;
}

function evalArray(v: unknown, params: [Param, Param, Param]): unknown[] {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v)) throw new EvalError("not array or slice");
  const len = v.length;
  let from = params[0].known ? params[0].value : 0;
  if (from < 0) from += len;
  let to = params[1].known ? params[1].value : len;
  if (to < 0 || (to === 0 && params[1].derived)) to += len;
  if (to === from) return [];
  if (from >= len || from < 0) {
    throw new EvalError(`array index out of bounds: index ${from}, length ${len}`);
  }
  if (to > len || to < 0) {
    throw new EvalError(`array index out of bounds: index ${to - 1}, length ${len}`);
  }
  if (from > to) throw new EvalError(`starting index ${from} is greater than ending index ${to}`);
  let step = 1;
  if (params[2].known) {
    if (params[2].value <= 0) throw new EvalError("step must be > 0");
    step = params[2].value;
  }
  const out: unknown[] = [];
  for (let i = from; i < to; i += step) out.push(v[i]);
  return out;
}

function evalFilter(v: unknown, node: Extract<Node, { t: "filter" }>): unknown[] {
  const items = children(v) ?? [v];
  const out: unknown[] = [];
  for (const item of items) {
    let lefts: unknown[];
    try {
      lefts = evalList([item], node.left);
    } catch {
      lefts = [];
    }
    const rights = evalList([item], node.right);
    if (lefts.length === 0) continue;
    if (lefts.length > 1) throw new EvalError("can only compare one element at a time");
    if (node.op === "exists") {
      out.push(item);
      continue;
    }
    if (rights.length === 0) continue;
    if (rights.length > 1) throw new EvalError("can only compare one element at a time");
    if (compare(node.op, lefts[0], rights[0])) out.push(item);
  }
  return out;
}

type Kind = "bool" | "int" | "float" | "string";

/** Go's kind of a value: object numbers are int64 when integral; literals are float64. */
function kindOf(v: unknown): Kind | undefined {
  if (typeof v === "boolean") return "bool";
  if (typeof v === "string") return "string";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (v instanceof Literal) return "float";
  return undefined;
}

function num(v: unknown): number {
  return v instanceof Literal ? v.value : v as number;
}

/** Go template's comparison; `undefined` stands for an incomparable pair (an ignored error). */
function equal(a: unknown, b: unknown): boolean | undefined {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (!ka || !kb || ka !== kb) return undefined;
  return ka === "int" || ka === "float" ? num(a) === num(b) : a === b;
}

function less(a: unknown, b: unknown): boolean | undefined {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (!ka || !kb || ka !== kb || ka === "bool") return undefined;
  return ka === "string" ? (a as string) < (b as string) : num(a) < num(b);
}

function compare(op: string, a: unknown, b: unknown): boolean {
  switch (op) {
    case "==":
      return equal(a, b) ?? false;
    case "!=":
      return !(equal(a, b) ?? false);
    case "<":
      return less(a, b) ?? false;
    case "<=": {
      const lt = less(a, b);
      if (lt === undefined) return false;
      return lt || (equal(a, b) ?? false);
    }
    case ">": {
      const lt = less(a, b);
      if (lt === undefined) return false;
      return !(lt || (equal(a, b) ?? false));
    }
    case ">=": {
      const lt = less(a, b);
      return lt === undefined ? false : !lt;
    }
    default:
      throw new EvalError(`unrecognized filter operator ${op}`);
  }
}

/**
 * Prints one result as client-go's `PrintResults` does: maps and arrays as
 * Go's JSON (keys sorted, `<`, `>`, `&` escaped), numbers as Go's `%v`, null
 * as `<no value>`.
 *
 * @param v The value.
 * @returns Its text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { printResult } from "./jsonpath.ts";
 * assert.deepEqual(printResult({ b: 1, a: "<x>" }), '{"a":"\\u003cx\\u003e","b":1}');
 * assert.deepEqual(printResult(1234567.5), "1.2345675e+06");
 * ```
 */
export function printResult(v: unknown): string {
  if (v === null || v === undefined) return "<no value>";
  if (v instanceof Literal) return v.integer ? String(v.value) : goFloat(v.value);
  if (typeof v === "object") return goJson(v);
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : goFloat(v);
  return String(v);
}

/** Go's `%v` of a float64 (strconv 'g', shortest, exponent from 1e6 or below 1e-4). */
function goFloat(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v === 0) return Object.is(v, -0) ? "-0" : "0";
  const [mant, e] = v.toExponential().split("e") as [string, string];
  const exp = Number(e);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? "-" : "+";
    return `${mant}e${sign}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return String(v);
}

function goJson(v: unknown): string {
  const sortKeys = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sortKeys);
    if (isMap(x)) {
      const o: Record<string, unknown> = {};
      for (const k of Object.keys(x).sort()) o[k] = sortKeys(x[k]);
      return o;
    }
    return x;
  };
  return JSON.stringify(sortKeys(v))
    .replaceAll("<", "\\u003c")
    .replaceAll(">", "\\u003e")
    .replaceAll("&", "\\u0026")
    .replaceAll("\u2028", "\\u2028")
    .replaceAll("\u2029", "\\u2029");
}
