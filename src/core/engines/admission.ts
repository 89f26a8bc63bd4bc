/**
 * Admission: an AdmissionReview (v1) request in, an AdmissionReview response
 * out. The request's webhook (the handler id from the endpoint's path) picks
 * the handler; its context is built from the request (`body`, `old`, `patch`,
 * `dryrun`, `warnings`, `userinfo`, `headers`, `sslpeer`…); it runs through
 * the one handler executor with the admission kind's default errors mode
 * (`"permanent"`: a webhook cannot retry, as in Kopf). The response carries
 * the warnings, the patch as a base64 JSON Patch (mutating webhooks), and —
 * when a handler failed — the one error the docs' priority picks:
 * `AdmissionError` first (its code), then permanent, then temporary, then
 * any other error (code 500).
 *
 * The function that does this (a {@link WebhookFn}) is what webhook servers
 * and tunnels (kits/webhooks.ts) are given to call.
 *
 * @module
 */

import { Resource } from "../../cogs/structs/resource.ts";
import { Patch } from "../../cogs/structs/patches.ts";
import type { JsonObject } from "../../cogs/structs/_json.ts";
import type { UserInfo, WebhookClientConfig } from "../../cogs/structs/reviews.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import { executeHandlers, withAttempt } from "../actions/execution.ts";
import { PermanentError, TemporaryError } from "../actions/errors.ts";
import { allAtOnce } from "../actions/lifecycles.ts";
import { type LogSink, ObjectLogger } from "../actions/loggers.ts";
import { State } from "../actions/progression.ts";
import { objectContext } from "../intents/contexts.ts";
import { matchesObject } from "../intents/filters.ts";
import type { AnyObject } from "../intents/handlers.ts";
import type { OperatorRegistry } from "../intents/registry.ts";
import {
  type AdmissionOperation,
  type WebhookHandler,
  webhookSegment,
  type WebhookType,
} from "../intents/webhooks.ts";
import { copyMemo, objectMemo } from "./memos.ts";

export type { WebhookClientConfig };
import {
  AdmissionError,
  MissingDataError,
  UnknownResourceError,
  WebhookError,
} from "./review_errors.ts";
export { AdmissionError, MissingDataError, UnknownResourceError, WebhookError };

/** How webhook servers call the operator with an admission request. */
export interface WebhookRequestOptions {
  /** The handler id (from the endpoint path); without it, every matching handler runs. */
  webhook?: string | undefined;
  /** The HTTP headers of the request. */
  headers?: Record<string, string> | undefined;
  /** The client certificate's details, if a verified one was presented. */
  sslpeer?: Record<string, unknown> | undefined;
  /** Only handlers of this type. */
  reason?: WebhookType | undefined;
}

/**
 * The function webhook servers and tunnels call with each JSON-parsed AdmissionReview
 * request; they send the JSON of what it resolves to back (Kopf's `kopf.WebhookFn`).
 */
export type WebhookFn = (request: AnyObject, options?: WebhookRequestOptions) => Promise<AnyObject>;

/** What the admission engine needs from the operator. */
export interface AdmissionOptions {
  /** The registry with the admission handlers. */
  registry: OperatorRegistry;
  /** The operator's settings. */
  settings: OperatorSettings;
  /** The operator's memo. */
  memo: AnyObject;
  /** Where log lines go. */
  sink: LogSink;
  /** The in-memory indices (`indices`). */
  indices?: AnyObject;
  /**
   * The per-object memory of an object the operator watches, by the request's body and
   * resource (for its memo: UPDATE/DELETE requests share it with the object's handlers);
   * undefined for objects not seen. It must not remember objects it has not seen.
   */
  memories?: (body: AnyObject, resource?: Resource) => { memo: AnyObject } | undefined;
  /** Aborted at the operator's exit (the handlers' `signal`). */
  signal?: AbortSignal;
}

/**
 * Serves one AdmissionReview request.
 *
 * @param review The JSON-parsed AdmissionReview request.
 * @param options The operator's parts.
 * @param request The webhook (handler id), headers and SSL peer of the request.
 * @returns The AdmissionReview response.
 * @throws {MissingDataError} Without `request.userInfo` or an object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * import { serveAdmission } from "./admission.ts";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.mutate("kopfexamples", { registry }, function defaults({ patch }) {
 *   patch.spec.size = 1;
 * });
 * const review = await serveAdmission({
 *   apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
 *   request: {
 *     uid: "u1", operation: "CREATE", userInfo: { username: "admin" },
 *     resource: { group: "kopf.dev", version: "v1", resource: "kopfexamples" },
 *     object: { metadata: { name: "x" }, spec: {} },
 *   },
 * }, { registry, settings: new kopf.OperatorSettings(), memo: {}, sink: () => {} }, { webhook: "defaults" });
 * assert.deepEqual(JSON.parse(atob(review.response.patch)), [{"op":"add","path":"/spec/size","value":1}]);
 * ```
 */
export async function serveAdmission(
  review: AnyObject,
  options: AdmissionOptions,
  request: WebhookRequestOptions = {},
): Promise<AnyObject> {
  const req: AnyObject = review?.request ?? {};
  const operation = req.operation as AdmissionOperation;
  const subresource = (req.subResource || undefined) as string | undefined;
  const userinfo: UserInfo | undefined | null = req.userInfo;
  const newBody = req.object ?? undefined;
  const oldBody = req.oldObject ?? undefined;
  const raw: AnyObject | undefined = newBody ?? oldBody;
  if (userinfo === undefined || userinfo === null) {
    throw new MissingDataError("User info is missing from the admission request.");
  }
  if (raw === undefined) {
    throw new MissingDataError("Either old or new object is missing from the admission request.");
  }
  const resource = requestResource(req);
  // The docs: UPDATE/DELETE use the object's own memo; CREATE a fresh one, discarded after.
  const known = operation !== "CREATE" ? options.memories?.(raw, resource) : undefined;
  const memo = known ? objectMemo(known, options.memo) : copyMemo(options.memo);
  const patch = new Patch();
  const warnings: string[] = [];
  const logger = new ObjectLogger(options.sink, raw);
  const context: AnyObject = {
    ...objectContext(raw, resource, patch, logger, {
      memo,
      settings: options.settings,
      indices: options.indices ?? {},
      ...(options.signal ? { signal: options.signal } : {}),
    }),
    dryrun: Boolean(req.dryRun),
    subresource,
    operation,
    warnings,
    userinfo,
    headers: request.headers ?? {},
    sslpeer: request.sslpeer ?? {},
    old: oldBody,
    new: newBody,
    reason: request.reason,
    webhook: request.webhook,
  };
  const candidates = options.registry.webhookHandlers(request.reason);
  // The request's webhook is a handler's id, or its DNS-safe form (a service path's segment).
  const byId = request.webhook === undefined || candidates.some((h) => h.id === request.webhook);
  const handlers = candidates.filter((h) =>
    (request.webhook === undefined ||
      (byId ? h.id === request.webhook : webhookSegment(h.id) === request.webhook)) &&
    h.selector.check(resource) && matchesRequest(h, operation, subresource) &&
    matchesObject(h, raw, context)
  );
  const outcomes = await executeHandlers<WebhookHandler>(handlers, {
    state: new State("admission"),
    kind: "admission",
    defaultErrors: "permanent",
    lifecycle: allAtOnce,
    logger,
    noun: "Handler",
    ...(options.signal ? { signal: options.signal } : {}),
    context: (handler, attempt) => withAttempt({ ...context, param: handler.param }, attempt),
  });
  const errors = [...outcomes.values()].map((o) => o.error).filter((e) => e !== undefined);
  return buildResponse(review, errors, warnings, patch.toJsonPatch(raw as JsonObject));
}

/**
 * The function that webhook servers call: {@link serveAdmission} with the operator's parts.
 *
 * @param options The operator's parts.
 * @returns The webhook function.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * import { webhookFn } from "./admission.ts";
 * const registry = new kopf.OperatorRegistry();
 * const fn = webhookFn({ registry, settings: new kopf.OperatorSettings(), memo: {}, sink: () => {} });
 * assert.deepEqual(typeof fn, "function");
 * ```
 */
export function webhookFn(options: AdmissionOptions): WebhookFn {
  return (review, request) => serveAdmission(review, options, request);
}

/** The resource of a request (its `resource`, with the kind from `kind`). */
function requestResource(req: AnyObject): Resource {
  const r = req.resource;
  if (!r || typeof r.resource !== "string" || typeof r.version !== "string") {
    throw new UnknownResourceError("The admission request names no resource.");
  }
  return new Resource({
    group: r.group ?? "",
    version: r.version,
    plural: r.resource,
    kind: req.kind?.kind,
    preferred: true,
  });
}

/** Whether a handler serves the request's operation and subresource. */
function matchesRequest(
  h: WebhookHandler,
  operation: AdmissionOperation,
  subresource: string | undefined,
): boolean {
  if (h.operations && !h.operations.includes(operation)) return false;
  if (h.subresource !== "*" && h.subresource !== subresource) return false;
  // Deletions do not go to mutating handlers unless they are for deletions only (Kopf's rule).
  if (h.reason === "mutating" && operation === "DELETE") {
    return h.operations !== undefined && h.operations.every((o) => o === "DELETE");
  }
  return true;
}

/** The error the docs' priority picks: admission, then permanent, then temporary, then any. */
function rank(e: unknown): number {
  if (e instanceof AdmissionError) return 0;
  if (e instanceof PermanentError) return 1;
  if (e instanceof TemporaryError) return 2;
  return 9;
}

function buildResponse(
  review: AnyObject,
  errors: unknown[],
  warnings: string[],
  jsonpatch: unknown[],
): AnyObject {
  const response: AnyObject = { uid: review?.request?.uid ?? "", allowed: true };
  if (warnings.length) response.warnings = warnings.map((w) => String(w));
  if (jsonpatch.length) {
    response.patch = base64(JSON.stringify(jsonpatch));
    response.patchType = "JSONPatch";
  }
  const [error] = [...errors].sort((a, b) => rank(a) - rank(b));
  if (errors.length) {
    response.allowed = false;
    const message = error instanceof Error ? error.message || error.name : String(error);
    const code = error instanceof AdmissionError ? error.code : 500;
    response.status = { message, code };
  }
  return {
    apiVersion: review?.apiVersion ?? "admission.k8s.io/v1",
    kind: review?.kind ?? "AdmissionReview",
    response,
  };
}

function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}
