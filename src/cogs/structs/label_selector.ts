/**
 * Kubernetes label selectors: the string syntax of `?labelSelector=` and
 * `kubectl -l` (`app=web,tier notin (db),!canary`) and the structured form of
 * `matchLabels`/`matchExpressions`, parsed into one list of requirements that
 * a single matcher evaluates.
 *
 * Why our own: the embedded API server filters lists and watches by label, and
 * the operator filters events by label, both without a Kubernetes client
 * library; the two must agree with each other and with a real cluster.
 *
 * Semantics follow Kubernetes: requirements are ANDed; `!=` and `notin`
 * match objects that lack the key; keys are qualified names with an optional
 * DNS-subdomain prefix (`example.com/name`); values are at most 63 characters.
 * `a in ()` means `a in ("")`, as in Kubernetes. The set-based operators `gt`
 * and `lt` (`a>1`) are not supported and are reported as errors.
 *
 * @module
 */

import { SelectorError } from "./selector_error.ts";

/** One requirement of a label selector: a key, an operator and its values. */
export type LabelRequirement = {
  /** The label key, e.g. `app` or `example.com/tier`. */
  key: string;
  /** How the label's value is tested; `exists`/`!exists` ignore `values`. */
  operator: "=" | "!=" | "in" | "notin" | "exists" | "!exists";
  /** One value for `=`/`!=`, one or more for `in`/`notin`, none otherwise. */
  values: string[];
};

/** A label selector: requirements that must all hold. Empty matches everything. */
export type LabelSelector = LabelRequirement[];

/** The structured selector of `matchLabels` and `matchExpressions`. */
export type LabelSelectorObject = {
  /** Labels that must be present with exactly these values. */
  matchLabels?: Record<string, string>;
  /** Set-based requirements. */
  matchExpressions?: {
    key: string;
    operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
    values?: string[];
  }[];
};

const NAME_RE = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME_RULE = "must consist of alphanumeric characters, '-', '_' or '.', " +
  "and must start and end with an alphanumeric character";

/** Why `key` is not a valid label key, or undefined when it is valid. */
function keyProblem(key: string): string | undefined {
  const parts = key.split("/");
  if (parts.length > 2) return "a qualified name must have at most one '/'";
  const name = parts[parts.length - 1] ?? "";
  if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    if (prefix === "") return "the prefix part must be non-empty";
    if (prefix.length > 253) return "the prefix part must be no more than 253 characters";
    if (!DNS_SUBDOMAIN_RE.test(prefix)) {
      return "the prefix part must be a lowercase DNS subdomain, e.g. 'example.com'";
    }
  }
  if (name === "") return "the name part must be non-empty";
  if (name.length > 63) return "the name part must be no more than 63 characters";
  if (!NAME_RE.test(name)) return `the name part ${NAME_RULE}`;
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is valid. */
function valueProblem(value: string): string | undefined {
  if (value === "") return undefined;
  if (value.length > 63) return "a label value must be no more than 63 characters";
  if (!NAME_RE.test(value)) return `a label value ${NAME_RULE}`;
  return undefined;
}

function checkKey(key: string): void {
  const problem = keyProblem(key);
  if (problem !== undefined) {
    throw new SelectorError(`unable to parse requirement: invalid label key "${key}": ${problem}`);
  }
}

function checkValue(key: string, value: string): void {
  const problem = valueProblem(value);
  if (problem !== undefined) {
    throw new SelectorError(
      `unable to parse requirement: invalid value "${value}" for label "${key}": ${problem}`,
    );
  }
}

type TokenKind =
  | "ident"
  | "("
  | ")"
  | ","
  | "!"
  | "="
  | "=="
  | "!="
  | "in"
  | "notin"
  | ">"
  | "<"
  | "end";
type Token = { kind: TokenKind; text: string; at: number };

const SPECIAL = new Set(["!", "(", ")", ",", "=", "<", ">"]);
const WHITESPACE = /\s/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i] ?? "";
    if (WHITESPACE.test(ch)) {
      i++;
      continue;
    }
    if (SPECIAL.has(ch)) {
      const two = text.slice(i, i + 2);
      if (two === "==" || two === "!=") {
        tokens.push({ kind: two, text: two, at: i });
        i += 2;
      } else {
        tokens.push({ kind: ch as TokenKind, text: ch, at: i });
        i++;
      }
      continue;
    }
    const start = i;
    while (i < text.length) {
      const c = text[i] ?? "";
      if (WHITESPACE.test(c) || SPECIAL.has(c)) break;
      i++;
    }
    const word = text.slice(start, i);
    const kind: TokenKind = word === "in" ? "in" : word === "notin" ? "notin" : "ident";
    tokens.push({ kind, text: word, at: start });
  }
  tokens.push({ kind: "end", text: "", at: text.length });
  return tokens;
}

/** A recursive-descent parser over the tokens of one selector string. */
class Parser {
  #tokens: Token[];
  #pos = 0;
  #text: string;

  constructor(text: string) {
    this.#text = text;
    this.#tokens = tokenize(text);
  }

  #peek(): Token {
    return this.#tokens[this.#pos] ?? { kind: "end", text: "", at: this.#text.length };
  }

  #next(): Token {
    const token = this.#peek();
    if (token.kind !== "end") this.#pos++;
    return token;
  }

  #fail(token: Token, expected: string): never {
    const found = token.kind === "end" ? "end of string" : `'${token.text}'`;
    throw new SelectorError(
      `unable to parse requirement: found ${found} at position ${token.at} of "${this.#text}", ` +
        `expected: ${expected}`,
    );
  }

  /** In value position the words `in` and `notin` are plain values. */
  #isValue(token: Token): boolean {
    return token.kind === "ident" || token.kind === "in" || token.kind === "notin";
  }

  parse(): LabelSelector {
    const selector: LabelSelector = [];
    if (this.#peek().kind === "end") return selector;
    for (;;) {
      selector.push(this.#requirement());
      const token = this.#next();
      if (token.kind === "end") return selector;
      if (token.kind !== ",") this.#fail(token, "',' or end of string");
    }
  }

  #key(): string {
    const token = this.#next();
    if (token.kind !== "ident") this.#fail(token, "a label key");
    checkKey(token.text);
    return token.text;
  }

  #requirement(): LabelRequirement {
    if (this.#peek().kind === "!") {
      this.#next();
      return { key: this.#key(), operator: "!exists", values: [] };
    }
    const key = this.#key();
    const token = this.#peek();
    switch (token.kind) {
      case "end":
      case ",":
        return { key, operator: "exists", values: [] };
      case "=":
      case "==":
      case "!=": {
        this.#next();
        const operator = token.kind === "!=" ? "!=" : "=";
        const valueToken = this.#peek();
        let value = "";
        if (this.#isValue(valueToken)) value = this.#next().text;
        else if (valueToken.kind !== "end" && valueToken.kind !== ",") {
          this.#fail(valueToken, "a label value, ',' or end of string");
        }
        checkValue(key, value);
        return { key, operator, values: [value] };
      }
      case "in":
      case "notin":
        this.#next();
        return { key, operator: token.kind, values: this.#values(key) };
      case ">":
      case "<":
        throw new SelectorError(
          `unable to parse requirement: the operator '${token.text}' at position ${token.at} ` +
            `of "${this.#text}" is not supported; use =, !=, in, notin, or a bare key`,
        );
      default:
        return this.#fail(token, "'=', '==', '!=', 'in', 'notin', ',' or end of string");
    }
  }

  #values(key: string): string[] {
    const open = this.#next();
    if (open.kind !== "(") this.#fail(open, "'('");
    const values: string[] = [];
    for (;;) {
      const token = this.#peek();
      let value = "";
      if (this.#isValue(token)) value = this.#next().text;
      else if (token.kind !== "," && token.kind !== ")") {
        this.#fail(token, "a label value, ',' or ')'");
      }
      checkValue(key, value);
      if (!values.includes(value)) values.push(value);
      const separator = this.#next();
      if (separator.kind === ")") return values;
      if (separator.kind !== ",") this.#fail(separator, "',' or ')'");
    }
  }
}

/**
 * Parses a label selector string as Kubernetes does: comma-separated
 * requirements (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`,
 * `!a`), whitespace ignored between tokens.
 *
 * @param text The selector; empty (or only whitespace) selects everything.
 * @returns The requirements, in the order written.
 * @throws {SelectorError} When the syntax is wrong or a key or value is not
 * valid; the message names the bad part.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseLabelSelector } from "./label_selector.ts";
 *
 * assert.deepEqual(parseLabelSelector("app=web, tier in (fe,be), !canary"), [
 *   { key: "app", operator: "=", values: ["web"] },
 *   { key: "tier", operator: "in", values: ["fe", "be"] },
 *   { key: "canary", operator: "!exists", values: [] },
 * ]);
 * assert.deepEqual(parseLabelSelector(""), []);
 * assert.throws(() => parseLabelSelector("app in web"), { name: "SelectorError" });
 * ```
 */
export function parseLabelSelector(text: string): LabelSelector {
  return new Parser(text).parse();
}

const STRUCTURED_OPERATORS = {
  In: "in",
  NotIn: "notin",
  Exists: "exists",
  DoesNotExist: "!exists",
} as const;

/**
 * Converts the structured selector of `matchLabels` and `matchExpressions`
 * (as in webhooks, deployments and network policies) into requirements.
 *
 * @param sel The structured selector; an empty one selects everything.
 * @returns The requirements: `matchLabels` first, then `matchExpressions`.
 * @throws {SelectorError} When a key or value is not valid, an operator is
 * unknown, `In`/`NotIn` have no values, or `Exists`/`DoesNotExist` have some.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { labelSelectorFromObject, matchesLabels } from "./label_selector.ts";
 *
 * const selector = labelSelectorFromObject({
 *   matchLabels: { app: "web" },
 *   matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }],
 * });
 * assert.equal(matchesLabels(selector, { app: "web", tier: "fe" }), true);
 * assert.equal(matchesLabels(selector, { app: "web", tier: "db" }), false);
 * ```
 */
export function labelSelectorFromObject(sel: LabelSelectorObject): LabelSelector {
  const selector: LabelSelector = [];
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) {
    checkKey(key);
    if (typeof value !== "string") {
      throw new SelectorError(`invalid label selector: matchLabels["${key}"] must be a string`);
    }
    checkValue(key, value);
    selector.push({ key, operator: "=", values: [value] });
  }
  (sel.matchExpressions ?? []).forEach((expression, index) => {
    const where = `invalid label selector: matchExpressions[${index}]`;
    const { key, operator } = expression;
    if (typeof key !== "string") throw new SelectorError(`${where}: key must be a string`);
    checkKey(key);
    const op = Object.hasOwn(STRUCTURED_OPERATORS, operator)
      ? STRUCTURED_OPERATORS[operator]
      : undefined;
    if (op === undefined) {
      throw new SelectorError(
        `${where}: "${String(operator)}" is not a valid label selector operator ` +
          `(use In, NotIn, Exists or DoesNotExist)`,
      );
    }
    const values = expression.values ?? [];
    if (!Array.isArray(values) || values.some((v) => typeof v !== "string")) {
      throw new SelectorError(`${where}: values must be a list of strings`);
    }
    if ((op === "in" || op === "notin") && values.length === 0) {
      throw new SelectorError(`${where}: values must be non-empty for ${operator}`);
    }
    if ((op === "exists" || op === "!exists") && values.length > 0) {
      throw new SelectorError(`${where}: values must be empty for ${operator}`);
    }
    for (const value of values) checkValue(key, value);
    selector.push({ key, operator: op, values: [...new Set(values)] });
  });
  return selector;
}

/**
 * Whether labels satisfy every requirement of a selector. As in Kubernetes,
 * `!=` and `notin` match when the key is absent.
 *
 * @param selector The requirements; an empty selector matches everything.
 * @param labels The object's labels; `undefined` means no labels.
 * @returns True when all requirements hold.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { matchesLabels, parseLabelSelector } from "./label_selector.ts";
 *
 * const selector = parseLabelSelector("app=web,env!=prod");
 * assert.equal(matchesLabels(selector, { app: "web" }), true);
 * assert.equal(matchesLabels(selector, { app: "web", env: "prod" }), false);
 * assert.equal(matchesLabels(selector, undefined), false);
 * ```
 */
export function matchesLabels(
  selector: LabelSelector,
  labels: Record<string, string> | undefined,
): boolean {
  for (const { key, operator, values } of selector) {
    const has = labels !== undefined && Object.hasOwn(labels, key);
    const value = has ? labels[key] : undefined;
    switch (operator) {
      case "exists":
        if (!has) return false;
        break;
      case "!exists":
        if (has) return false;
        break;
      case "=":
      case "in":
        if (!has || !values.includes(value as string)) return false;
        break;
      case "!=":
      case "notin":
        if (has && values.includes(value as string)) return false;
        break;
    }
  }
  return true;
}
