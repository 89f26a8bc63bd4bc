/**
 * Checking a registration's options against the option table (`option_specs.ts`, where each
 * option is declared once, with its check, the kinds that take it and its type): each option must
 * be known, be for this kind (an option of another kind is refused with one line naming the
 * option and the kinds that take it), and have a value of its form. Sub-handlers take from the
 * table what they inherit from their parent. The `registry` option — where a handler goes, not
 * what it is — is added here.
 *
 * @module
 */

import { HANDLER_OPTIONS, type HandlerKind, show } from "./option_specs.ts";
import { OperatorRegistry } from "./registry.ts";
import type { OptionCheck as Check } from "./option_specs.ts";

export type { HandlerKind } from "./option_specs.ts";

/** One option at run time: what its value must be, the kinds that take it, whether sub-handlers inherit it. */
interface OptionRow {
  check: Check;
  kinds: readonly HandlerKind[];
  /** A sub-handler without its own value takes its parent's. */
  inherit?: boolean;
}

/** The option of every registration but a sub-handler's: the registry the handler goes to. */
export interface RegistryOption {
  /** Register in this registry instead of the default one. */
  registry?: OperatorRegistry;
}

const registry: Check = (v) =>
  v instanceof OperatorRegistry ? undefined : "a kopf.OperatorRegistry";

/** The rows of the option table (option_specs.ts), with `registry` after the error options. */
function rows(): Record<string, OptionRow> {
  const all: Record<string, OptionRow> = {};
  for (const [key, spec] of Object.entries(HANDLER_OPTIONS)) {
    const kinds = Object.keys(spec.kinds) as HandlerKind[];
    all[key] = spec.inherit
      ? { check: spec.check, kinds, inherit: true }
      : { check: spec.check, kinds };
    if (key === "backoff") {
      const registered = Object.keys(HANDLER_OPTIONS.id.kinds) as HandlerKind[];
      all.registry = { check: registry, kinds: registered.filter((k) => k !== "subhandler") };
    }
  }
  return all;
}

/**
 * Every option of every kind of handler: the rows of the table in `option_specs.ts`, and
 * `registry`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OPTIONS } from "./options.ts";
 * assert.deepEqual(OPTIONS.interval?.kinds, [ "timer" ]);
 * ```
 */
export const OPTIONS: Readonly<Record<string, OptionRow>> = rows();

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
  if (kind === "daemon" || kind === "timer") return `${kind}s`;
  return `${kind} handlers`;
}

/** "kopf.timer", "kopf.daemon and kopf.timer", "kopf.on.update, kopf.on.field and kopf.register". */
function takers(kinds: readonly HandlerKind[]): string {
  const names = kinds.map((k) => CALLS[k]);
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}
