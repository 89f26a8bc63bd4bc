/**
 * Turns Deno's permission errors into one-line advice: an operator runs with
 * narrow `--allow-net/--allow-read/--allow-env`, and a missing permission
 * must say which flag to add, not print a stack trace.
 *
 * @module
 */

const FLAGS: Record<string, string> = {
  net: "--allow-net",
  read: "--allow-read",
  write: "--allow-write",
  env: "--allow-env",
  run: "--allow-run",
  sys: "--allow-sys",
  ffi: "--allow-ffi",
  import: "--allow-import",
};

/**
 * Whether an error is Deno's "permission denied" (`Deno.errors.NotCapable`,
 * also as the cause of a wrapping error).
 *
 * @param error Any error.
 * @returns The permission error, or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { permissionError } from "./_permissions.ts";
 * const e = new Deno.errors.NotCapable('Requires read access to "/x", run again with the --allow-read flag');
 * assert.deepEqual(permissionError(new Error("wrapped", { cause: e })) === e, true);
 * ```
 */
export function permissionError(error: unknown): Error | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof Deno.errors.NotCapable || e.name === "NotCapable") return e;
  }
  return undefined;
}

/**
 * Advice for a permission error: what is needed and the flag that grants it,
 * e.g. `needs read access to "/etc/kube/config": run with --allow-read=/etc/kube/config`.
 *
 * @param error A `Deno.errors.NotCapable`.
 * @returns The advice (one line).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { permissionHint } from "./_permissions.ts";
 * const e = new Deno.errors.NotCapable('Requires net access to "10.0.0.1:443", run again with the --allow-net flag');
 * assert.deepEqual(permissionHint(e), 'needs net access to "10.0.0.1:443": run with --allow-net=10.0.0.1:443');
 * ```
 */
export function permissionHint(error: Error): string {
  const m = /Requires (\w+) access to "?([^",]*)"?/.exec(error.message);
  if (!m) return `${error.message}`;
  const [, kind, target] = m as unknown as [string, string, string];
  const flag = FLAGS[kind] ?? `--allow-${kind}`;
  return `needs ${kind} access to "${target}": run with ${flag}${target ? `=${target}` : ""}`;
}
