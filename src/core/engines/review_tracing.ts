/**
 * The span of an admission or conversion review the operator serves: a server span per review
 * (`kopf.admission <webhook>` or `kopf.conversion <desired apiVersion>`) that continues the
 * caller's trace when the request carries `traceparent` (kube-apiserver with tracing on, the
 * embedded API server), with the handlers' attempts as its children (`kopf.handler <id>`).
 *
 * Why here and not in the webhook server: reviews reach the operator through any server — ours
 * over `Deno.serve` or `node:https`, a tunnel, a user's own — and all of them call one
 * {@link WebhookFn} with the request's headers; the span is made there, once, for all of them.
 * (With `Deno.serve`, the runtime makes an HTTP server span of its own too; ours carries the
 * review.)
 *
 * Attributes: `kopf.review.kind`, `kopf.review.uid`, `kopf.webhook`, `kopf.resource`,
 * `k8s.namespace.name`, `kopf.object.name`, `kopf.admission.operation`,
 * `kopf.admission.dry_run`, and at the end `kopf.admission.allowed` (or, for a conversion,
 * `kopf.conversion.desired_api_version` and `kopf.conversion.objects`). An error the review
 * throws is recorded and sets the status ERROR; a denial is an answer, not an error.
 *
 * webhooking.ts wraps its function with {@link tracedReviews} only when tracing is on.
 *
 * @module
 */

import {
  type Attributes,
  endSpan,
  extractTraceContext,
  inSpan,
  SpanKinds,
  startSpan,
} from "../../cogs/tracing/tracing.ts";
import type { AnyObject } from "../actions/invocation.ts";
import type { WebhookFn, WebhookRequestOptions } from "./admission.ts";

/**
 * Wraps a webhook function: each review in a server span (see the module doc).
 *
 * @param fn The operator's webhook function.
 * @returns The traced function.
 */
export function tracedReviews(fn: WebhookFn): WebhookFn {
  return async (review, request) => {
    const conversion = review?.kind === "ConversionReview";
    const req: AnyObject = review?.request ?? {};
    const attributes = conversion ? conversionAttributes(req) : admissionAttributes(req, request);
    const name = conversion
      ? `kopf.conversion ${req.desiredAPIVersion ?? ""}`
      : `kopf.admission ${request?.webhook ?? ""}`;
    const headers = request?.headers ?? {};
    const parent = extractTraceContext((h) => headers[h] ?? null);
    const span = startSpan(name.trim(), attributes, {
      kind: SpanKinds.SERVER,
      ...(parent ? { parent } : { root: true }),
    });
    try {
      const answer = await inSpan(span, fn, review, request);
      const response = answer?.response;
      if (!conversion && typeof response?.allowed === "boolean") {
        span?.setAttribute("kopf.admission.allowed", response.allowed);
      }
      if (conversion && Array.isArray(response?.convertedObjects)) {
        span?.setAttribute("kopf.conversion.objects", response.convertedObjects.length);
      }
      endSpan(span);
      return answer;
    } catch (error) {
      endSpan(span, error);
      throw error;
    }
  };
}

function admissionAttributes(
  req: AnyObject,
  request: WebhookRequestOptions | undefined,
): Attributes {
  const out: Attributes = { "kopf.review.kind": "AdmissionReview" };
  if (req.uid) out["kopf.review.uid"] = String(req.uid);
  if (request?.webhook) out["kopf.webhook"] = request.webhook;
  const r = req.resource;
  if (r?.resource) {
    out["kopf.resource"] = `${r.resource}${r.group ? `.${r.group}` : ""}/${r.version ?? ""}`;
  }
  if (req.namespace) out["k8s.namespace.name"] = String(req.namespace);
  if (req.name) out["kopf.object.name"] = String(req.name);
  if (req.operation) out["kopf.admission.operation"] = String(req.operation);
  out["kopf.admission.dry_run"] = Boolean(req.dryRun);
  return out;
}

function conversionAttributes(req: AnyObject): Attributes {
  const out: Attributes = { "kopf.review.kind": "ConversionReview" };
  if (req.uid) out["kopf.review.uid"] = String(req.uid);
  if (req.desiredAPIVersion) {
    out["kopf.conversion.desired_api_version"] = String(req.desiredAPIVersion);
  }
  return out;
}
