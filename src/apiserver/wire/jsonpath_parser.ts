/**
 * The parser of Kubernetes' JSONPath templates (client-go `util/jsonpath`'s
 * grammar: fields, brackets, slices, wildcards, unions, recursive descent and
 * filters, with Go's string unquoting), refusing what kube's parser refuses.
 * Evaluation is `jsonpath.ts`'s.
 *
 * @module
 */

/** A numeric literal of a path: compared as Go's `float64`. */
export class Literal {
  constructor(readonly value: number, readonly integer: boolean) {}
}

export type Node =
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

export interface Param {
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
