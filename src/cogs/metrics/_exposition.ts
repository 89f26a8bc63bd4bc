/**
 * The pieces of the Prometheus text exposition format 0.0.4 that every metric
 * type shares: escaping, number formatting, name checks.
 *
 * Why a file of its own: the metric types (`_families.ts`) and the registry
 * write the same lines, and the format's rules are easier to check in one
 * place than spread over three writers.
 *
 * @module
 */

/** The content type of the text exposition format 0.0.4. */
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * A HELP text as the format wants it: backslashes and newlines escaped.
 *
 * @param text The text.
 * @returns The escaped text.
 */
export function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/**
 * A label value as the format wants it: backslashes, double quotes and newlines escaped.
 *
 * @param value The value.
 * @returns The escaped value, without the quotes around it.
 */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

/**
 * A sample value: integers plainly, `+Inf`, `-Inf` and `NaN` by name, other numbers as
 * JavaScript prints them (`0.125`, `1e-7`), which Prometheus parses as Go's `ParseFloat`.
 *
 * @param value The value.
 * @returns The text.
 */
export function formatValue(value: number): string {
  if (Number.isFinite(value)) return String(value);
  if (Number.isNaN(value)) return "NaN";
  return value > 0 ? "+Inf" : "-Inf";
}

/**
 * Label pairs as they go between the braces: `a="x",b="y"` (empty for no labels).
 *
 * @param names The label names.
 * @param values Their values, in the same order.
 * @returns The pairs, escaped.
 */
export function formatLabels(names: readonly string[], values: readonly string[]): string {
  let out = "";
  for (let i = 0; i < names.length; i++) {
    if (i) out += ",";
    out += `${names[i]}="${escapeLabelValue(values[i]!)}"`;
  }
  return out;
}

/**
 * Checks a metric's name and label names (at registration, not per sample).
 *
 * @param name The metric's name.
 * @param labelNames Its label names.
 * @param reserved Label names the metric type keeps for itself (`le` for histograms).
 * @throws {TypeError} When a name is not valid in Prometheus or a label name repeats.
 */
export function checkNames(
  name: string,
  labelNames: readonly string[],
  reserved: readonly string[] = [],
): void {
  if (!METRIC_NAME.test(name)) {
    throw new TypeError(
      `Invalid metric name ${JSON.stringify(name)}: use [a-zA-Z_:][a-zA-Z0-9_:]*.`,
    );
  }
  const seen = new Set<string>();
  for (const label of labelNames) {
    if (!LABEL_NAME.test(label) || label.startsWith("__")) {
      throw new TypeError(
        `Invalid label name ${JSON.stringify(label)} of ${name}: use [a-zA-Z_][a-zA-Z0-9_]*, ` +
          "not starting with __.",
      );
    }
    if (reserved.includes(label)) {
      throw new TypeError(`The label name ${JSON.stringify(label)} of ${name} is reserved.`);
    }
    if (seen.has(label)) {
      throw new TypeError(`The label name ${JSON.stringify(label)} of ${name} repeats.`);
    }
    seen.add(label);
  }
}
