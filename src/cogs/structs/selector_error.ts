/**
 * The one error type of label and field selector parsing, kept apart so that
 * both parsers (and the API server, which turns it into a 400 Bad Request)
 * share it without importing each other.
 *
 * @module
 */

/**
 * A label or field selector that cannot be parsed or is not valid. The
 * message is one line in the style of Kubernetes, naming the bad part, e.g.
 * `unable to parse requirement: found ')', expected: identifier`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SelectorError } from "@kopf/kopf";
 *
 * const error = new SelectorError("unable to parse requirement: found ',', expected: identifier");
 * assert.equal(error.name, "SelectorError");
 * assert.ok(error instanceof Error);
 * ```
 */
export class SelectorError extends Error {
  /**
   * Creates the error.
   *
   * @param message What was wrong with the selector, on one line.
   * @param options The usual error options, e.g. a `cause`.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SelectorError";
  }
}
