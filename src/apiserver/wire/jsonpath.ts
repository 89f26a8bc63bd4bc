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

/** A numeric literal of a path: compared as Go's `float64`. */
class Literal {
  constructor(readonly value: number, readonly integer: boolean) {}
}

type Node =
  | { t: "list"; nodes: Node[] }
  | { t: "text"; text: string }
  | { t: "field"; name: string }
  | { t: "wildcard" }
  | { t: "recursive" }
  | { t: "array"; params: [Param, Param, Param] }
  | { t: "union"; lists: Node[][] }
  | { t: "filter"; left: Node[]; right: Node[]; op: string }
  | { t: "literal"; value: Literal | boolean }
  | { t: "identifier"; name: string };

interface Param {
  known: boolean;
  value: number;
  derived: boolean;
}

/** A JSONPath that does not parse. */
export class JsonPathError extends Error {
  override name = "JsonPathError";
}

/** A parsed JSONPath template. */
export interface JsonPath {
  /** The template's top-level nodes (text and `{…}` actions). */
  readonly nodes: readonly Node[];
}

/**
 * Parses a JSONPath template such as `{.status.conditions[?(@.type=="Ready")].status}`.
 *
 * @param template The template, with `{…}` around each expression.
 * @returns The parsed path.
 * @throws {JsonPathError} When the template does not parse (as kube's parser refuses it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findResults, parseJsonPath } from "./jsonpath.ts";
 * const path = parseJsonPath('{.items[?(@.k=="b")].v}');
 * assert.deepEqual(findResults(path, { items: [{ k: "a", v: 1 }, { k: "b", v: 2 }] }), [[2]]);
 * ```
 */
export function parseJsonPath(template: string): JsonPath {
  return { nodes: new Parser(template).parse() };
}

class Parser {
  #input: string;
  #pos = 0;
  #start = 0;

  constructor(input: string) {
    this.#input = input;
  }

  parse(): Node[] {
    const root: Node[] = [];
    for (;;) {
      const at = this.#input.indexOf("{", this.#pos);
      if (at < 0) {
        if (this.#pos < this.#input.length) {
          root.push({ t: "text", text: this.#input.slice(this.#pos) });
        }
        return root;
      }
      if (at > this.#pos) root.push({ t: "text", text: this.#input.slice(this.#pos, at) });
      this.#pos = at + 1;
      this.#start = this.#pos;
      const list: Node[] = [];
      root.push({ t: "list", nodes: list });
      this.#action(list);
    }
  }

  #peek(): string {
    return this.#input[this.#pos] ?? "";
  }

  #consume(): string {
    const s = this.#input.slice(this.#start, this.#pos);
    this.#start = this.#pos;
    return s;
  }

  /** Parses inside `{…}` up to and including the closing brace. */
  #action(cur: Node[]): void {
    for (;;) {
      const rest = this.#input.slice(this.#pos);
      if (rest.startsWith("}")) {
        this.#pos++;
        this.#consume();
        return;
      }
      if (rest.startsWith("[?(")) {
        this.#filter(cur);
        continue;
      }
      if (rest.startsWith("..")) {
        if (cur.at(-1)?.t === "recursive") {
          throw new JsonPathError("invalid multiple recursive descent");
        }
        this.#pos += 2;
        this.#consume();
        cur.push({ t: "recursive" });
        if (isAlphaNumeric(this.#peek())) this.#field(cur);
        continue;
      }
      const r = this.#peek();
      if (r === "" || r === "\r" || r === "\n") throw new JsonPathError("unclosed action");
      this.#pos++;
      if (r === " " || r === "@" || r === "$") this.#consume();
      else if (r === "[") this.#array(cur);
      else if (r === '"' || r === "'") this.#quote(cur, r);
      else if (r === ".") this.#field(cur);
      else if (r === "+" || r === "-" || /^\p{Nd}$/u.test(r)) {
        this.#pos--;
        this.#number(cur);
      } else if (isAlphaNumeric(r)) {
        this.#pos--;
        this.#identifier(cur);
      } else throw new JsonPathError(`unrecognized character in action: ${JSON.stringify(r)}`);
    }
  }

  #field(cur: Node[]): void {
    this.#consume();
    for (;;) {
      const r = this.#peek();
      if (r === "\\") this.#pos += Math.min(2, this.#input.length - this.#pos);
      else if (isTerminator(r)) break;
      else this.#pos++;
    }
    const value = this.#consume();
    cur.push(value === "*" ? { t: "wildcard" } : { t: "field", name: value.replaceAll("\\", "") });
  }

  #identifier(cur: Node[]): void {
    while (!isTerminator(this.#peek())) this.#pos++;
    const value = this.#consume();
    if (value === "true" || value === "false") cur.push({ t: "literal", value: value === "true" });
    else cur.push({ t: "identifier", name: value });
  }

  #number(cur: Node[]): void {
    if (this.#peek() === "+" || this.#peek() === "-") this.#pos++;
    while (this.#peek() === "." || /^\p{Nd}$/u.test(this.#peek())) this.#pos++;
    const text = this.#consume();
    if (/^[+-]?[0-9]+$/.test(text)) {
      cur.push({ t: "literal", value: new Literal(Number(text), true) });
    } else if (/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$/.test(text)) {
      cur.push({ t: "literal", value: new Literal(Number(text), false) });
    } else throw new JsonPathError(`cannot parse number ${text}`);
  }

  #quote(cur: Node[], end: string): void {
    for (;;) {
      const r = this.#peek();
      if (r === "" || r === "\n") throw new JsonPathError("unterminated quoted string");
      this.#pos++;
      if (r === end && this.#input[this.#pos - 2] !== "\\") break;
    }
    cur.push({ t: "text", text: unquote(this.#consume()) });
  }

  #array(cur: Node[]): void {
    for (;;) {
      const r = this.#peek();
      if (r === "" || r === "\n") throw new JsonPathError("unterminated array");
      this.#pos++;
      if (r === "]") break;
    }
    let text = this.#consume().slice(1, -1);
    if (text === "*") text = ":";
    const parts = text.split(",");
    if (parts.length > 1) {
      cur.push({ t: "union", lists: parts.map((p) => subAction(`[${p.trim()}]`)) });
      return;
    }
    const key = /^'([^']*)'$/.exec(text);
    if (key) {
      cur.push(...subAction(`.${key[1]}`));
      return;
    }
    const slice = /^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$/.exec(text);
    if (!slice) throw new JsonPathError(`invalid array index ${text}`);
    const params: Param[] = [];
    for (let i = 0; i < 3; i++) {
      let v = slice[i + 1] ?? "";
      if (v !== "") {
        if (i > 0) v = v.slice(1);
        if (i > 0 && v === "") params.push({ known: false, value: 0, derived: false });
        else if (/^-?[0-9]+$/.test(v)) {
          params.push({ known: true, value: Number(v), derived: false });
        } else throw new JsonPathError(`array index ${v} is not a number`);
      } else if (i === 1) {
        params.push({ known: true, value: (params[0]?.value ?? 0) + 1, derived: true });
      } else params.push({ known: false, value: 0, derived: false });
    }
    cur.push({ t: "array", params: params as [Param, Param, Param] });
  }

  #filter(cur: Node[]): void {
    this.#pos += 3;
    this.#consume();
    let begin = false;
    let end = false;
    let pair = "";
    for (;;) {
      const r = this.#peek();
      if (r === "" || r === "\n") throw new JsonPathError("unterminated filter");
      this.#pos++;
      if (r === '"' || r === "'") {
        if (!begin) {
          begin = true;
          pair = r;
        } else if (this.#input[this.#pos - 2] !== "\\" && r === pair) end = true;
      } else if (r === ")" && begin === end) break;
    }
    if (this.#peek() !== "]") throw new JsonPathError("unclosed array expect ]");
    this.#pos++;
    const text = this.#consume().slice(0, -2);
    const m = /^([^!<>=]+)([!<>=]+)(.+?)$/.exec(text);
    if (!m) cur.push({ t: "filter", left: subAction(text), right: [], op: "exists" });
    else {
      cur.push({ t: "filter", left: subAction(m[1]!), right: subAction(m[3]!), op: m[2]! });
    }
  }
}

/** Parses `{text}` and returns the nodes of its one action. */
function subAction(text: string): Node[] {
  const nodes = new Parser(`{${text}}`).parse();
  const first = nodes[0];
  return first?.t === "list" ? first.nodes : [];
}

function isTerminator(r: string): boolean {
  return r === "" || " \t\r\n.,[]$@{}".includes(r);
}

function isAlphaNumeric(r: string): boolean {
  return /^[\p{L}\p{Nd}_]$/u.test(r);
}

/** Go's `strconv.Unquote`, with single quotes allowed around a string. */
function unquote(s: string): string {
  const q = s[0]!;
  const body = s.slice(1, -1);
  if (s.length < 2 || s.at(-1) !== q) {
    throw new JsonPathError(`unquote string ${s} error invalid syntax`);
  }
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === q) throw new JsonPathError(`unquote string ${s} error invalid syntax`);
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = body[++i] ?? "";
    const simple: Record<string, string> = {
      a: "\x07",
      b: "\b",
      f: "\f",
      n: "\n",
      r: "\r",
      t: "\t",
      v: "\v",
      "\\": "\\",
    };
    if (e in simple) out += simple[e];
    else if (e === q) out += q;
    else if (e === "x" || e === "u" || e === "U") {
      const n = e === "x" ? 2 : e === "u" ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) {
        throw new JsonPathError(`unquote string ${s} error invalid syntax`);
      }
      out += String.fromCodePoint(parseInt(hex, 16));
      i += n;
    } else if (/^[0-7]$/.test(e)) {
      const oct = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(oct)) {
        throw new JsonPathError(`unquote string ${s} error invalid syntax`);
      }
      out += String.fromCharCode(parseInt(oct, 8));
      i += 2;
    } else throw new JsonPathError(`unquote string ${s} error invalid syntax`);
  }
  return out;
}

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
