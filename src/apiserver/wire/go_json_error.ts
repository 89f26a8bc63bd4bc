/**
 * Why a body is not JSON, in the words of Go's `encoding/json` — the words kube-apiserver puts in
 * its 400 (`…json parse error: invalid character 'x' looking for beginning of value`). Clients
 * and people compare these texts with what a cluster says, and JavaScript's `JSON.parse` words
 * the same fault differently (`Unexpected token 'x', "x" is not valid JSON`).
 *
 * Go checks a whole body with a byte-at-a-time state machine before it decodes anything, and
 * names the first byte that cannot continue the text together with what it was looking for.
 * This module walks the bytes with the same states. It runs only after `JSON.parse` has refused
 * a body, so a valid body costs nothing; it is iterative (a million `[` needs no deep stack).
 *
 * @module
 */

/** What Go's scanner was in when a byte broke the text: the words after the character. */
const enum Want {
  Value, // the start of a value
  ValueOrClose, // a value or `]` (just after `[`)
  KeyOrClose, // a key or `}` (just after `{`)
  Key, // a key (after `,` in an object)
  AfterValue, // `,`, `:`, `}`, `]` or the end, depending on the container
  InString,
  Escape,
  Hex, // the four digits of `\u`
  Minus, // after `-`
  Zero, // a number's leading `0`
  Digits, // a number's integer digits after the first non-zero one
  Dot, // after `.`
  Fraction, // digits after `.`
  Exp, // after `e`
  ExpSign, // after `e+` / `e-`
  ExpDigits,
  Literal, // inside true / false / null
}

const LITERALS: Record<number, string> = { 0x74: "true", 0x66: "false", 0x6e: "null" };

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/**
 * Go's `encoding/json` syntax error for a text, or undefined when the text is JSON.
 *
 * @param bytes The body, as sent.
 * @returns E.g. `unexpected end of JSON input`, or
 * `invalid character '}' looking for beginning of object key string`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { goJsonSyntaxError } from "./go_json_error.ts";
 * const bytes = (s: string) => new TextEncoder().encode(s);
 * assert.equal(goJsonSyntaxError(bytes('{"a":')), "unexpected end of JSON input");
 * assert.equal(
 *   goJsonSyntaxError(bytes("{bad")),
 *   "invalid character 'b' looking for beginning of object key string",
 * );
 * assert.equal(goJsonSyntaxError(bytes("[1] x")), "invalid character 'x' after top-level value");
 * assert.equal(goJsonSyntaxError(bytes('{"a": 1}')), undefined);
 * ```
 */
export function goJsonSyntaxError(bytes: Uint8Array): string | undefined {
  // The open containers: true for an object, false for an array.
  const stack: boolean[] = [];
  // In an object: whether the next `AfterValue` follows a key (wants `:`) or a value.
  let afterKey = false;
  let want: Want = Want.Value;
  let hex = 0; // the `\u` digits still to come
  let literal = "";
  let at = 0; // the position inside a literal
  let done = false; // a whole top-level value was read
  const invalid = (c: number, context: string) => `invalid character ${quoteByte(c)} ${context}`;

  // Ends a value: what may follow depends on the container it is in.
  const endValue = () => {
    want = Want.AfterValue;
    if (!stack.length) done = true;
  };

  // Go's scanner, at the end, steps once more with a space: a number or literal cut short
  // there is named by that space (`invalid character ' ' in numeric literal`).
  for (let i = 0; i <= bytes.length; i++) {
    const c = i < bytes.length ? bytes[i]! : 0x20;
    switch (want) {
      case Want.AfterValue: {
        if (isSpace(c)) continue;
        if (!stack.length) return invalid(c, "after top-level value");
        const object = stack[stack.length - 1]!;
        if (object && afterKey) {
          if (c !== 0x3a) return invalid(c, "after object key");
          afterKey = false;
          want = Want.Value;
        } else if (object) {
          if (c === 0x2c) want = Want.Key;
          else if (c === 0x7d) {
            stack.pop();
            endValue();
          } else return invalid(c, "after object key:value pair");
        } else {
          if (c === 0x2c) want = Want.Value;
          else if (c === 0x5d) {
            stack.pop();
            endValue();
          } else return invalid(c, "after array element");
        }
        continue;
      }
      case Want.KeyOrClose:
      case Want.Key:
        if (isSpace(c)) continue;
        if (c === 0x7d && want === Want.KeyOrClose) {
          stack.pop();
          endValue();
        } else if (c === 0x22) {
          afterKey = true;
          want = Want.InString;
        } else return invalid(c, "looking for beginning of object key string");
        continue;
      case Want.ValueOrClose:
      case Want.Value:
        if (isSpace(c)) continue;
        if (c === 0x5d && want === Want.ValueOrClose) {
          stack.pop();
          endValue();
        } else if (c === 0x7b) {
          stack.push(true);
          want = Want.KeyOrClose;
        } else if (c === 0x5b) {
          stack.push(false);
          want = Want.ValueOrClose;
        } else if (c === 0x22) {
          afterKey = false;
          want = Want.InString;
        } else if (c === 0x2d) want = Want.Minus;
        else if (c === 0x30) want = Want.Zero;
        else if (c >= 0x31 && c <= 0x39) want = Want.Digits;
        else if (LITERALS[c]) {
          literal = LITERALS[c]!;
          at = 1;
          want = Want.Literal;
        } else return invalid(c, "looking for beginning of value");
        continue;
      case Want.InString:
        if (c === 0x22) {
          // A key's closing quote leaves `afterKey` set: `:` comes next.
          if (afterKey) want = Want.AfterValue;
          else endValue();
        } else if (c === 0x5c) want = Want.Escape;
        else if (c < 0x20) return invalid(c, "in string literal");
        continue;
      case Want.Escape:
        if (c === 0x75) {
          want = Want.Hex;
          hex = 4;
        } else if ('"\\/bfnrt'.includes(String.fromCharCode(c))) want = Want.InString;
        else return invalid(c, "in string escape code");
        continue;
      case Want.Hex:
        if (!isHex(c)) return invalid(c, "in \\u hexadecimal character escape");
        if (--hex === 0) want = Want.InString;
        continue;
      case Want.Minus:
        if (c === 0x30) want = Want.Zero;
        else if (c >= 0x31 && c <= 0x39) want = Want.Digits;
        else return invalid(c, "in numeric literal");
        continue;
      case Want.Digits:
      case Want.Zero:
        if (want === Want.Digits && isDigit(c)) continue;
        if (c === 0x2e) want = Want.Dot;
        else if (c === 0x65 || c === 0x45) want = Want.Exp;
        else {
          endValue();
          i--; // the byte is the value's follower
        }
        continue;
      case Want.Dot:
        if (!isDigit(c)) return invalid(c, "after decimal point in numeric literal");
        want = Want.Fraction;
        continue;
      case Want.Fraction:
        if (isDigit(c)) continue;
        if (c === 0x65 || c === 0x45) want = Want.Exp;
        else {
          endValue();
          i--;
        }
        continue;
      case Want.Exp:
      case Want.ExpSign:
        if (want === Want.Exp && (c === 0x2b || c === 0x2d)) want = Want.ExpSign;
        else if (!isDigit(c)) return invalid(c, "in exponent of numeric literal");
        else want = Want.ExpDigits;
        continue;
      case Want.ExpDigits:
        if (isDigit(c)) continue;
        endValue();
        i--;
        continue;
      case Want.Literal: {
        const expected = literal.charCodeAt(at);
        if (c !== expected) {
          return invalid(c, `in literal ${literal} (expecting ${quoteByte(expected)})`);
        }
        if (++at === literal.length) endValue();
        continue;
      }
    }
  }
  return done ? undefined : "unexpected end of JSON input";
}

/** A byte as Go's `quoteChar` shows it: `'x'`, `'\''`, `'"'`, `'\n'`, `'\x01'`, `'\u0080'`. */
function quoteByte(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return "'\"'";
  const named: Record<number, string> = {
    0x07: "\\a",
    0x08: "\\b",
    0x0c: "\\f",
    0x0a: "\\n",
    0x0d: "\\r",
    0x09: "\\t",
    0x0b: "\\v",
    0x5c: "\\\\",
  };
  if (named[c]) return `'${named[c]}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, "0")}'`;
  // A byte over 0x7f is read as the code point of the same number (Go's string(rune(b))):
  // printable unless a C1 control, the no-break space or the soft hyphen.
  if (c >= 0x80 && (c < 0xa0 || c === 0xa0 || c === 0xad)) {
    return `'\\u${c.toString(16).padStart(4, "0")}'`;
  }
  return `'${String.fromCharCode(c)}'`;
}

/**
 * The start of a body as kube-apiserver quotes it after a decoding error (`summarizeData`):
 * `<empty>`, `<binary> len N` when it starts with a zero byte, else its first 30 bytes and
 * ` ...` when there are more.
 *
 * @param bytes The body.
 * @returns The summary.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summarizeBody } from "./go_json_error.ts";
 * assert.equal(summarizeBody(new Uint8Array()), "<empty>");
 * assert.equal(summarizeBody(new TextEncoder().encode("{bad")), "{bad");
 * ```
 */
export function summarizeBody(bytes: Uint8Array): string {
  if (!bytes.length) return "<empty>";
  if (bytes[0] === 0) return `<binary> len ${bytes.length}`;
  if (bytes.length > 30) return new TextDecoder().decode(bytes.subarray(0, 30)) + " ...";
  return new TextDecoder().decode(bytes);
}
