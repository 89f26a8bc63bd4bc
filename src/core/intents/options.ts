/**
 * The handler options, declared once: for each option, the check of its value
 * and the handler kinds that take it. Registration validates every call
 * against this table (an option of another kind is refused with one line
 * naming the option and the kinds that take it), and sub-handlers take from
 * it what they inherit from their parent. Adding a kind of handler (as the
 * admission webhooks were) is one entry per option it takes.
 *
 * Why a table: the options used to be listed in six places, and the lists
 * drifted — `kopf.on.create(…, { interval: 60 }, fn)` was accepted and did
 * nothing, because the timers' options had been added to a shared list.
 *
 * @module
 */

import { fieldPathProblem } from "../../cogs/structs/dicts.ts";
import { ABSENT, PRESENT } from "./markers.ts";
import { OperatorRegistry } from "./registry.ts";

/** The kinds of handlers, as registration names them. */
export type HandlerKind =
  | "create"
  | "update"
  | "delete"
  | "resume"
  | "field"
  | "event"
  | "daemon"
  | "timer"
  | "index"
  | "reconcile"
  | "startup"
  | "cleanup"
  | "login"
  | "probe"
  | "subhandler"
  | "validate"
  | "mutate"
  | "convert";

/**
 * How an option's value is checked: what it must be (for "<key> must be <this>, not <value>."),
 * or a whole problem line (after "<call>(...): "), or undefined when it is fine.
 */
type Check = (
  value: unknown,
  key: string,
  handler: string | undefined,
) => string | { line: string } | undefined;

/** One option: what its value must be, the kinds that take it, whether sub-handlers inherit it. */
interface OptionSpec {
  check: Check;
  kinds: readonly HandlerKind[];
  /** A sub-handler without its own value takes its parent's. */
  inherit?: boolean;
}

const CHANGING = ["create", "update", "delete", "resume", "field"] as const;
const SPAWNING = ["daemon", "timer"] as const;
const ACTIVITIES = ["startup", "cleanup", "login", "probe"] as const;
/** The kinds that handle objects of a resource (and so take a resource and its filters). */
const RESOURCE = [...CHANGING, "event", ...SPAWNING, "index", "reconcile", "subhandler"] as const;
/** Admission webhooks: no retries, so no errors/timeout/retries/backoff (the docs' "Admission errors"). */
const WEBHOOKS = ["validate", "mutate"] as const;
/** The kinds that run again after a failure (and so take the error options). */
const RETRIED = [...RESOURCE, ...ACTIVITIES] as const;
/** The kinds filtered by the object (labels, annotations, field/value, when). */
const FILTERED = [
  ...CHANGING,
  "event",
  ...SPAWNING,
  "index",
  "reconcile",
  ...WEBHOOKS,
  "subhandler",
] as const;
const ALL = [...RETRIED, ...WEBHOOKS, "convert"] as const;
/** Kinds registered by a call (sub-handlers go to their parent, not to a registry). */
const REGISTERED = ALL.filter((k) => k !== "subhandler");
const OPERATIONS = ["CREATE", "UPDATE", "DELETE", "CONNECT"];

const seconds: Check = (v) =>
  typeof v === "number" && v >= 0 && v !== Infinity ? undefined : "a number of 0 or more (seconds)";
/** A timer's period: 0 would run it in a loop with no pause (and a log line a run). */
const period: Check = (v) =>
  typeof v === "number" && v > 0 && v !== Infinity
    ? undefined
    : "a number of seconds above 0 (a timer of interval 0 would run without a pause)";
const count: Check = (v) =>
  typeof v === "number" && Number.isInteger(v) && v >= 0
    ? undefined
    : "a whole number of 0 or more";
const flag: Check = (v) => (typeof v === "boolean" ? undefined : "true or false");
const text: Check = (v) => (typeof v === "string" && v !== "" ? undefined : "a non-empty string");
const anything: Check = () => undefined;
const errors: Check = (v) =>
  v === "temporary" || v === "permanent" || v === "ignored"
    ? undefined
    : `"temporary", "permanent" or "ignored"`;
const callback: Check = (v) => (typeof v === "function" ? undefined : "a function");
/** A label or annotation key: an optional DNS-subdomain prefix and "/", then a name. */
const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME_RULE = `at most 63 letters, digits, "-", "_" and "." that start and end with a ` +
  `letter or digit`;

function isQualifiedName(key: string): boolean {
  const slash = key.indexOf("/");
  if (slash < 0) return NAME.test(key);
  const prefix = key.slice(0, slash);
  return prefix.length <= 253 && PREFIX.test(prefix) && NAME.test(key.slice(slash + 1));
}

/** Label or annotation filters: valid keys; values a string, PRESENT, ABSENT or a callback. */
function metaFilter(what: "label" | "annotation"): Check {
  return (v, key) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) {
      return "an object of names to values (or kopf.PRESENT/ABSENT/callbacks)";
    }
    for (const [name, value] of Object.entries(v)) {
      if (!isQualifiedName(name)) {
        return {
          line:
            `${key} has the key ${show(name)}, which is not ${
              what === "label" ? "a label" : "an annotation"
            } key; use ${NAME_RULE}, optionally prefixed with a DNS subdomain and "/" ` +
            `(e.g. "app", "example.com/app").`,
        };
      }
      const valid = typeof value === "string" || value === PRESENT || value === ABSENT ||
        typeof value === "function";
      if (!valid) {
        return {
          line: `${key}[${show(name)}] must be a string, kopf.PRESENT, kopf.ABSENT or a ` +
            `function (value) => boolean, not ${show(value)}.`,
        };
      }
      if (what === "label" && typeof value === "string" && value !== "" && !NAME.test(value)) {
        return {
          line: `${key}[${show(name)}] is ${
            show(value)
          }, which no label can have; a label value is ${NAME_RULE} (or empty).`,
        };
      }
    }
    return undefined;
  };
}
/** A field path: well formed, or it would never match (e.g. `"spec..x["`). */
const field: Check = (v, key, handler) => {
  if (typeof v !== "string" && !Array.isArray(v) || v === "") {
    return `a dotted path ("spec.size") or a list of keys`;
  }
  const problem = fieldPathProblem(v);
  if (problem === undefined) return undefined;
  const whose = handler ? ` of the handler '${handler}'` : "";
  return { line: `${key} ${show(v)}${whose} ${problem}.` };
};
const operation: Check = (v) =>
  typeof v === "string" && OPERATIONS.includes(v)
    ? undefined
    : `one of "CREATE", "UPDATE", "DELETE", "CONNECT"`;
const operations: Check = (v) =>
  Array.isArray(v) && v.length > 0 && v.every((o) => OPERATIONS.includes(o))
    ? undefined
    : `a non-empty list of "CREATE", "UPDATE", "DELETE", "CONNECT"`;
const version: Check = (v) =>
  typeof v === "string" && /^([a-z0-9.-]+\/)?[a-z0-9]+$/.test(v)
    ? undefined
    : `a version of the resource ("v1", "v2beta1")`;
const positive: Check = (v) =>
  typeof v === "number" && v > 0 && v !== Infinity ? undefined : "a number above 0 (seconds)";
/** Owned resources: a non-empty list of names, objects or typed resources. */
const owned: Check = (v) =>
  Array.isArray(v) && v.length > 0 &&
    v.every((r) => (typeof r === "string" && r !== "") || (typeof r === "object" && r !== null))
    ? undefined
    : `a non-empty list of resources ("pods", { group: "apps", plural: "deployments" }, ` +
      `a kopf.resource(...))`;
const registry: Check = (v) =>
  v instanceof OperatorRegistry ? undefined : "a kopf.OperatorRegistry";

/**
 * Every option of every kind of handler.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OPTIONS } from "./options.ts";
 * assert.deepEqual(OPTIONS.interval?.kinds, [ "timer" ]);
 * ```
 */
export const OPTIONS: Readonly<Record<string, OptionSpec>> = {
  id: { check: text, kinds: ALL },
  param: { check: anything, kinds: ALL, inherit: true },
  errors: { check: errors, kinds: RETRIED },
  timeout: { check: seconds, kinds: RETRIED },
  retries: { check: count, kinds: RETRIED },
  backoff: { check: seconds, kinds: RETRIED },
  registry: { check: registry, kinds: REGISTERED },
  labels: { check: metaFilter("label"), kinds: FILTERED },
  annotations: { check: metaFilter("annotation"), kinds: FILTERED },
  when: { check: callback, kinds: FILTERED },
  field: { check: field, kinds: FILTERED },
  value: { check: anything, kinds: FILTERED },
  old: { check: anything, kinds: ["update", "field", "subhandler"] },
  new: { check: anything, kinds: ["update", "field", "subhandler"] },
  optional: { check: flag, kinds: ["delete"] },
  deleted: { check: flag, kinds: ["resume"] },
  initialDelay: { check: seconds, kinds: SPAWNING },
  cancellationBackoff: { check: seconds, kinds: ["daemon"] },
  cancellationTimeout: { check: seconds, kinds: ["daemon"] },
  cancellationPolling: { check: seconds, kinds: ["daemon"] },
  interval: { check: period, kinds: ["timer"] },
  sharp: { check: flag, kinds: ["timer"] },
  idle: { check: seconds, kinds: ["timer"] },
  operation: { check: operation, kinds: WEBHOOKS },
  operations: { check: operations, kinds: WEBHOOKS },
  subresource: { check: text, kinds: WEBHOOKS },
  persistent: { check: flag, kinds: WEBHOOKS },
  sideEffects: { check: flag, kinds: WEBHOOKS },
  ignoreFailures: { check: flag, kinds: WEBHOOKS },
  owns: { check: owned, kinds: ["reconcile"] },
  resync: { check: positive, kinds: ["reconcile"] },
  debounce: { check: seconds, kinds: ["reconcile"] },
  from: { check: version, kinds: ["convert"] },
  to: { check: version, kinds: ["convert"] },
};

/** How the kinds are called, for messages. */
const CALLS: Readonly<Record<HandlerKind, string>> = {
  create: "kopf.on.create",
  update: "kopf.on.update",
  delete: "kopf.on.delete",
  resume: "kopf.on.resume",
  field: "kopf.on.field",
  event: "kopf.on.event",
  daemon: "kopf.daemon",
  timer: "kopf.timer",
  index: "kopf.index",
  reconcile: "kopf.on.reconcile",
  startup: "kopf.on.startup",
  cleanup: "kopf.on.cleanup",
  login: "kopf.on.login",
  probe: "kopf.on.probe",
  subhandler: "kopf.register",
  validate: "kopf.on.validate",
  mutate: "kopf.on.mutate",
  convert: "kopf.on.convert",
};

/**
 * Whether an object given to a registration is an options object (rather than a resource).
 *
 * @param obj The object.
 * @returns True if any of its keys is an option of some kind.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasOptionKeys } from "./options.ts";
 * assert.deepEqual(hasOptionKeys({ group: "kopf.dev", plural: "kopfexamples" }), false);
 * assert.deepEqual(hasOptionKeys({ id: "x" }), true);
 * ```
 */
export function hasOptionKeys(obj: object): boolean {
  return Object.keys(obj).some((k) => Object.hasOwn(OPTIONS, k));
}

/**
 * Checks a registration's options against the table: each must be known, belong to this
 * kind, and have a value of its form.
 *
 * @param what The call, for messages (e.g. `kopf.on.create`).
 * @param kind The handler kind.
 * @param options The options given.
 * @param handler The handler's id or function name, for the lines about its filters.
 * @returns The error message (one line), or undefined when all is well.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkOptions } from "./options.ts";
 * assert.deepEqual(checkOptions("kopf.on.create", "create", { interval: 60 }), "kopf.on.create(...): the option \"interval\" is not for create handlers; it is for kopf.timer.");
 * ```
 */
export function checkOptions(
  what: string,
  kind: HandlerKind,
  options: Record<string, unknown>,
  handler?: string,
): string | undefined {
  for (const [key, value] of Object.entries(options)) {
    const spec = Object.hasOwn(OPTIONS, key) ? OPTIONS[key] : undefined;
    if (!spec) {
      const known = Object.keys(OPTIONS).filter((k) => OPTIONS[k]!.kinds.includes(kind));
      return `${what}(...): unknown option "${key}"; the options of ${noun(kind)} are: ${
        known.join(", ")
      }.`;
    }
    if (!spec.kinds.includes(kind)) {
      return `${what}(...): the option "${key}" is not for ${noun(kind)}; it is for ${
        takers(spec.kinds)
      }.`;
    }
    if (value === undefined) continue;
    const problem = spec.check(value, key, handler);
    if (typeof problem === "string") {
      return `${what}(...): ${key} must be ${problem}, not ${show(value)}.`;
    }
    if (problem) return `${what}(...): ${problem.line}`;
  }
  if (options.operation !== undefined && options.operations !== undefined) {
    return `${what}(...): give operation or operations, not both.`;
  }
  if (options.value !== undefined && (options.old !== undefined || options.new !== undefined)) {
    return `${what}(...): value cannot be combined with old/new; use value (either side of ` +
      `the change) or old/new (each side), not both.`;
  }
  return undefined;
}

/**
 * The options a sub-handler takes from its parent when it does not give its own.
 *
 * @returns The inherited option names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { inheritedOptions } from "./options.ts";
 * assert.deepEqual(inheritedOptions(), [ "param" ]);
 * ```
 */
export function inheritedOptions(): string[] {
  return Object.keys(OPTIONS).filter((k) => OPTIONS[k]!.inherit);
}

function noun(kind: HandlerKind): string {
  if (kind === "subhandler") return "sub-handlers";
  if (kind === "index") return "indexing handlers";
  if (kind === "reconcile") return "reconcilers";
  if (kind === "convert") return "converters";
  if (kind === "validate" || kind === "mutate") return `${kind.slice(0, -1)}ing handlers`;
  if ((SPAWNING as readonly string[]).includes(kind)) return `${kind}s`;
  return `${kind} handlers`;
}

/** "kopf.timer", "kopf.daemon and kopf.timer", "kopf.on.update, kopf.on.field and kopf.register". */
function takers(kinds: readonly HandlerKind[]): string {
  const names = kinds.map((k) => CALLS[k]);
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

function show(value: unknown): string {
  if (typeof value === "function") return "a function";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value); // NaN, Infinity
  if (typeof value === "symbol" || typeof value === "bigint") return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
