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

import type {
  ActivityHandler,
  ChangingHandler,
  IndexingHandler,
  ResourceHandler,
  SpawningHandler,
  WatchingHandler,
} from "./handlers.ts";
import type { HandlerKindGroups } from "./option_specs.ts";
import type { FieldsOf } from "./option_types.ts";

export type { AdmissionOperation, OwnedResource } from "./option_specs.ts";

/** Which admission webhooks a handler serves: validating or mutating. */
export type WebhookType = "validating" | "mutating";

/** A validating or mutating admission handler (`operation` kept in `operations`). */
export interface WebhookHandler extends ResourceHandler, FieldsOf<HandlerKindGroups["webhook"]> {
  /** Always `"webhook"`. */
  kind: "webhook";
  /** Validating or mutating. */
  reason: WebhookType;
}

/** A registered converter: one step from one version of a resource to another. */
export interface ConverterHandler extends ResourceHandler, FieldsOf<"convert"> {
  /** Always `"converter"`. */
  kind: "converter";
}

/** A reconciler (`kopf.on.reconcile`). */
export interface ReconcilingHandler extends ResourceHandler, FieldsOf<"reconcile"> {
  /** Always `"reconciling"`. */
  kind: "reconciling";
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
