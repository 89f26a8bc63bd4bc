/**
 * A time limit on every test, doc tests included: `deno task test` preloads
 * [test_preload.ts](./test_preload.ts) (`deno test --preload tools/test_preload.ts …`), which
 * calls {@link installTimeLimit}: every `Deno.test` that does not set its own `timeout` gets the
 * default one, so a test that hangs fails by name ("Test timed out
 * after … ms", with its file and line) instead of eating CI's budget.
 *
 * Why a preload that sets `Deno.test`'s own `timeout`: `deno test` has no flag or config for a
 * default limit, but since 2.9 each test takes a `timeout` that the runtime enforces itself — it
 * stops an asynchronous hang and a synchronous hot loop alike (a `Promise.race` in a wrapper
 * would miss the loop, which starves the timer, and would leave the work running). The preload
 * runs in every test module's isolate before the module, and doc tests register through the same
 * `Deno.test`, so one file covers them all. The reported location stays the test's own: the
 * wrapper passes its caller's place through the `Symbol.for("Deno.test.location")` that
 * `Deno.test` reads (a test helper that registers tests sets it first, with {@link at}, to name
 * its own caller's place).
 *
 * A test that honestly needs longer says so where it is written: `Deno.test({ name, timeout:
 * 300_000 }, fn)`. `KOPF_TEST_TIME_LIMIT_MS` sets the default for a run (`0` for none, e.g. when
 * debugging with breakpoints). `Deno.test.each` is not wrapped (the suite does not use it).
 *
 * @module
 */

/** The default limit of one test, in milliseconds: see {@link defaultTimeLimitMs}. */
export const DEFAULT_TIME_LIMIT_MS = 120_000;

/** Where `Deno.test` looks for a test's location given by a wrapper (`"file:line:column"`). */
const LOCATION = Symbol.for("Deno.test.location");

/** Deno.test's argument shapes, as they come. */
type TestArgs = [unknown, unknown?, unknown?];

/**
 * The default time limit for this run: `KOPF_TEST_TIME_LIMIT_MS` if set, else
 * {@link DEFAULT_TIME_LIMIT_MS}.
 *
 * @param env The variable's value (the environment's by default).
 * @returns Milliseconds; `0` means no limit.
 * @throws {TypeError} If the value is not a whole number of milliseconds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULT_TIME_LIMIT_MS, defaultTimeLimitMs } from "./test_time_limit.ts";
 * assert.equal(defaultTimeLimitMs("5000"), 5000);
 * assert.equal(defaultTimeLimitMs(""), DEFAULT_TIME_LIMIT_MS);
 * assert.throws(() => defaultTimeLimitMs("5s"), TypeError);
 * ```
 */
export function defaultTimeLimitMs(env: string | undefined = readEnv()): number {
  if (env === undefined || env === "") return DEFAULT_TIME_LIMIT_MS;
  const ms = Number(env);
  if (!Number.isInteger(ms) || ms < 0) {
    throw new TypeError(
      `KOPF_TEST_TIME_LIMIT_MS=${env}: give a whole number of milliseconds (0 for no limit)`,
    );
  }
  return ms;
}

function readEnv(): string | undefined {
  try {
    return Deno.env.get("KOPF_TEST_TIME_LIMIT_MS");
  } catch {
    return undefined; // No --allow-env: the default.
  }
}

/**
 * The place in a stack trace of the first frame outside this module: who called `Deno.test`.
 *
 * @param stack An `Error().stack`.
 * @param skip The URLs of modules whose frames are skipped (this one, a helper's).
 * @returns `"file:line:column"`, or `undefined` if no frame qualifies.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { callerLocation } from "./test_time_limit.ts";
 * const stack = "Error\n    at test (file:///t/tools/x.ts:9:3)\n    at file:///t/a_test.ts:4:6";
 * assert.equal(callerLocation(stack, "file:///t/tools/x.ts"), "file:///t/a_test.ts:4:6");
 * ```
 */
export function callerLocation(stack: string, ...skip: string[]): string | undefined {
  for (const line of stack.split("\n").slice(1)) {
    const place = /((?:file|https?|data|jsr|npm):\S*?:\d+:\d+)\)?$/.exec(line.trim())?.[1];
    if (place && !skip.some((url) => place.startsWith(`${url}:`))) return place;
  }
  return undefined;
}

/**
 * Marks a test function with the place it is registered from, for a helper that registers tests
 * for its callers: the failure then names the caller's line, not the helper's.
 *
 * @param fn The test function (a fresh one: the mark stays on it).
 * @param helper The helper module's URL (`import.meta.url`): its frames are skipped.
 * @returns The same function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { at } from "./test_time_limit.ts";
 * const fn = at(() => {}, "file:///a_helper.ts");
 * const place = (fn as unknown as Record<symbol, string>)[Symbol.for("Deno.test.location")];
 * // This example's own line: neither at() nor the helper.
 * assert.match(place ?? "", /^file:.*:\d+:\d+$/);
 * assert.doesNotMatch(place ?? "", /test_time_limit\.ts:\d+:\d+$|a_helper/);
 * ```
 */
export function at<F extends Deno.TestDefinition["fn"]>(fn: F, helper: string): F {
  const place = callerLocation(new Error().stack ?? "", import.meta.url, helper);
  if (place) (fn as F & { [LOCATION]?: string })[LOCATION] = place;
  return fn;
}

/**
 * One test definition from any of `Deno.test`'s argument shapes, or `undefined` for a shape it
 * does not know (passed on untouched, for `Deno.test` to judge).
 *
 * @param args The arguments as given.
 * @returns The definition (a fresh object; the caller's options are not changed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { definition } from "./test_time_limit.ts";
 * const fn = () => {};
 * assert.deepEqual(definition(["a", fn]), { name: "a", fn });
 * assert.deepEqual(definition(["a", { timeout: 5 }, fn]), { timeout: 5, name: "a", fn });
 * assert.deepEqual(definition([{ name: "a", fn }]), { name: "a", fn });
 * assert.equal(definition([42]), undefined);
 * ```
 */
export function definition(args: TestArgs): Deno.TestDefinition | undefined {
  const [a, b, c] = args;
  if (typeof a === "string") {
    if (typeof b === "function" && c === undefined) {
      return { name: a, fn: b as Deno.TestDefinition["fn"] };
    }
    if (typeof b === "object" && b !== null && typeof c === "function") {
      return { ...b, name: a, fn: c as Deno.TestDefinition["fn"] };
    }
    return undefined;
  }
  if (typeof a === "function" && b === undefined) {
    return { name: a.name, fn: a as Deno.TestDefinition["fn"] };
  }
  if (typeof a === "object" && a !== null) {
    const options = a as Partial<Deno.TestDefinition>;
    if (typeof b === "function" && c === undefined) {
      return { ...options, name: options.name ?? b.name, fn: b as Deno.TestDefinition["fn"] };
    }
    if (b === undefined && typeof options.fn === "function") {
      return { ...options, name: options.name ?? options.fn.name, fn: options.fn };
    }
  }
  return undefined;
}

/**
 * Replaces `Deno.test` (and `Deno.test.only`, `Deno.test.ignore`) with one that gives each test
 * without a `timeout` the default limit. Called once when this module is preloaded.
 *
 * @param limitMs The default limit (`0`: leave `Deno.test` as it is).
 * @returns Nothing; `Deno.test` is replaced.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { installTimeLimit } from "./test_time_limit.ts";
 * const before = Deno.test;
 * installTimeLimit(0); // no limit: nothing replaced
 * assert.equal(Deno.test, before);
 * ```
 */
export function installTimeLimit(limitMs: number): void {
  if (limitMs === 0 || typeof Deno.test !== "function") return;
  const original = Deno.test;
  const self = import.meta.url;
  const register = (args: TestArgs, overrides: Partial<Deno.TestDefinition>): void => {
    const def = definition(args);
    if (!def) return (original as (...a: unknown[]) => void)(...args);
    const place = callerLocation(new Error().stack ?? "", self);
    const fn = def.fn as Deno.TestDefinition["fn"] & { [LOCATION]?: string };
    if (place && fn[LOCATION] === undefined) fn[LOCATION] = place;
    original({ timeout: limitMs, ...def, ...overrides });
  };
  const test = (...args: TestArgs) => register(args, {});
  Object.assign(test, original, {
    only: (...args: TestArgs) => register(args, { only: true }),
    ignore: (...args: TestArgs) => register(args, { ignore: true }),
  });
  // `Deno.test` is read-only to the type checker, writable at run time.
  Object.defineProperty(Deno, "test", { value: test, writable: true, configurable: true });
}
