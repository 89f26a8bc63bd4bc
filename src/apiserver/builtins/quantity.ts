/**
 * Kubernetes resource quantities (`100m`, `1Gi`, `2`, `1e3`) as kube-apiserver
 * reads and writes them: a container's requests and limits are decoded as
 * `resource.Quantity`, so a value that is not a quantity fails the decoding
 * (a 400 quoting apimachinery's error), values are compared exactly (a request
 * above its limit is a 422), and what is stored is the canonical form
 * (`1000m` → `1`, `1024Mi` → `1Gi`, `0.5` → `500m`), rounded up to milli
 * units as kube's `SetDefaults_ResourceList` rounds them.
 *
 * Why exact arithmetic: quantities such as `1.1Gi` or `100n` are not exact in
 * binary floating point, and kube compares and renders them exactly; a
 * quantity here is a `bigint` mantissa with a power of ten, so comparing and
 * rendering never round by accident. Only requests and limits pass through
 * this code, so the cost is a few `bigint` operations per container.
 *
 * @module
 */

/** The regular expression apimachinery quotes when a quantity does not parse. */
const SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

/** apimachinery's `ErrFormatWrong`. */
export const QUANTITY_FORMAT_ERROR = `quantities must match the regular expression '${SPLIT_RE}'`;

const SPLIT = new RegExp(SPLIT_RE);

const DECIMAL: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL_SUFFIX = new Map(Object.entries(DECIMAL).map(([s, e]) => [e, s]));
const BINARY_SUFFIX = new Map(Object.entries(BINARY).map(([s, e]) => [e, s]));

/** A parsed quantity: `mantissa × 10^exponent`, and the format it was written in. */
export interface Quantity {
  /** The digits, sign included. */
  mantissa: bigint;
  /** The power of ten. */
  exponent: number;
  /** How kube renders it: with an SI suffix, a binary suffix, or an exponent. */
  format: "DecimalSI" | "BinarySI" | "DecimalExponent";
}

/**
 * Parses a quantity as apimachinery's `ParseQuantity` does (a JSON number is
 * read from its decimal text, as `Quantity.UnmarshalJSON` reads it).
 *
 * @param value The value as sent.
 * @returns The quantity, or the error apimachinery would give.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseQuantity } from "./quantity.ts";
 * assert.deepEqual(parseQuantity("1Gi"), { mantissa: 1073741824n, exponent: 0, format: "BinarySI" });
 * assert.equal(typeof parseQuantity("abc"), "string");
 * ```
 */
export function parseQuantity(value: unknown): Quantity | string {
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text !== "string") return QUANTITY_FORMAT_ERROR;
  // The same few quantities ("100m", "64Mi") come in every pod spec, defaulted and then
  // validated: parsed once each (a bounded cache; the results are frozen, never changed).
  let parsed = PARSED.get(text);
  if (parsed === undefined) {
    if (PARSED.size >= PARSED_CAP) PARSED.clear();
    parsed = parse(text);
    PARSED.set(text, typeof parsed === "string" ? parsed : Object.freeze(parsed));
  }
  return parsed;
}

const PARSED_CAP = 1024;
const PARSED = new Map<string, Quantity | string>();

function parse(text: string): Quantity | string {
  const m = SPLIT.exec(text);
  if (!m) return QUANTITY_FORMAT_ERROR;
  const number = m[1]!;
  const suffix = m[2]!;
  const num = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(number);
  if (!num || (num[2] === "" && (num[3] ?? "") === "")) {
    return "unable to parse numeric part of quantity";
  }
  const fraction = num[3] ?? "";
  let mantissa = BigInt(`${num[2] || "0"}${fraction}`);
  if (num[1] === "-") mantissa = -mantissa;
  let exponent = fraction.length ? -fraction.length : 0;
  let format: Quantity["format"];
  if (Object.hasOwn(DECIMAL, suffix)) {
    exponent += DECIMAL[suffix]!;
    format = "DecimalSI";
  } else if (Object.hasOwn(BINARY, suffix)) {
    mantissa *= 1024n ** BigInt(BINARY[suffix]!);
    format = "BinarySI";
  } else {
    const e = /^[eE]([+-]?\d+)$/.exec(suffix);
    if (!e) return "unable to parse quantity's suffix";
    exponent += Number(e[1]);
    format = "DecimalExponent";
  }
  return { mantissa, exponent, format };
}

/** The quantity scaled to `10^exponent` units (exact when `exponent` is not above its own). */
function scaled(q: Quantity, exponent: number): bigint {
  return q.exponent >= exponent
    ? q.mantissa * 10n ** BigInt(q.exponent - exponent)
    : q.mantissa / 10n ** BigInt(exponent - q.exponent);
}

/**
 * Compares two quantities exactly.
 *
 * @param a One quantity.
 * @param b The other.
 * @returns Negative, zero or positive as `a` is less than, equal to or greater than `b`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compareQuantities, parseQuantity, type Quantity } from "./quantity.ts";
 * const q = (s: string) => parseQuantity(s) as Quantity;
 * assert.equal(compareQuantities(q("1"), q("1000m")), 0);
 * assert.ok(compareQuantities(q("1Gi"), q("1G")) > 0);
 * ```
 */
export function compareQuantities(a: Quantity, b: Quantity): number {
  if (a.exponent === b.exponent) {
    return a.mantissa < b.mantissa ? -1 : a.mantissa > b.mantissa ? 1 : 0;
  }
  const e = Math.min(a.exponent, b.exponent);
  const x = scaled(a, e);
  const y = scaled(b, e);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Rounds up (away from zero) to milli units, as kube's `SetDefaults_ResourceList` does. */
function roundedToMilli(q: Quantity): Quantity {
  if (q.exponent >= -3) return q;
  const unit = 10n ** BigInt(-3 - q.exponent);
  const negative = q.mantissa < 0n;
  const abs = negative ? -q.mantissa : q.mantissa;
  let milli = abs / unit;
  if (milli * unit !== abs) milli += 1n;
  return { ...q, mantissa: negative ? -milli : milli, exponent: -3 };
}

/**
 * A quantity in kube's canonical form (`Quantity.String()`), after the
 * round-up to milli units that kube's defaulting applies to requests and limits.
 *
 * @param q The quantity.
 * @returns The canonical text, e.g. `"500m"`, `"1Gi"`, `"1536Mi"`, `"129e6"`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalQuantity, parseQuantity, type Quantity } from "./quantity.ts";
 * const c = (s: string | number) => canonicalQuantity(parseQuantity(s) as Quantity);
 * assert.deepEqual([c("1000m"), c("1024Mi"), c(0.5), c("1.5Gi"), c("100u")], ["1", "1Gi", "500m", "1536Mi", "1m"]);
 * ```
 */
export function canonicalQuantity(q: Quantity): string {
  let text = CANONICAL.get(q);
  if (text === undefined) CANONICAL.set(q, text = canonical(q));
  return text;
}

/** Canonical forms of the parsed (cached, frozen) quantities. */
const CANONICAL = new WeakMap<Quantity, string>();

function canonical(q: Quantity): string {
  const r = roundedToMilli(q);
  if (r.mantissa === 0n) return "0";
  let format = r.format;
  if (format === "BinarySI") {
    const whole = r.exponent >= 0 || r.mantissa % 10n ** BigInt(-r.exponent) === 0n;
    const small = compareQuantities(r, { mantissa: 1024n, exponent: 0, format }) < 0 &&
      compareQuantities(r, { mantissa: -1024n, exponent: 0, format }) > 0;
    if (small || !whole) format = "DecimalSI";
    else {
      let value = scaled(r, 0);
      let power = 0;
      while (value % 1024n === 0n && power < 6) {
        value /= 1024n;
        power++;
      }
      return `${value}${BINARY_SUFFIX.get(power) ?? ""}`;
    }
  }
  let mantissa = r.mantissa;
  let exponent = r.exponent;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent++;
  }
  const down = ((exponent % 3) + 3) % 3;
  mantissa *= 10n ** BigInt(down);
  exponent -= down;
  if (format === "DecimalSI" && DECIMAL_SUFFIX.has(exponent)) {
    return `${mantissa}${DECIMAL_SUFFIX.get(exponent)}`;
  }
  return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`;
}
