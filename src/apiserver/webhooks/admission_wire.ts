/**
 * What goes over the wire between kube-apiserver and an admission webhook,
 * and what a client sees of it: the v1 `AdmissionReview` request (`kind` and
 * `resource` of the version the webhook is called at, `request*` of the
 * client's), and the Status errors a denial or a failed call become — worded
 * as kube-apiserver words them, so kubectl prints
 * `admission webhook "<name>" denied the request: <message>`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { denial } from "./admission_wire.ts";
 * const e = denial("check.example.com", { code: 403, message: "Not today." });
 * assert.deepEqual([e.code, e.message], [403, "admission webhook \"check.example.com\" denied the request: Not today."]);
 * ```
 *
 * @module
 */

import type { AdmissionOperation, AdmissionRequestInfo, Review } from "./admission_types.ts";
import type { Webhook } from "./admission_matching.ts";
import { ApiError, type StatusDetails } from "../shared/errors.ts";
import type { WriteOptions } from "../objects/write_types.ts";
import type { ResourceDef } from "../shared/resources.ts";

/** `request.options` of a create or update: CreateOptions/UpdateOptions as the request gave them. */
export function writeOptionsObject(
  operation: AdmissionOperation,
  options: WriteOptions,
  _subresource: string | undefined,
): Record<string, unknown> {
  const kind = operation === "CREATE" ? "CreateOptions" : "UpdateOptions";
  const out: Record<string, unknown> = { kind, apiVersion: "meta.k8s.io/v1" };
  if (options.dryRun) out.dryRun = ["All"];
  if (options.fieldManager) out.fieldManager = options.fieldManager;
  if (options.fieldValidation) out.fieldValidation = options.fieldValidation;
  return out;
}

/** The AdmissionReview: `kind`/`resource` of the matched version, `request*` of the request's. */
export function reviewBody(
  uid: string,
  info: AdmissionRequestInfo,
  def: ResourceDef,
  review: Review,
): unknown {
  const kindOf = (d: ResourceDef) => ({ group: d.group, version: d.version, kind: d.kind });
  const resourceOf = (d: ResourceDef) => ({
    group: d.group,
    version: d.version,
    resource: d.plural,
  });
  const name = info.name || review.object?.metadata?.name || review.oldObject?.metadata?.name;
  const request: Record<string, unknown> = {
    uid,
    kind: kindOf(def),
    resource: resourceOf(def),
    ...(info.subresource ? { subResource: info.subresource } : {}),
    requestKind: kindOf(info.def),
    requestResource: resourceOf(info.def),
    ...(info.subresource ? { requestSubResource: info.subresource } : {}),
    ...(name ? { name } : {}),
    ...(def.namespaced && info.namespace ? { namespace: info.namespace } : {}),
    operation: review.operation,
    userInfo: info.userInfo,
    object: review.object,
    oldObject: review.oldObject,
    dryRun: review.dryRun,
    options: review.options,
  };
  return { kind: "AdmissionReview", apiVersion: "admission.k8s.io/v1", request };
}

/** A failed call (failurePolicy Fail): 500 `failed calling webhook "<name>": <why>`. */
export function failedCall(hook: Webhook, reason: string): ApiError {
  return internalError(`failed calling webhook "${hook.name}": ${reason}`);
}

/** kube-apiserver's `NewInternalError`. */
export function internalError(message: string): ApiError {
  return new ApiError(500, "InternalError", `Internal error occurred: ${message}`, {
    causes: [{ reason: "", message }],
  });
}

/** A denial as kube-apiserver's webhook errors say it (`ToStatusErr`). */
export function denial(name: string, status: unknown): ApiError {
  const result = (status && typeof status === "object" ? status : {}) as {
    code?: number;
    reason?: string;
    message?: string;
    details?: StatusDetails;
  };
  const deniedBy = `admission webhook "${name}" denied the request`;
  const code = typeof result.code === "number" && result.code >= 400 ? result.code : 400;
  const message = result.message
    ? `${deniedBy}: ${result.message}`
    : result.reason
    ? `${deniedBy}: ${result.reason}`
    : `${deniedBy} without explanation`;
  return new ApiError(code, result.reason ?? "", message, result.details);
}
