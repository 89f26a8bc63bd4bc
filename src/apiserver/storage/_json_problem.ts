/**
 * Where and why a text is not JSON, in words that fit on one line — for files the server reads
 * (the data directory's snapshot). `JSON.parse`'s own message is not that: for an unexpected
 * character it names no position and quotes the text itself, which may hold new lines and
 * binary garbage (so a one-line report was cut mid-sentence). Here the position comes from a
 * small scan of the JSON grammar (iterative: a file of a million `[` is no deeper a stack), and
 * the character is named, never quoted raw.
 *
 * @module
 */

/**
 * Says what is wrong with a text that `JSON.parse` refused, and where.
 *
 * @param text The text.
 * @param error `JSON.parse`'s error for it.
 * @returns E.g. `Unexpected 'o' at line 1 column 2 (position 1)`.
 */
export function jsonProblem(text: string, error: unknown): string {
  if (!text.trim()) return "the file is empty";
  const offset = badOffset(text);
  const words = error instanceof Error
    ? /^(.*?) in JSON at position \d+/s.exec(error.message)?.[1]
    : undefined;
  if (offset < 0) {
    // The scan found nothing (it should not happen): JSON.parse's words, on one line.
    const message = error instanceof Error ? error.message : String(error);
    return message.replace(/, ".*" is not valid JSON$/s, "").replace(/\s+/g, " ");
  }
  const what = words ??
    (offset >= text.length
      ? "Unexpected end of the text"
      : `Unexpected ${describeChar(text.codePointAt(offset)!)}`);
  const before = text.lastIndexOf("\n", offset - 1);
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return `${what} at line ${line} column ${offset - before} (position ${offset})`;
}

/** A character as a message shows it: `'x'`, or its code point when it does not print. */
function describeChar(code: number): string {
  const printable = code > 0x20 && code !== 0x7f && !(code >= 0x80 && code < 0xa0) &&
    code !== 0xfffd;
  return printable
    ? `'${String.fromCodePoint(code)}'`
    : `character U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * The offset of the first character where the text stops being JSON, the text's length when
 * it ends too early, or -1 when it is JSON.
 */
function badOffset(t: string): number {
  const n = t.length;
  const stack: string[] = [];
  let mode: "value" | "valueOrClose" | "key" | "keyOrClose" | "colon" | "after" = "value";
  let i = 0;
  for (;;) {
    while (i < n && WS.has(t.charCodeAt(i))) i++;
    if (i >= n) return mode === "after" && !stack.length ? -1 : n;
    const c = t[i]!;
    switch (mode) {
      case "valueOrClose":
      case "value": {
        if (mode === "valueOrClose" && c === "]") {
          stack.pop();
          i++;
          mode = "after";
        } else if (c === "{" || c === "[") {
          stack.push(c);
          i++;
          mode = c === "{" ? "keyOrClose" : "valueOrClose";
        } else if (c === '"') {
          const end = stringEnd(t, i);
          if (end < 0) return -end - 1;
          i = end;
          mode = "after";
        } else if (c === "t" || c === "f" || c === "n") {
          const word = c === "t" ? "true" : c === "f" ? "false" : "null";
          for (let k = 0; k < word.length; k++) {
            if (t[i + k] !== word[k]) return Math.min(i + k, n);
          }
          i += word.length;
          mode = "after";
        } else if (c === "-" || (c >= "0" && c <= "9")) {
          const end = numberEnd(t, i);
          if (end < 0) return -end - 1;
          i = end;
          mode = "after";
        } else return i;
        break;
      }
      case "keyOrClose":
      case "key": {
        if (mode === "keyOrClose" && c === "}") {
          stack.pop();
          i++;
          mode = "after";
          break;
        }
        if (c !== '"') return i;
        const end = stringEnd(t, i);
        if (end < 0) return -end - 1;
        i = end;
        mode = "colon";
        break;
      }
      case "colon":
        if (c !== ":") return i;
        i++;
        mode = "value";
        break;
      case "after": {
        const top = stack.at(-1);
        if (top === undefined) return i; // something after the value
        if (c === ",") {
          i++;
          mode = top === "{" ? "key" : "value";
        } else if ((top === "{" && c === "}") || (top === "[" && c === "]")) {
          stack.pop();
          i++;
        } else return i;
        break;
      }
    }
  }
}

const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

/** The offset after a string starting at `i` (a quote), or -(bad offset + 1). */
function stringEnd(t: string, i: number): number {
  for (let j = i + 1; j < t.length; j++) {
    const c = t.charCodeAt(j);
    if (c === 0x22) return j + 1;
    if (c < 0x20) return -(j + 1);
    if (c === 0x5c) {
      const e = t[j + 1];
      if (e === undefined) return -(t.length + 1);
      if (e === "u") {
        for (let k = 2; k < 6; k++) {
          if (!/[0-9a-fA-F]/.test(t[j + k] ?? "")) return -(Math.min(j + k, t.length) + 1);
        }
        j += 5;
      } else if (ESCAPES.has(e)) j++;
      else return -(j + 2);
    }
  }
  return -(t.length + 1);
}

/** The offset after a number starting at `i`, or -(bad offset + 1). */
function numberEnd(t: string, i: number): number {
  const digits = (from: number) => {
    let j = from;
    while (j < t.length && t[j]! >= "0" && t[j]! <= "9") j++;
    return j;
  };
  let j = t[i] === "-" ? i + 1 : i;
  if (t[j] === "0") j++;
  else {
    const end = digits(j);
    if (end === j) return -(j + 1);
    j = end;
  }
  if (t[j] === ".") {
    const end = digits(j + 1);
    if (end === j + 1) return -(j + 2);
    j = end;
  }
  if (t[j] === "e" || t[j] === "E") {
    let k = j + 1;
    if (t[k] === "+" || t[k] === "-") k++;
    const end = digits(k);
    if (end === k) return -(k + 1);
    j = end;
  }
  return j;
}
