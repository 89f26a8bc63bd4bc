/**
 * Turning `kopf.on.validate(...)` and `kopf.on.mutate(...)` calls into
 * registered admission handlers. Each handler is its own webhook (its own
 * endpoint, `/<handler-id>`, and its own entry in the managed webhook
 * configurations), so they run in parallel in Kubernetes and independently
 * of each other. Admission handlers cannot be retried: they take no
 * errors/timeout/retries/backoff options (the option table refuses them).
 *
 * @module
 */

import type { UserInfo } from "../../cogs/structs/reviews.ts";
import type { AnyObject, HandlerFn, ObjectContext } from "./handlers.ts";
import { getDefaultRegistry, parseResourceArgs, resourceHandlerBase } from "./registration.ts";
import type { AdmissionOperation, WebhookHandler, WebhookType } from "./kinds.ts";
import type { HandlerKindGroups } from "./option_specs.ts";
import type { OptionsOf } from "./option_types.ts";
import type { RegistryOption } from "./options.ts";

export type { AdmissionOperation, WebhookHandler, WebhookType } from "./kinds.ts";

/** Options of `kopf.on.validate` and `kopf.on.mutate` (option_specs.ts declares each). */
export interface WebhookOptions extends OptionsOf<HandlerKindGroups["webhook"]>, RegistryOption {}

/** The context of admission handlers: the object under admission, and the request's details. */
export interface WebhookContext extends ObjectContext {
  /** Whether the API request is a dry run (`kubectl --dry-run=server`). */
  dryrun: boolean;
  /** The subresource under admission (`"status"`, `"scale"`), or undefined for the main body. */
  subresource: string | undefined;
  /** The operation: CREATE, UPDATE, DELETE or CONNECT. */
  operation: AdmissionOperation;
  /** Strings pushed here go back to the API client as admission warnings. */
  warnings: string[];
  /** The requesting user, as Kubernetes sends it (`username`, `uid`, `groups`, `extra`). */
  userinfo: UserInfo;
  /** The HTTP headers of the webhook request (`{}` when the server gives none). */
  headers: Record<string, string>;
  /** The client certificate's details, or `{}` when the client presented none. */
  sslpeer: Record<string, unknown>;
  /** The old object (UPDATE, DELETE), or undefined. */
  old: Record<string, unknown> | undefined;
  /**
   * On UPDATE and DELETE of an object the operator watches, the object's own memo (the one its
   * change, daemon and timer handlers see); on CREATE (and for objects not seen yet), a copy of
   * the operator's memo, discarded after the request — as Kopf's docs say.
   */
  memo: AnyObject;
  /** The new object (CREATE, UPDATE, CONNECT), or undefined. */
  new: Record<string, unknown> | undefined;
  /** Validating or mutating. */
  reason: WebhookType;
  /** The webhook (handler id) the request came to, if the server knows it. */
  webhook: string | undefined;
}

/**
 * Registers a validating or mutating admission handler: `(…resource, options?, fn)`.
 *
 * @param reason Validating or mutating.
 * @param args The call's arguments.
 * @returns The handler function.
 * @throws {RegistrationError} For bad arguments (e.g. `retries`, which admission has not).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.validate("kopfexamples", { registry, operation: "CREATE" }, function checkSpec({ spec }) {
 *   if (!spec.field) throw new kopf.AdmissionError("spec.field is required.", 422);
 * });
 * assert.deepEqual(registry.webhookHandlers().map((h) => h.id), ["checkSpec"]);
 * ```
 */
export function registerWebhook(reason: WebhookType, args: unknown[]): HandlerFn {
  const what = reason === "validating" ? "kopf.on.validate" : "kopf.on.mutate";
  const kind = reason === "validating" ? "validate" : "mutate";
  const { selector, options: o, fn } = parseResourceArgs<WebhookOptions>(what, kind, args);
  const operations = o.operations ?? (o.operation !== undefined ? [o.operation] : undefined);
  const handler: WebhookHandler = {
    kind: "webhook",
    ...resourceHandlerBase(o, fn, selector, `${kind}_handler`, false),
    reason,
    operations: operations ? [...new Set(operations)] : undefined,
    subresource: o.subresource,
    persistent: o.persistent ?? false,
    sideEffects: o.sideEffects ?? false,
    ignoreFailures: o.ignoreFailures ?? false,
  };
  (o.registry ?? getDefaultRegistry()).register(handler);
  return fn;
}

/** A DNS-1123 subdomain (what kube-apiserver wants of a webhook's name and of each segment of a service path). */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * A webhook handler's id as kube-apiserver accepts it in a webhook's name and in a service
 * path's segment, both DNS-1123 subdomains: lowercase, `/` → `.`, `_` → `-`, any other character
 * but letters, digits, `.` and `-` → `x<hex>` (Kopf's beautification of names, lowercased).
 * Undefined when even that is not a DNS subdomain (a leading `_`, `..`, over 253 characters).
 * The operator appends it to a *service* client config's path; a webhook server's request for it
 * reaches the handler as its id would.
 *
 * @param id The handler's id.
 * @returns The segment, or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { webhookSegment } from "./webhooks.ts";
 * assert.equal(webhookSegment("check_spec"), "check-spec");
 * assert.equal(webhookSegment("validateWhenAway"), "validatewhenaway");
 * assert.equal(webhookSegment("create_fn/sub"), "create-fn.sub");
 * assert.equal(webhookSegment("_private"), undefined);
 * ```
 */
export function webhookSegment(id: string): string | undefined {
  const segment = id.toLowerCase().replaceAll("/", ".").replaceAll("_", "-")
    .replace(/[^a-z0-9.-]/g, (c) => `x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  return segment.length <= 253 && DNS_SUBDOMAIN.test(segment) ? segment : undefined;
}
