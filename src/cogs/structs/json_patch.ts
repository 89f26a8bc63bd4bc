/**
 * JSON patch (RFC 6902), the `application/json-patch+json` content type: a
 * list of `add`/`remove`/`replace`/`move`/`copy`/`test` operations on JSON
 * pointers (RFC 6901).
 *
 * Why it matters here: it is the only patch type with a precondition. Kopf
 * adds and removes its finalizer with a `test` of `metadata.resourceVersion`
 * first, so it never overwrites another controller's finalizer list; the
 * embedded API server applies such patches and answers a failed one with a
 * 422 built from {@link JsonPatchError}.
 *
 * All operations are validated before any is applied. The document is never
 * mutated: each operation copies only the containers on its path, and the
 * result shares every untouched subtree with the input (and copied values
 * with their source), so treat it as immutable.
 *
 * Why ours and not a general JSON-patch package: the API server needs the
 * failure in Kubernetes' terms (the index and `op` of the failed operation for
 * its 422 Status), all-or-nothing application without cloning the whole
 * object, and `__proto__`-safe pointers; together that is this module.
 *
 * @module
 */

import { isObject, setOwn } from "./_json.ts";

/** The operations that RFC 6902 defines. */
const OPS = ["add", "remove", "replace", "move", "copy", "test"] as const;
type OpName = typeof OPS[number];

type Operation = {
  index: number;
  op: OpName;
  path: string[];
  pathText: string;
  from: string[];
  fromText: string;
  value: unknown;
};

/**
 * A JSON patch that is malformed or cannot be applied. The message names the
 * operation by index and op, and says why, e.g.
 * `the "test" operation at index 0 failed: /metadata/resourceVersion is "5", not "4"`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyJsonPatch, JsonPatchError } from "./json_patch.ts";
 *
 * try {
 *   applyJsonPatch({ a: 1 }, [{ op: "remove", path: "/b" }]);
 * } catch (error) {
 *   assert.ok(error instanceof JsonPatchError);
 *   assert.equal(error.index, 0);
 *   assert.equal(error.op, "remove");
 *   assert.equal(error.message, 'the "remove" operation at index 0 failed: /b does not exist');
 * }
 * ```
 */
export class JsonPatchError extends Error {
  /** The index of the failed operation, or undefined if the patch as a whole is malformed. */
  readonly index: number | undefined;
  /** The failed operation's `op`, or undefined if it has no valid one. */
  readonly op: string | undefined;

  /**
   * Creates the error.
   *
   * @param message What failed and why, on one line.
   * @param options The failed operation's `index` and `op`, and the usual `cause`.
   */
  constructor(message: string, options?: ErrorOptions & { index?: number; op?: string }) {
    super(message, options);
    this.name = "JsonPatchError";
    this.index = options?.index;
    this.op = options?.op;
  }
}

/** An internal failure of one operation, given its context by the caller. */
class OperationFailure extends Error {}

/** JSON equality: key order ignored, own keys only. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}

/** A short JSON rendering of a value for error messages. */
function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Parses an RFC 6901 JSON pointer into its unescaped reference tokens. */
function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new OperationFailure(`${show(pointer)} must start with "/"`);
  return pointer.slice(1).split("/").map((token) => {
    if (/~[^01]|~$/.test(token)) {
      throw new OperationFailure(`${show(pointer)} has a "~" not followed by 0 or 1`);
    }
    return token.replaceAll("~1", "/").replaceAll("~0", "~");
  });
}

/** The pointer to the first `depth` tokens, for messages. */
function pointerTo(tokens: string[], depth: number): string {
  return tokens.slice(0, depth).map((t) => "/" + t.replaceAll("~", "~0").replaceAll("/", "~1"))
    .join("");
}

const INDEX_RE = /^(0|[1-9][0-9]*)$/;

/** The array index a token names, or a failure saying why it names none. */
function arrayIndex(tokens: string[], depth: number, max: number): number {
  const token = tokens[depth] ?? "";
  const where = pointerTo(tokens, depth + 1);
  if (!INDEX_RE.test(token)) {
    throw new OperationFailure(`${where}: "${token}" is not an index into the array`);
  }
  const index = Number(token);
  if (index > max) {
    throw new OperationFailure(`${where} is out of bounds: the array has ${max} items`);
  }
  return index;
}

/** Reads the value a pointer references; fails when it does not exist. */
function getAt(doc: unknown, tokens: string[]): unknown {
  let node = doc;
  for (let depth = 0; depth < tokens.length; depth++) {
    const token = tokens[depth] ?? "";
    if (Array.isArray(node)) {
      if (!INDEX_RE.test(token) || Number(token) >= node.length) {
        throw new OperationFailure(`${pointerTo(tokens, depth + 1)} does not exist`);
      }
      node = node[Number(token)];
    } else if (isObject(node) && Object.hasOwn(node, token)) {
      node = node[token];
    } else {
      throw new OperationFailure(`${pointerTo(tokens, depth + 1)} does not exist`);
    }
  }
  return node;
}

/** Replaces the container at `tokens[..depth]` by `leaf(container)`, copying the path to it. */
function updateAt(
  node: unknown,
  tokens: string[],
  depth: number,
  leaf: (container: unknown) => unknown,
): unknown {
  if (depth === tokens.length - 1) return leaf(node);
  const token = tokens[depth] ?? "";
  if (Array.isArray(node)) {
    if (!INDEX_RE.test(token) || Number(token) >= node.length) {
      throw new OperationFailure(`${pointerTo(tokens, depth + 1)} does not exist`);
    }
    const copy = node.slice();
    copy[Number(token)] = updateAt(node[Number(token)], tokens, depth + 1, leaf);
    return copy;
  }
  if (isObject(node) && Object.hasOwn(node, token)) {
    const copy = { ...node };
    setOwn(copy, token, updateAt(node[token], tokens, depth + 1, leaf));
    return copy;
  }
  throw new OperationFailure(`${pointerTo(tokens, depth + 1)} does not exist`);
}

function notContainer(tokens: string[]): OperationFailure {
  const parent = pointerTo(tokens, tokens.length - 1) || "the document root";
  return new OperationFailure(`${parent} is neither an object nor an array`);
}

function addAt(doc: unknown, tokens: string[], value: unknown): unknown {
  if (tokens.length === 0) return value;
  const last = tokens.length - 1;
  const key = tokens[last] ?? "";
  return updateAt(doc, tokens, 0, (container) => {
    if (Array.isArray(container)) {
      const copy = container.slice();
      if (key === "-") copy.push(value);
      else copy.splice(arrayIndex(tokens, last, container.length), 0, value);
      return copy;
    }
    if (isObject(container)) {
      const copy = { ...container };
      setOwn(copy, key, value);
      return copy;
    }
    throw notContainer(tokens);
  });
}

function removeAt(doc: unknown, tokens: string[]): unknown {
  if (tokens.length === 0) throw new OperationFailure("the document root cannot be removed");
  const last = tokens.length - 1;
  const key = tokens[last] ?? "";
  return updateAt(doc, tokens, 0, (container) => {
    if (Array.isArray(container)) {
      if (!INDEX_RE.test(key) || Number(key) >= container.length) {
        throw new OperationFailure(`${pointerTo(tokens, tokens.length)} does not exist`);
      }
      const copy = container.slice();
      copy.splice(Number(key), 1);
      return copy;
    }
    if (isObject(container)) {
      if (!Object.hasOwn(container, key)) {
        throw new OperationFailure(`${pointerTo(tokens, tokens.length)} does not exist`);
      }
      const copy = { ...container };
      delete copy[key];
      return copy;
    }
    throw notContainer(tokens);
  });
}

function replaceAt(doc: unknown, tokens: string[], value: unknown): unknown {
  if (tokens.length === 0) return value;
  const last = tokens.length - 1;
  const key = tokens[last] ?? "";
  return updateAt(doc, tokens, 0, (container) => {
    if (Array.isArray(container)) {
      if (!INDEX_RE.test(key) || Number(key) >= container.length) {
        throw new OperationFailure(`${pointerTo(tokens, tokens.length)} does not exist`);
      }
      const copy = container.slice();
      copy[Number(key)] = value;
      return copy;
    }
    if (isObject(container)) {
      if (!Object.hasOwn(container, key)) {
        throw new OperationFailure(`${pointerTo(tokens, tokens.length)} does not exist`);
      }
      const copy = { ...container };
      setOwn(copy, key, value);
      return copy;
    }
    throw notContainer(tokens);
  });
}

function isPrefix(prefix: string[], tokens: string[]): boolean {
  return prefix.length < tokens.length && prefix.every((t, i) => t === tokens[i]);
}

function applyOne(doc: unknown, op: Operation): unknown {
  switch (op.op) {
    case "add":
      return addAt(doc, op.path, op.value);
    case "remove":
      return removeAt(doc, op.path);
    case "replace":
      return replaceAt(doc, op.path, op.value);
    case "copy":
      return addAt(doc, op.path, getAt(doc, op.from));
    case "move": {
      const value = getAt(doc, op.from);
      if (op.pathText === op.fromText) return doc;
      if (isPrefix(op.from, op.path)) {
        throw new OperationFailure(
          `${op.fromText} cannot be moved into its own child ${op.pathText}`,
        );
      }
      return addAt(removeAt(doc, op.from), op.path, value);
    }
    case "test": {
      const actual = getAt(doc, op.path);
      if (!jsonEqual(actual, op.value)) {
        const where = op.pathText || "the document";
        throw new OperationFailure(`${where} is ${show(actual)}, not ${show(op.value)}`);
      }
      return doc;
    }
  }
}

/** Checks one operation's shape and parses its pointers. */
function validate(raw: unknown, index: number): Operation {
  const invalid = (why: string, op?: string) =>
    new JsonPatchError(
      `the ${op ? `"${op}" ` : ""}operation at index ${index} is invalid: ${why}`,
      op === undefined ? { index } : { index, op },
    );
  if (!isObject(raw)) throw invalid(`it must be an object, got ${show(raw)}`);
  const op = raw.op;
  if (typeof op !== "string" || !(OPS as readonly string[]).includes(op)) {
    throw invalid(`"op" must be one of ${OPS.map((o) => `"${o}"`).join(", ")}, got ${show(op)}`);
  }
  const name = op as OpName;
  const pointer = (field: "path" | "from"): [string[], string] => {
    const text = raw[field];
    if (typeof text !== "string") throw invalid(`"${field}" must be a string`, name);
    try {
      return [parsePointer(text), text];
    } catch (error) {
      if (!(error instanceof OperationFailure)) throw error;
      throw invalid(`"${field}" is not a JSON pointer: ${error.message}`, name);
    }
  };
  const [path, pathText] = pointer("path");
  let from: string[] = [];
  let fromText = "";
  if (name === "move" || name === "copy") [from, fromText] = pointer("from");
  const needsValue = name === "add" || name === "replace" || name === "test";
  if (needsValue && (!Object.hasOwn(raw, "value") || raw.value === undefined)) {
    throw invalid(`"value" is missing`, name);
  }
  return { index, op: name, path, pathText, from, fromText, value: raw.value };
}

/**
 * Applies a JSON patch (RFC 6902) to a document. The whole patch is
 * validated first; then the operations run in order, each on the result of
 * the previous one, and the first that fails aborts the patch.
 *
 * @param doc The document to patch; never mutated.
 * @param ops The patch: an array of operation objects (`op`, `path`, and
 * `value` or `from` as the op requires; other members are ignored).
 * @returns The patched document, sharing untouched subtrees with `doc`.
 * @throws {JsonPatchError} When the patch is malformed, a pointer does not
 * resolve, an index is out of bounds, or a `test` finds a different value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyJsonPatch } from "./json_patch.ts";
 *
 * const obj = { metadata: { resourceVersion: "4", finalizers: ["other"] } };
 * const patched = applyJsonPatch(obj, [
 *   { op: "test", path: "/metadata/resourceVersion", value: "4" },
 *   { op: "add", path: "/metadata/finalizers/-", value: "kopf.zalando.org/KopfFinalizerMarker" },
 * ]);
 * assert.deepEqual(patched, {
 *   metadata: {
 *     resourceVersion: "4",
 *     finalizers: ["other", "kopf.zalando.org/KopfFinalizerMarker"],
 *   },
 * });
 * assert.throws(
 *   () => applyJsonPatch(obj, [{ op: "test", path: "/metadata/resourceVersion", value: "3" }]),
 *   { name: "JsonPatchError" },
 * );
 * ```
 */
export function applyJsonPatch(doc: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) {
    const got = ops === null ? "null" : typeof ops === "object" ? "an object" : show(ops);
    throw new JsonPatchError(`a JSON patch must be an array of operations, got ${got}`);
  }
  const operations = ops.map(validate);
  let result = doc;
  for (const op of operations) {
    try {
      result = applyOne(result, op);
    } catch (error) {
      if (!(error instanceof OperationFailure)) throw error;
      throw new JsonPatchError(
        `the "${op.op}" operation at index ${op.index} failed: ${error.message}`,
        { index: op.index, op: op.op, cause: error },
      );
    }
  }
  return result;
}
