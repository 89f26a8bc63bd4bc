/**
 * Sub-handlers defined inside a running handler: `kopf.subhandler(options, fn)`
 * (the declarative form of `kopf.register`, also `kopf.on.subhandler`), and
 * `kopf.execute({ fns | handlers | registry, lifecycle, cause })`, which runs
 * sub-handlers at once, inside the parent, rather than after it returns.
 *
 * Why `execute` is here and not in registration.ts: it is the one place that
 * turns handlers from elsewhere (a list, another registry) into children of
 * the running handler, with Kopf's rules: one source at a time, the current
 * handler's cause for a registry's handlers, and the sub-handlers registered
 * so far when no source is given.
 *
 * @module
 */

import type { Diff } from "../../cogs/structs/diffs.ts";
import { handlerScope } from "../actions/execution.ts";
import type { Lifecycle } from "../actions/lifecycles.ts";
import type { AnyObject, BaseHandler, ChangingHandler, HandlerFn, Reason } from "./handlers.ts";
import { checkOptions } from "./options.ts";
import { makeChild, register, RegistrationError, type SubhandlerOptions } from "./registration.ts";
import { OperatorRegistry, selectForCause } from "./registry.ts";

/**
 * Registers a sub-handler of the running handler; same as `kopf.register(fn, options)`.
 *
 * @param args `(fn)` or `(options, fn)`.
 * @returns The function.
 *
 * @example
 * ```ts ignore
 * import * as kopf from "@kopf/kopf";
 * kopf.on.create("kopfexamples", ({ spec }) => {
 *   for (const item of spec.items ?? []) {
 *     kopf.subhandler({ id: item }, ({ logger }) => logger.info(`Handling ${item}`));
 *   }
 * });
 * ```
 */
export function subhandler(...args: [HandlerFn] | [SubhandlerOptions, HandlerFn]): HandlerFn {
  if (args.length === 1) return register(args[0]);
  return register(args[1], args[0]);
}

/** The cause whose handlers `kopf.execute({ registry })` selects (default: the running handler's). */
export interface ExecuteCause {
  /** The reason: create, update, delete, resume. */
  reason?: Reason;
  /** Whether it is the first sight of the object since the operator started (resume handlers). */
  initial?: boolean;
  /** The object. */
  body?: AnyObject;
  /** The old essence. */
  old?: unknown;
  /** The new essence. */
  new?: unknown;
  /** The diff of the essences. */
  diff?: Diff;
}

/** What `kopf.execute()` runs: one source (or none: the sub-handlers registered so far). */
export interface ExecuteOptions extends SubhandlerOptions {
  /** Functions, by id (`{ id: fn }`) or as a list (ids from their names). */
  fns?: Record<string, HandlerFn> | Iterable<HandlerFn>;
  /** Handlers made beforehand (their ids, functions and error options are kept). */
  handlers?: Iterable<BaseHandler>;
  /** A registry: its resource-changing handlers for the running handler's resource and cause. */
  registry?: OperatorRegistry;
  /** Which ready sub-handlers run per cycle (default: the operator's lifecycle). */
  lifecycle?: Lifecycle;
  /** The cause to select a registry's handlers for (default: the running handler's). */
  cause?: ExecuteCause;
}

/**
 * Runs sub-handlers now, inside the running handler (`kopf.execute`): returns
 * when they all succeeded; otherwise the parent is retried later (their
 * progress is kept), or fails if one failed permanently. The sub-handlers come
 * from `fns`, `handlers` or a `registry`; with none of them, those registered
 * so far with `kopf.subhandler`/`kopf.register` run now (not after the parent).
 *
 * @param spec One source, with shared options (`lifecycle`, `cause`, error options, filters).
 * @throws {RegistrationError} Outside of a running resource-changing handler, or with more than
 *   one source.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.create("kopfexamples", { registry }, async function create_fn({ spec }) {
 *   const fns = Object.fromEntries(
 *     (spec.items ?? []).map((item: string) => [item, () => ({ done: item })]),
 *   );
 *   await kopf.execute({ fns, lifecycle: kopf.oneByOne }); // create_fn/<item>, one per cycle
 * });
 * ```
 */
export async function execute(spec: ExecuteOptions = {}): Promise<void> {
  const scope = handlerScope.getStore();
  const sub = scope?.subhandlers;
  if (!sub) {
    throw new RegistrationError(
      "kopf.execute() works only inside a running resource-changing handler",
    );
  }
  const { fns, handlers, registry, lifecycle, cause, ...options } = spec;
  const given = [fns, handlers, registry].filter((x) => x !== undefined).length;
  if (given > 1) {
    throw new RegistrationError(
      "kopf.execute(): give one of fns, handlers or registry, not several.",
    );
  }
  if (registry !== undefined && !(registry instanceof OperatorRegistry)) {
    throw new RegistrationError("kopf.execute(): registry must be a kopf.OperatorRegistry.");
  }
  const problem = checkOptions("kopf.execute", "subhandler", options as Record<string, unknown>);
  if (problem) throw new RegistrationError(problem);
  const parent = sub.parent as ChangingHandler;
  const child = (fn: HandlerFn, o: SubhandlerOptions, i: number) =>
    makeChild(parent, sub.parentId, fn, o, i);
  let children: BaseHandler[];
  if (fns !== undefined) {
    const entries: Array<[string | undefined, HandlerFn]> = isIterable(fns)
      ? [...fns].map((f) => [undefined, f])
      : Object.entries(fns);
    children = entries.map(([id, f], i) => child(f, id ? { ...options, id } : options, i));
  } else if (handlers !== undefined || registry !== undefined) {
    const context = scope.context ?? {};
    const chosen = handlers !== undefined ? [...handlers] : selectForCause(
      registry!.changingHandlers(context.resource),
      {
        reason: cause?.reason ?? context.reason,
        initial: cause?.initial ?? false,
        body: cause?.body ?? context.body,
        old: cause && "old" in cause ? cause.old : context.old,
        new: cause && "new" in cause ? cause.new : context.new,
        diff: cause?.diff ?? context.diff ?? [],
      },
      context,
    );
    children = chosen.map((h, i) =>
      child(h.fn, {
        ...options,
        id: h.id,
        errors: options.errors ?? h.errors,
        timeout: options.timeout ?? h.timeout,
        retries: options.retries ?? h.retries,
        backoff: options.backoff ?? h.backoff,
      }, i)
    );
  } else {
    // The sub-handlers registered so far run now, and not again after the parent returns.
    children = sub.registered.splice(0);
  }
  await sub.execute(children, lifecycle);
}

function isIterable(value: unknown): value is Iterable<HandlerFn> {
  return typeof (value as { [Symbol.iterator]?: unknown })[Symbol.iterator] === "function";
}
