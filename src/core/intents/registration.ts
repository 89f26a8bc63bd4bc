/**
 * Turning `kopf.on.*(...)` calls into registered handlers: the resource is
 * given positionally in any of Kopf's forms (`"kopfexamples"`,
 * `"kopf.dev", "v1", "kopfexamples"`, `{ group, plural }`, `EVERYTHING`),
 * then an optional options object, then the function. Bad calls fail at
 * registration time with one line saying what to change.
 *
 * @module
 */

import { parseField } from "../../cogs/structs/dicts.ts";
import { Selector } from "../../cogs/structs/selector.ts";
import type { SelectorSpec } from "../../cogs/structs/selector_specs.ts";
import { handlerScope } from "../actions/execution.ts";
import type {
  ActivityHandler,
  BaseOptions,
  ChangingHandler,
  FilterOptions,
  HandlerFn,
  Reason,
  ResourceHandler,
  WatchingHandler,
} from "./handlers.ts";
import { defaultId } from "./handlers.ts";
import { EVERYTHING } from "../../cogs/structs/selector_specs.ts";
import { OperatorRegistry } from "./registry.ts";
import { TypedResource, VersionedResource } from "../../cogs/structs/typed_resources.ts";
import { noteTypedResource } from "./typed_notes.ts";
import {
  checkOptions,
  type HandlerKind,
  hasOptionKeys,
  inheritedOptions,
  type RegistryOption,
} from "./options.ts";
import type { HandlerKindGroups } from "./option_specs.ts";
import type { OptionsOf } from "./option_types.ts";

/** A handler registration could not be understood. */
export class RegistrationError extends TypeError {
  /** Always `"RegistrationError"`. */
  override name = "RegistrationError";
}

/** Options of `kopf.on.*` for resource handlers (the changing ones and `kopf.on.event`). */
export interface ResourceOptions
  extends OptionsOf<HandlerKindGroups["changing"] | "event">, RegistryOption {}

/** Options of activity handlers. */
export interface ActivityOptions extends OptionsOf<HandlerKindGroups["activity"]>, RegistryOption {}

const SELECTOR_KEYS = [
  "group",
  "version",
  "plural",
  "kind",
  "singular",
  "shortcut",
  "category",
  "name",
  "any_name",
];
let defaultRegistry = new OperatorRegistry();

/**
 * The registry `kopf.on.*` uses when none is given.
 *
 * @returns The default registry.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { getDefaultRegistry } from "@kopf/kopf";
 * assert.deepEqual(getDefaultRegistry() === getDefaultRegistry(), true);
 * ```
 */
export function getDefaultRegistry(): OperatorRegistry {
  return defaultRegistry;
}

/**
 * Replaces the default registry (for tests and embedding).
 *
 * @param registry The new default.
 */
export function setDefaultRegistry(registry: OperatorRegistry): void {
  defaultRegistry = registry;
}

/** What a `kopf.on.*` call was given. */
interface Parsed<O> {
  selector: Selector;
  options: O;
  fn: HandlerFn;
}

/**
 * Parses `(…resource, options?, fn)` and checks the options against the kind's (options.ts).
 *
 * @param what The decorator's name, for messages (e.g. `kopf.on.create`).
 * @param kind The handler kind.
 * @param args The call's arguments.
 * @returns The selector, options and function.
 * @throws {RegistrationError} For a missing function or resource, or an option that is unknown,
 *   of another kind, or of the wrong form.
 */
export function parseResourceArgs<O extends object>(
  what: string,
  kind: HandlerKind,
  args: unknown[],
): Parsed<O> {
  const fn = args[args.length - 1];
  if (typeof fn !== "function") {
    throw new RegistrationError(`${what}(...) needs the handler function as its last argument`);
  }
  const rest = args.slice(0, -1);
  const strings: string[] = [];
  let resourceObject: Record<string, unknown> | undefined;
  let everything = false;
  let typed: TypedResource<unknown, unknown> | undefined;
  let options: Record<string, unknown> = {};
  for (const arg of rest) {
    if (arg instanceof VersionedResource) {
      const names = arg.versions.map((v) => v.version);
      throw new RegistrationError(
        `${what}(...): ${arg.plural}.${arg.group} has several versions: register on one of ` +
          `them, e.g. ${what}(${arg.kind}.${names[0]}, fn) (versions: ${names.join(", ")})`,
      );
    }
    if (arg instanceof TypedResource) {
      if (strings.length || resourceObject || everything || typed) {
        throw new RegistrationError(`${what}(...): give a typed resource alone, not with names`);
      }
      typed = arg;
      resourceObject = { group: arg.group, version: arg.version, plural: arg.plural };
    } else if (typeof arg === "string") {
      if (resourceObject || Object.keys(options).length) {
        throw new RegistrationError(
          `${what}(...): give the resource strings first, then the options object`,
        );
      }
      strings.push(arg);
    } else if (arg === EVERYTHING) {
      everything = true;
    } else if (arg && typeof arg === "object" && !Array.isArray(arg)) {
      const obj = arg as Record<string, unknown>;
      const looksLikeResource = !strings.length && !resourceObject && !everything &&
        Object.keys(obj).some((k) => SELECTOR_KEYS.includes(k)) && !hasOptionKeys(obj);
      if (looksLikeResource) resourceObject = obj;
      else options = { ...options, ...obj };
    } else if (arg !== undefined) {
      throw new RegistrationError(
        `${what}(...): unexpected argument ${
          String(arg)
        }: pass the resource, then options, then the function`,
      );
    }
  }
  const named = typeof options.id === "string" ? options.id : (fn as { name?: string }).name;
  const problem = checkOptions(what, kind, options, named || undefined);
  if (problem) throw new RegistrationError(problem);
  if (!strings.length && !resourceObject && !everything) {
    throw new RegistrationError(`${what}(...) needs a resource, e.g. ${what}("kopfexamples", fn)`);
  }
  if (strings.length > 3) {
    throw new RegistrationError(
      `${what}(...): at most 3 resource strings (group, version, plural)`,
    );
  }
  let selector: Selector;
  try {
    // EVERYTHING within the group (and version) given before it, as the docs write it.
    selector = everything
      ? new Selector(...([...strings, EVERYTHING] as unknown as SelectorSpec))
      : resourceObject
      ? new Selector(resourceObject)
      : new Selector(...(strings as [string, string, string]));
  } catch (e) {
    throw new RegistrationError(`${what}(...): ${(e as Error).message}`);
  }
  if (typed) {
    const registry = (options.registry as OperatorRegistry) ?? defaultRegistry;
    const refused = noteTypedResource(registry, typed, kind);
    if (refused) throw new RegistrationError(`${what}(...): ${refused}`);
  }
  return { selector, options: options as O, fn: fn as HandlerFn };
}

/**
 * The fields every resource handler has, from a registration's options: the id (the field
 * appended, as Kopf does, unless `fieldInId` is false), the function, its error options, the
 * selector and the filters.
 *
 * @param o The registration's options.
 * @param fn The handler function.
 * @param selector The resource selector.
 * @param fallbackId The id of an anonymous function.
 * @param fieldInId Whether the field is part of the id.
 * @returns The common fields.
 */
export function resourceHandlerBase(
  o: BaseOptions & FilterOptions,
  fn: HandlerFn,
  selector: Selector,
  fallbackId: string,
  fieldInId = true,
): ResourceHandler {
  const field = o.field !== undefined ? parseField(o.field) : undefined;
  const base = o.id ?? defaultId(fn, fallbackId);
  return {
    id: field && fieldInId ? `${base}/${field.join(".")}` : base,
    fn,
    param: o.param,
    errors: o.errors,
    timeout: o.timeout,
    retries: o.retries,
    backoff: o.backoff,
    selector,
    labels: o.labels,
    annotations: o.annotations,
    when: o.when,
    field,
    value: o.value,
  };
}

/**
 * Registers a resource-changing handler.
 *
 * @param what The decorator name for messages.
 * @param reason The cause, or undefined for field/resume handlers.
 * @param args The call's arguments.
 * @param extra Flags of the handler kind.
 * @returns The handler function (so registration can wrap a definition).
 */
export function registerChanging(
  what: string,
  reason: Reason | undefined,
  args: unknown[],
  extra: { initial?: boolean; requireField?: boolean } = {},
): HandlerFn {
  const kind = (reason ?? (extra.requireField ? "field" : "resume")) as HandlerKind;
  const { selector, options: o, fn } = parseResourceArgs<ResourceOptions>(what, kind, args);
  if (extra.requireField && !o.field) {
    throw new RegistrationError(
      `${what}(...) needs a field, e.g. ${what}("kopfexamples", { field: "spec.x" }, fn)`,
    );
  }
  const handler: ChangingHandler = {
    kind: "changing",
    ...resourceHandlerBase(o, fn, selector, `${what.replace("kopf.on.", "")}_handler`),
    reason,
    initial: extra.initial ?? false,
    deleted: o.deleted ?? false,
    requiresFinalizer: reason === "delete" && !o.optional,
    old: o.old,
    new: o.new,
  };
  (o.registry ?? defaultRegistry).register(handler);
  return fn;
}

/**
 * Registers a raw-event handler (`kopf.on.event`).
 *
 * @param args The call's arguments.
 * @returns The handler function.
 */
export function registerWatching(args: unknown[]): HandlerFn {
  const what = "kopf.on.event";
  const { selector, options: o, fn } = parseResourceArgs<ResourceOptions>(what, "event", args);
  const handler: WatchingHandler = {
    kind: "watching",
    ...resourceHandlerBase(o, fn, selector, "event_handler"),
  };
  (o.registry ?? defaultRegistry).register(handler);
  return fn;
}

/**
 * Registers an activity handler (`on.startup/cleanup/login/probe`).
 *
 * @param activity The activity.
 * @param args `(options?, fn)`.
 * @returns The handler function.
 */
export function registerActivity(
  activity: ActivityHandler["activity"],
  args: unknown[],
): HandlerFn {
  const what = `kopf.on.${activity}`;
  const fn = args[args.length - 1];
  if (typeof fn !== "function") {
    throw new RegistrationError(`${what}(...) needs the handler function as its last argument`);
  }
  const o = (args.length > 1 ? args[0] : {}) as ActivityOptions;
  if (args.length > 2 || (args.length === 2 && (typeof o !== "object" || o === null))) {
    throw new RegistrationError(
      `${what}(...) takes an optional options object and the function: ${what}({ id }, fn)`,
    );
  }
  const problem = checkOptions(what, activity, o as Record<string, unknown>);
  if (problem) throw new RegistrationError(problem);
  const handler: ActivityHandler = {
    kind: "activity",
    activity,
    id: o.id ?? defaultId(fn as HandlerFn, `${activity}_handler`),
    fn: fn as HandlerFn,
    param: o.param,
    errors: o.errors,
    timeout: o.timeout,
    retries: o.retries,
    backoff: o.backoff,
  };
  (o.registry ?? defaultRegistry).register(handler);
  return fn as HandlerFn;
}

/** Options of sub-handlers. */
export interface SubhandlerOptions extends OptionsOf<"subhandler"> {}

/**
 * Registers a sub-handler of the handler that is running now (`kopf.register`,
 * `kopf.subhandler`): it runs after its parent returns, with the id `parent/child`,
 * its own retries and progress.
 *
 * @param fn The sub-handler.
 * @param options Its id, filters and error options.
 * @returns The function.
 * @throws {RegistrationError} Outside of a running resource-changing handler.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.create("kopfexamples", { registry }, function create_fn({ spec }) {
 *   for (const task of spec.tasks ?? []) {
 *     kopf.register(({ logger }) => logger.info(`Task ${task}`), { id: task }); // create_fn/<task>
 *   }
 * });
 * ```
 */
export function register(fn: HandlerFn, options: SubhandlerOptions = {}): HandlerFn {
  const scope = handlerScope.getStore()?.subhandlers;
  if (!scope) {
    throw new RegistrationError(
      "kopf.register()/kopf.subhandler() work only inside a running resource-changing handler",
    );
  }
  const named = typeof options.id === "string" ? options.id : fn.name;
  const problem = checkOptions(
    "kopf.register",
    "subhandler",
    options as Record<string, unknown>,
    named || undefined,
  );
  if (problem) throw new RegistrationError(problem);
  const child = makeChild(
    scope.parent as ChangingHandler,
    scope.parentId,
    fn,
    options,
    scope.registered.length,
  );
  scope.registered.push(child);
  return fn;
}

/**
 * A sub-handler of the running handler: the parent's handler with the child's id
 * (`parent/child`), function, own error options and filters, and what the table says it
 * inherits.
 *
 * @param parent The running (parent) handler.
 * @param parentId The parent's id.
 * @param fn The sub-handler's function.
 * @param o The sub-handler's options.
 * @param index Its position, for the id of an anonymous function (`sub<index>`).
 * @returns The child handler.
 */
export function makeChild(
  parent: ChangingHandler,
  parentId: string,
  fn: HandlerFn,
  o: SubhandlerOptions,
  index: number,
): ChangingHandler {
  const field = o.field !== undefined ? parseField(o.field) : undefined;
  const own = o.id ?? defaultId(fn, `sub${index}`);
  // What the table says a sub-handler inherits (its parent's value when it gives none).
  const inherited: Record<string, unknown> = {};
  for (const key of inheritedOptions()) {
    inherited[key] = (o as Record<string, unknown>)[key] ??
      (parent as unknown as Record<string, unknown>)[key];
  }
  return {
    ...parent,
    ...inherited,
    id: `${parentId}/${own}`,
    fn,
    errors: o.errors,
    timeout: o.timeout,
    retries: o.retries,
    backoff: o.backoff,
    labels: o.labels,
    annotations: o.annotations,
    when: o.when,
    field,
    value: o.value,
    old: o.old,
    new: o.new,
  };
}
