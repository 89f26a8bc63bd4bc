/**
 * The errors of admission and conversion reviews, apart from the engines that serve the reviews
 * (admission.ts, conversion.ts): handlers throw them and webhook servers answer by them, and
 * `mod.ts` exports them, so an operator with no webhooks imports these classes and not the
 * engines (those load with the admission part, reactor/optional_parts.ts).
 *
 * @module
 */

import { PermanentError } from "../actions/errors.ts";

/**
 * Raised by admission handlers when the API operation under check is bad: the request is
 * refused with this message and code (default 500).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const err = new kopf.AdmissionError("spec.size must be positive.", 422);
 * assert.deepEqual([err.code, err instanceof kopf.PermanentError], [422, true]);
 * ```
 */
export class AdmissionError extends PermanentError {
  /** Always `"AdmissionError"`. */
  override name = "AdmissionError";
  /** The HTTP code of the refusal (the response's `status.code`). */
  readonly code: number;

  /**
   * Creates the error.
   *
   * @param message What is wrong, as the API client sees it.
   * @param code The status code (default 500).
   */
  constructor(message = "", code: number | null = 500) {
    super(message);
    this.code = code ?? 500;
  }
}

/** An admission request the webhook cannot serve (a server answers 400). */
export class WebhookError extends Error {
  /** Always `"WebhookError"`. */
  override name = "WebhookError";
}

/** The request lacks what admission needs (the object, the user info). */
export class MissingDataError extends WebhookError {
  /** Always `"MissingDataError"`. */
  override name = "MissingDataError";
}

/** The request is for a resource the operator does not know (a server answers 404). */
export class UnknownResourceError extends WebhookError {
  /** Always `"UnknownResourceError"`. */
  override name = "UnknownResourceError";
}

/** An object cannot be converted (no converter, a failing converter, a bad result). */
export class ConversionError extends WebhookError {
  /** Always `"ConversionError"`. */
  override name = "ConversionError";
}
