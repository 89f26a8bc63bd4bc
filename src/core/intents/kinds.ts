/**
 * The kinds of registered handlers, by the name the registry keeps them under
 * ({@link HandlerKinds}: `"changing"` → `ChangingHandler`, `"webhook"` →
 * `WebhookHandler`, …), and the records of the kinds that are not in
 * `handlers.ts`. A bottom module: the registry is typed by this map and the
 * registration modules (`webhooks.ts`, `converters.ts`, `reconcilers.ts`)
 * fill it, so neither imports the other.
 *
 * @module
 */

import type { Selector } from "../../cogs/structs/selector.ts";
import type {
  ActivityHandler,
  ChangingHandler,
  IndexingHandler,
  ResourceHandler,
  SpawningHandler,
  WatchingHandler,
} from "./handlers.ts";

/** An admission operation, as Kubernetes names it. */
export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/** Which admission webhooks a handler serves: validating or mutating. */
export type WebhookType = "validating" | "mutating";

/** A validating or mutating admission handler. */
export interface WebhookHandler extends ResourceHandler {
  /** Always `"webhook"`. */
  kind: "webhook";
  /** Validating or mutating. */
  reason: WebhookType;
  /** The operations it serves; undefined for all. */
  operations: AdmissionOperation[] | undefined;
  /** The subresource it serves (`"*"` for all); undefined for the main body only. */
  subresource: string | undefined;
  /** Kept in the managed configurations at exit. */
  persistent: boolean;
  /** Has side effects outside of dry runs. */
  sideEffects: boolean;
  /** Failures let requests through (`failurePolicy: Ignore`). */
  ignoreFailures: boolean;
}

/** A registered converter: one step from one version of a resource to another. */
export interface ConverterHandler extends ResourceHandler {
  /** Always `"converter"`. */
  kind: "converter";
  /** The version it takes objects at (without the group). */
  from: string;
  /** The version it returns objects at (without the group). */
  to: string;
}

/** One resource of owned children of a reconciler. */
export interface OwnedResource {
  /** The name of the children in the handler's `children`. */
  key: string;
  /** The children's resource. */
  selector: Selector;
}

/** A reconciler (`kopf.on.reconcile`). */
export interface ReconcilingHandler extends ResourceHandler {
  /** Always `"reconciling"`. */
  kind: "reconciling";
  /** The resources of the owned children. */
  owns: OwnedResource[];
  /** Seconds between calls without changes, if any. */
  resync: number | undefined;
  /** Seconds of quiet after a change before a call. */
  debounce: number;
}

/**
 * Every kind of registered handler, by the name the registry keeps it under: the handler
 * record's `kind`. The registry ({@link KindRegistry}) is typed by this map, so adding a kind
 * is one entry here.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { HandlerKinds } from "@kopf/kopf";
 * const kind: HandlerKinds["converter"]["kind"] = "converter";
 * assert.equal(kind, "converter");
 * ```
 */
export interface HandlerKinds {
  /** Resource-changing handlers (`kopf.on.create`, `update`, `delete`, `resume`, `field`). */
  changing: ChangingHandler;
  /** Raw-event handlers (`kopf.on.event`). */
  watching: WatchingHandler;
  /** Activities (`kopf.on.startup`, `cleanup`, `login`, `probe`). */
  activity: ActivityHandler;
  /** Indexers (`kopf.index`). */
  indexing: IndexingHandler;
  /** Daemons and timers (`kopf.daemon`, `kopf.timer`). */
  spawning: SpawningHandler;
  /** Admission handlers (`kopf.on.validate`, `kopf.on.mutate`). */
  webhook: WebhookHandler;
  /** Converters (`kopf.on.convert`). */
  converter: ConverterHandler;
  /** Reconcilers (`kopf.on.reconcile`). */
  reconciling: ReconcilingHandler;
}

/**
 * The name of a kind of registered handler (`"changing"`, `"webhook"`, …).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorRegistry, type RegisteredKind } from "@kopf/kopf";
 * const kind: RegisteredKind = "spawning";
 * assert.deepEqual(new OperatorRegistry().handlers(kind), []);
 * ```
 */
export type RegisteredKind = keyof HandlerKinds;
