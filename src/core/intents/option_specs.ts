/**
 * Every option of every kind of handler, declared once: {@link HandlerOptionSpecs} says, per
 * option, what its value is, which kinds of handlers take it and what their records keep of it;
 * {@link HANDLER_OPTIONS} gives each the same row at run time — the check of its value and the
 * kinds (as the messages list them). The compiler holds the two together: a member without a row,
 * a row without a member, or a row missing a kind of its member fails `deno check`.
 *
 * Everything else is derived from them (`option_types.ts`): the options of each registration call
 * (`SpawningOptions` is `OptionsOf<"daemon" | "timer">`), the filter options, and the fields of
 * the handler records (`SpawningHandler` has `FieldsOf<"daemon" | "timer">`). So an option is added
 * here (a member, a row), and then used where it acts.
 *
 * Why: the options used to be written three times — the table, the call's options, the record —
 * and the copies drifted (`kopf.on.create(…, { interval: 60 }, fn)` was once accepted and did
 * nothing). The `registry` option is not here: it says where a handler goes, not what it is (and
 * its type, the registry, is made of the records); `options.ts` adds it.
 *
 * @module
 */

import type { Selector } from "../../cogs/structs/references.ts";
import type { TypedResource } from "../../cogs/structs/typed_resources.ts";
import type { AnyObject, ErrorsMode } from "../actions/invocation.ts";
import { fieldPathProblem } from "../../cogs/structs/dicts.ts";
import { ABSENT, PRESENT } from "./markers.ts";

/**
 * How an option's value is checked: what it must be (for "<key> must be <this>, not <value>."),
 * or a whole problem line (after "<call>(...): "), or undefined when it is fine.
 */
export type OptionCheck = (
  value: unknown,
  key: string,
  handler: string | undefined,
) => string | { line: string } | undefined;
type Check = OptionCheck;

/**
 * The kinds of handlers as registration names them, in groups that options are taken by.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { HandlerKindGroups } from "@kopf/kopf";
 * const kind: HandlerKindGroups["spawning"] = "timer";
 * assert.equal(kind, "timer");
 * ```
 */
export interface HandlerKindGroups {
  /** Resource-changing handlers. */
  changing: "create" | "update" | "delete" | "resume" | "field";
  /** Daemons and timers. */
  spawning: "daemon" | "timer";
  /** Operator activities. */
  activity: "startup" | "cleanup" | "login" | "probe";
  /** The kinds that handle objects of a resource with retries. */
  resource:
    | HandlerKindGroups["changing"]
    | "event"
    | HandlerKindGroups["spawning"]
    | "index"
    | "reconcile"
    | "subhandler";
  /** Admission webhooks: no retries, so no errors/timeout/retries/backoff. */
  webhook: "validate" | "mutate";
  /** The kinds that run again after a failure (and so take the error options). */
  retried: HandlerKindGroups["resource"] | HandlerKindGroups["activity"];
  /** The kinds filtered by the object (labels, annotations, field/value, when). */
  filtered:
    | HandlerKindGroups["changing"]
    | "event"
    | HandlerKindGroups["spawning"]
    | "index"
    | "reconcile"
    | HandlerKindGroups["webhook"]
    | "subhandler";
  /** Every kind. */
  all: HandlerKindGroups["retried"] | HandlerKindGroups["webhook"] | "convert";
}

/** The kinds of handlers, as registration names them (`"create"`, `"timer"`, `"subhandler"`…). */
export type HandlerKind = HandlerKindGroups["all"];

/** A set of kinds: each kind of `K` as a key (so a set missing one does not type-check). */
export type KindSet<K extends HandlerKind> = { readonly [P in K]: true };

/**
 * One option: how its value is checked and which kinds take it (at run time); what its value is
 * (`T`), what the handler's record keeps of it (`S`; `never`: nothing under its name) and whether
 * it must be given (`R`) — the last three for the types only.
 */
export interface OptionSpec<
  T,
  K extends HandlerKind,
  S = T | undefined,
  R extends boolean = false,
> {
  /** What the value must be. */
  readonly check: OptionCheck;
  /** The kinds that take it, in the order the messages list them. */
  readonly kinds: KindSet<K>;
  /** A sub-handler without its own value takes its parent's. */
  readonly inherit?: boolean;
  /** Types only (never set): the value given, the value kept, whether it must be given. */
  readonly types?: [given: T, stored: S, required: R];
}

/** A value filter: an exact value, PRESENT/ABSENT, or a callback of the value. */
export type ValueFilter =
  | typeof PRESENT
  | typeof ABSENT
  | string
  | number
  | boolean
  | null
  | AnyObject
  | unknown[]
  // deno-lint-ignore no-explicit-any
  | ((value: any, context: any) => boolean);

/** Label or annotation filters: key → value filter. */
export type MetaFilter = Record<string, ValueFilter>;

/** A whole-object callback filter. */
// deno-lint-ignore no-explicit-any
export type WhenFilter = (context: any) => boolean;

/** An admission operation, as Kubernetes names it. */
export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/** A resource of owned children: a name (`"pods"`, `"deployments.apps"`), an object, or a typed resource. */
export type OwnedArg =
  | string
  // deno-lint-ignore no-explicit-any
  | TypedResource<any, any>
  | { group?: string; version?: string; plural?: string; kind?: string };

/** One resource of owned children of a reconciler. */
export interface OwnedResource {
  /** The name of the children in the handler's `children`. */
  key: string;
  /** The children's resource. */
  selector: Selector;
}

/**
 * Every option of every kind of handler but `registry`: its value, the kinds that take it, what
 * their records keep. The documentation of each option is here; the options types show it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { HandlerOptionSpecs, SpawningOptions } from "@kopf/kopf";
 * type Timeout = NonNullable<HandlerOptionSpecs["cancellationTimeout"]["types"]>[0];
 * const seconds: Timeout = 10;
 * const options: SpawningOptions = { cancellationTimeout: seconds };
 * assert.equal(options.cancellationTimeout, 10);
 * ```
 */
export interface HandlerOptionSpecs {
  /** The handler id; defaults to the function's name. */
  id: OptionSpec<string, HandlerKindGroups["all"], string>;
  /** Any value passed to the handler as `param`. */
  param: OptionSpec<unknown, HandlerKindGroups["all"], unknown>;
  /** What to do on arbitrary errors: retry (default), stop, or ignore. */
  errors: OptionSpec<ErrorsMode, HandlerKindGroups["retried"]>;
  /** Seconds after the first try when the handler is considered failed. */
  timeout: OptionSpec<number, HandlerKindGroups["retried"]>;
  /** How many retries before the handler is considered failed. */
  retries: OptionSpec<number, HandlerKindGroups["retried"]>;
  /** Seconds to wait before retrying after an arbitrary error (default 60). */
  backoff: OptionSpec<number, HandlerKindGroups["retried"]>;
  /** Only objects whose labels match: label → value filter. */
  labels: OptionSpec<MetaFilter, HandlerKindGroups["filtered"]>;
  /** Only objects whose annotations match: annotation → value filter. */
  annotations: OptionSpec<MetaFilter, HandlerKindGroups["filtered"]>;
  /** Only objects for which this callback of the context returns true. */
  when: OptionSpec<WhenFilter, HandlerKindGroups["filtered"]>;
  /** A dotted field path; restricts and scopes the handler to that field (kept parsed). */
  field: OptionSpec<string | string[], HandlerKindGroups["filtered"], string[] | undefined>;
  /** Only objects whose `field` has this value (for update and field handlers: the old or the new one). */
  value: OptionSpec<ValueFilter, HandlerKindGroups["filtered"]>;
  /** Only changes whose old value (of the field, or the whole essence) matches. */
  old: OptionSpec<ValueFilter, "update" | "field" | "subhandler">;
  /** Only changes whose new value (of the field, or the whole essence) matches. */
  new: OptionSpec<ValueFilter, "update" | "field" | "subhandler">;
  /** Delete handlers: do not block deletion with a finalizer (kept as `requiresFinalizer`). */
  optional: OptionSpec<boolean, "delete", never>;
  /** Resume handlers: also run for objects being deleted. */
  deleted: OptionSpec<boolean, "resume", boolean>;
  /** Seconds before the first run after the object is seen (or the operator starts). */
  initialDelay: OptionSpec<number, HandlerKindGroups["spawning"]>;
  /** Daemons: seconds of graceful waiting after the stop-flag is set. */
  cancellationBackoff: OptionSpec<number, "daemon">;
  /** Daemons: seconds to wait more before abandoning a daemon that does not exit. */
  cancellationTimeout: OptionSpec<number, "daemon">;
  /** Daemons: seconds between checks (and log lines) while a daemon is exiting (default 5). */
  cancellationPolling: OptionSpec<number, "daemon">;
  /** Timers: seconds between runs. */
  interval: OptionSpec<number, "timer">;
  /** Timers: run on the interval grid, whatever each run takes. */
  sharp: OptionSpec<boolean, "timer", boolean>;
  /** Timers: run only when the object has not changed for so many seconds. */
  idle: OptionSpec<number, "timer">;
  /** Only this operation (default: all; kept in `operations`). */
  operation: OptionSpec<AdmissionOperation, HandlerKindGroups["webhook"], never>;
  /** Only these operations (default: all). */
  operations: OptionSpec<AdmissionOperation[], HandlerKindGroups["webhook"]>;
  /** Only this subresource (`"status"`, `"scale"`), or `"*"` for the body and every subresource; default: the body only. */
  subresource: OptionSpec<string, HandlerKindGroups["webhook"]>;
  /** Keep the webhook in the managed configurations when the operator exits. */
  persistent: OptionSpec<boolean, HandlerKindGroups["webhook"], boolean>;
  /** The handler has side effects in non-dry-run requests (`sideEffects: NoneOnDryRun`). */
  sideEffects: OptionSpec<boolean, HandlerKindGroups["webhook"], boolean>;
  /** Kubernetes lets requests through when the webhook fails or cannot be reached (`failurePolicy: Ignore`). */
  ignoreFailures: OptionSpec<boolean, HandlerKindGroups["webhook"], boolean>;
  /**
   * The resources of the children: watched, matched to this parent by the parent's uid in their
   * `metadata.ownerReferences`, given to the handler in `children` under the name given.
   */
  owns: OptionSpec<readonly OwnedArg[], "reconcile", OwnedResource[]>;
  /** Seconds from the end of a call to the next one when nothing changes (default: none). */
  resync: OptionSpec<number, "reconcile">;
  /** Seconds of quiet after a change before the call (default 0.1; at most 10× that in all). */
  debounce: OptionSpec<number, "reconcile", number>;
  /** The version the converter takes objects at (`"v1"`; `"kopf.dev/v1"` is accepted too). */
  from: OptionSpec<string, "convert", string, true>;
  /** The version the converter returns objects at (`"v2"`). */
  to: OptionSpec<string, "convert", string, true>;
}

const CHANGING: KindSet<HandlerKindGroups["changing"]> = {
  create: true,
  update: true,
  delete: true,
  resume: true,
  field: true,
};
const SPAWNING: KindSet<HandlerKindGroups["spawning"]> = { daemon: true, timer: true };
const ACTIVITY: KindSet<HandlerKindGroups["activity"]> = {
  startup: true,
  cleanup: true,
  login: true,
  probe: true,
};
const RESOURCE: KindSet<HandlerKindGroups["resource"]> = {
  ...CHANGING,
  event: true,
  ...SPAWNING,
  index: true,
  reconcile: true,
  subhandler: true,
};
const WEBHOOK: KindSet<HandlerKindGroups["webhook"]> = { validate: true, mutate: true };
const RETRIED: KindSet<HandlerKindGroups["retried"]> = { ...RESOURCE, ...ACTIVITY };
const FILTERED: KindSet<HandlerKindGroups["filtered"]> = {
  ...CHANGING,
  event: true,
  ...SPAWNING,
  index: true,
  reconcile: true,
  ...WEBHOOK,
  subhandler: true,
};
const ALL: KindSet<HandlerKindGroups["all"]> = { ...RETRIED, ...WEBHOOK, convert: true };
const CHANGES: KindSet<"update" | "field" | "subhandler"> = {
  update: true,
  field: true,
  subhandler: true,
};

// --- The checks: one per form of value -----------------------------------------------------

/** The admission operations, as Kubernetes names them. */
const OPERATIONS = ["CREATE", "UPDATE", "DELETE", "CONNECT"];

/** Seconds: a number of 0 or more. */
const seconds: Check = (v) =>
  typeof v === "number" && v >= 0 && v !== Infinity ? undefined : "a number of 0 or more (seconds)";
/** A timer's period: 0 would run it in a loop with no pause (and a log line a run). */
const period: Check = (v) =>
  typeof v === "number" && v > 0 && v !== Infinity
    ? undefined
    : "a number of seconds above 0 (a timer of interval 0 would run without a pause)";
/** A whole number of 0 or more. */
const count: Check = (v) =>
  typeof v === "number" && Number.isInteger(v) && v >= 0
    ? undefined
    : "a whole number of 0 or more";
/** True or false. */
const flag: Check = (v) => (typeof v === "boolean" ? undefined : "true or false");
/** A non-empty string. */
const text: Check = (v) => typeof v === "string" && v !== "" ? undefined : "a non-empty string";
/** Any value. */
const anything: Check = () => undefined;
/** An errors mode. */
const errors: Check = (v) =>
  v === "temporary" || v === "permanent" || v === "ignored"
    ? undefined
    : `"temporary", "permanent" or "ignored"`;
/** A function. */
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

/**
 * Label or annotation filters: valid keys; values a string, PRESENT, ABSENT or a callback.
 *
 * @param what Labels or annotations (label values have a form of their own).
 * @returns The check.
 */
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
/** One admission operation. */
const operation: Check = (v) =>
  typeof v === "string" && OPERATIONS.includes(v)
    ? undefined
    : `one of "CREATE", "UPDATE", "DELETE", "CONNECT"`;
/** Admission operations: a non-empty list. */
const operations: Check = (v) =>
  Array.isArray(v) && v.length > 0 && v.every((o) => OPERATIONS.includes(o))
    ? undefined
    : `a non-empty list of "CREATE", "UPDATE", "DELETE", "CONNECT"`;
/** A version of a resource. */
const version: Check = (v) =>
  typeof v === "string" && /^([a-z0-9.-]+\/)?[a-z0-9]+$/.test(v)
    ? undefined
    : `a version of the resource ("v1", "v2beta1")`;
/** Seconds above 0. */
const positive: Check = (v) =>
  typeof v === "number" && v > 0 && v !== Infinity ? undefined : "a number above 0 (seconds)";
/** Owned resources: a non-empty list of names, objects or typed resources. */
const owned: Check = (v) =>
  Array.isArray(v) && v.length > 0 &&
    v.every((r) => (typeof r === "string" && r !== "") || (typeof r === "object" && r !== null))
    ? undefined
    : `a non-empty list of resources ("pods", { group: "apps", plural: "deployments" }, ` +
      `a kopf.resource(...))`;

/**
 * The rows of {@link HandlerOptionSpecs}: each option's check and kinds, in the order the
 * messages list them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HANDLER_OPTIONS } from "./option_specs.ts";
 * assert.deepEqual(Object.keys(HANDLER_OPTIONS.cancellationTimeout.kinds), ["daemon"]);
 * ```
 */
export const HANDLER_OPTIONS: HandlerOptionSpecs = {
  id: { check: text, kinds: ALL },
  param: { check: anything, kinds: ALL, inherit: true },
  errors: { check: errors, kinds: RETRIED },
  timeout: { check: seconds, kinds: RETRIED },
  retries: { check: count, kinds: RETRIED },
  backoff: { check: seconds, kinds: RETRIED },
  labels: { check: metaFilter("label"), kinds: FILTERED },
  annotations: { check: metaFilter("annotation"), kinds: FILTERED },
  when: { check: callback, kinds: FILTERED },
  field: { check: field, kinds: FILTERED },
  value: { check: anything, kinds: FILTERED },
  old: { check: anything, kinds: CHANGES },
  new: { check: anything, kinds: CHANGES },
  optional: { check: flag, kinds: { delete: true } },
  deleted: { check: flag, kinds: { resume: true } },
  initialDelay: { check: seconds, kinds: SPAWNING },
  cancellationBackoff: { check: seconds, kinds: { daemon: true } },
  cancellationTimeout: { check: seconds, kinds: { daemon: true } },
  cancellationPolling: { check: seconds, kinds: { daemon: true } },
  interval: { check: period, kinds: { timer: true } },
  sharp: { check: flag, kinds: { timer: true } },
  idle: { check: seconds, kinds: { timer: true } },
  operation: { check: operation, kinds: WEBHOOK },
  operations: { check: operations, kinds: WEBHOOK },
  subresource: { check: text, kinds: WEBHOOK },
  persistent: { check: flag, kinds: WEBHOOK },
  sideEffects: { check: flag, kinds: WEBHOOK },
  ignoreFailures: { check: flag, kinds: WEBHOOK },
  owns: { check: owned, kinds: { reconcile: true } },
  resync: { check: positive, kinds: { reconcile: true } },
  debounce: { check: seconds, kinds: { reconcile: true } },
  from: { check: version, kinds: { convert: true } },
  to: { check: version, kinds: { convert: true } },
};

/**
 * A value as the messages show it: JSON where it can be, else its string.
 *
 * @param value Any value.
 * @returns Its text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { show } from "./option_specs.ts";
 * assert.deepEqual([show("a"), show(NaN), show(() => 1)], ['"a"', "NaN", "a function"]);
 * ```
 */
export function show(value: unknown): string {
  if (typeof value === "function") return "a function";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value); // NaN, Infinity
  if (typeof value === "symbol" || typeof value === "bigint") return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
