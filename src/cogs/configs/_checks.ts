/**
 * The checks behind the settings' setters: each returns the value when it is of the
 * expected kind and throws a one-line `TypeError` naming the setting when it is not
 * (`settings.watching.reconnectBackoff must be a non-negative number of seconds; got -1.`).
 *
 * @module
 */

/** Throws the one-line `TypeError` of a setting that got a value of the wrong kind. */
export function fail(name: string, expected: string, value: unknown): never {
  let shown: string;
  try {
    shown = typeof value === "function" ? "a function" : JSON.stringify(value) ?? String(value);
  } catch {
    shown = String(value);
  }
  throw new TypeError(`settings.${name} must be ${expected}; got ${shown}.`);
}

/** A non-negative, finite number of seconds. */
export function seconds(name: string, value: unknown): number {
  if (typeof value !== "number" || !(value >= 0) || value === Infinity) {
    fail(name, "a non-negative number of seconds", value);
  }
  return value;
}

/** A number of seconds, or `null` for none. */
export function optionalSeconds(name: string, value: unknown): number | null {
  return value === null ? null : seconds(name, value);
}

/** `true` or `false`. */
export function bool(name: string, value: unknown): boolean {
  if (typeof value !== "boolean") fail(name, "true or false", value);
  return value;
}

/** An integer of at least `min`. */
export function integer(name: string, value: unknown, min: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    fail(name, min === 0 ? "a non-negative integer" : `an integer of at least ${min}`, value);
  }
  return value;
}

/** A string, non-empty unless `allowEmpty`. */
export function text(name: string, value: unknown, allowEmpty = false): string {
  if (typeof value !== "string" || (!allowEmpty && value === "")) {
    fail(name, allowEmpty ? "a string" : "a non-empty string", value);
  }
  return value;
}

/** Backoff sequences: arrays are checked and copied; other iterables (even infinite) are kept as they are. */
export function delays(name: string, value: unknown): Iterable<number> {
  if (typeof value === "number") return Object.freeze([seconds(name, value)]);
  if (Array.isArray(value)) {
    return Object.freeze(value.map((item, i) => seconds(`${name}[${i}]`, item)));
  }
  if (
    value !== null && typeof value === "object" &&
    typeof (value as Iterable<unknown>)[Symbol.iterator] === "function"
  ) {
    return value as Iterable<number>;
  }
  fail(name, "a number or an iterable of non-negative numbers", value);
}
