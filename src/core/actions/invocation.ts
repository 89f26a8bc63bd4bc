/**
 * What the action layer knows about a handler: a function (sync or async)
 * called with one context object, its id, and its error options. Resource
 * handlers, activities, daemons and sub-handlers all build on this shape.
 *
 * @module
 */

/** A JSON-ish object with any fields, for handler convenience (`spec.size`). */
// deno-lint-ignore no-explicit-any
export type AnyObject = Record<string, any>;

/** What to do with arbitrary errors of a handler (Kopf's `kopf.ErrorsMode`). */
export type ErrorsMode = "temporary" | "permanent" | "ignored";

/** A handler function of any kind: sync or async, one context argument. */
// deno-lint-ignore no-explicit-any
export type HandlerFn<C = any> = (context: C) => unknown;

/** A registered handler: the parts every kind has. */
export interface BaseHandler {
  /** The handler id, unique per resource and handler kind; the key of its progress record. */
  id: string;
  /** The function to call with the context. */
  fn: HandlerFn;
  /** Any value, passed to the handler as `param`. */
  param: unknown;
  /** What to do on arbitrary errors; `undefined` means `"temporary"` (retry). */
  errors: ErrorsMode | undefined;
  /** Seconds after the first try when the handler fails (`HandlerTimeoutError`); `undefined`: never. */
  timeout: number | undefined;
  /** How many retries before the handler fails (`HandlerRetriesError`); `undefined`: unlimited. */
  retries: number | undefined;
  /** Seconds before a retry after an arbitrary error; `undefined`: `settings.execution.defaultBackoff` (60). */
  backoff: number | undefined;
}

/**
 * The default id of a handler function: its name, or a fallback for anonymous functions.
 *
 * @param fn The function.
 * @param fallback What to use for an anonymous function.
 * @returns The id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultId } from "./invocation.ts";
 * function createFn() {}
 * assert.deepEqual([defaultId(createFn, "x"), defaultId(() => {}, "x")], ["createFn", "x"]);
 * ```
 */
export function defaultId(fn: HandlerFn, fallback: string): string {
  const name = fn.name;
  if (!name || name === "anonymous" || name.startsWith("bound ")) return fallback;
  return name;
}

/**
 * Where runs of handlers are recorded (the operator's metrics); without one, nothing is recorded.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { HandlerMetrics } from "@kopf/kopf";
 * const runs: string[] = [];
 * const metrics: HandlerMetrics = { handlerRun: (id, kind) => void runs.push(`${kind}/${id}`) };
 * metrics.handlerRun("createFn", "changing", 0.1, false);
 * assert.deepEqual(runs, ["changing/createFn"]);
 * ```
 */
export interface HandlerMetrics {
  /**
   * One run of a handler has ended.
   *
   * @param handler The handler's id.
   * @param kind `changing`, `event`, `activity`, `daemon`, `timer`, …
   * @param seconds How long it ran.
   * @param failed Whether it failed (temporarily or permanently).
   */
  handlerRun(handler: string, kind: string, seconds: number, failed: boolean): void;
}
