/**
 * A CRD's `spec.conversion`: its shape, and its validation as kube-apiserver
 * validates it on a CRD's create and update. The conversion itself (calling
 * the webhook) is the webhooks room's `conversion.ts`; the check of the spec
 * belongs with the CRD's other checks here.
 *
 * @module
 */

import type { StatusCause } from "../shared/errors.ts";

/** A CRD's `spec.conversion`, as read. */
export interface ConversionSpec {
  strategy?: string;
  webhook?: {
    clientConfig?: {
      url?: string;
      caBundle?: string;
      service?: { namespace?: string; name?: string; path?: string; port?: number };
    };
    conversionReviewVersions?: string[];
  };
}

/**
 * Validates a CRD's `spec.conversion` as kube-apiserver does: the strategy
 * is `None` or `Webhook`; `Webhook` needs the webhook's client config
 * (exactly one of `url` and `service`, `url` over https) and review versions
 * that include `v1` or `v1beta1`; `None` takes no webhook.
 *
 * @param conversion The CRD's `spec.conversion` (may be absent).
 * @returns The causes of a 422, if any.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateCrdConversion } from "./crd_conversion.ts";
 * const [cause] = validateCrdConversion({ strategy: "Webhook" });
 * assert.deepEqual([cause!.field, cause!.message], ["spec.conversion.webhookClientConfig", "Required value: required when strategy is set to Webhook"]);
 * ```
 */
export function validateCrdConversion(conversion: unknown): StatusCause[] {
  if (conversion === undefined || conversion === null) return [];
  const causes: StatusCause[] = [];
  const spec = conversion as ConversionSpec;
  const strategy = spec.strategy;
  if (strategy !== "None" && strategy !== "Webhook") {
    causes.push({
      reason: strategy === undefined || strategy === ""
        ? "FieldValueRequired"
        : "FieldValueNotSupported",
      message: strategy === undefined || strategy === ""
        ? "Required value"
        : `Unsupported value: ${JSON.stringify(strategy)}: supported values: "None", "Webhook"`,
      field: "spec.conversion.strategy",
    });
    return causes;
  }
  const config = spec.webhook?.clientConfig;
  if (strategy === "None") {
    if (config) {
      causes.push({
        reason: "FieldValueForbidden",
        message: "Forbidden: should not be set when strategy is not set to Webhook",
        field: "spec.conversion.webhookClientConfig",
      });
    }
    return causes;
  }
  if (!config) {
    causes.push({
      reason: "FieldValueRequired",
      message: "Required value: required when strategy is set to Webhook",
      field: "spec.conversion.webhookClientConfig",
    });
  } else if (!!config.url === !!config.service) {
    causes.push({
      reason: "FieldValueRequired",
      message: "Required value: exactly one of url or service is required",
      field: "spec.conversion.webhookClientConfig",
    });
  } else if (config.url) {
    let url: URL | undefined;
    try {
      url = new URL(config.url);
    } catch {
      causes.push({
        reason: "FieldValueInvalid",
        message: `Invalid value: ${JSON.stringify(config.url)}: host must be specified`,
        field: "spec.conversion.webhookClientConfig.url",
      });
    }
    if (url && url.protocol !== "https:") {
      causes.push({
        reason: "FieldValueInvalid",
        message: `Invalid value: ${
          JSON.stringify(config.url)
        }: 'https' is the only allowed URL scheme`,
        field: "spec.conversion.webhookClientConfig.url",
      });
    }
  }
  const versions = spec.webhook?.conversionReviewVersions;
  if (!versions || !versions.length) {
    causes.push({
      reason: "FieldValueRequired",
      message: "Required value: must include at least one of v1, v1beta1",
      field: "spec.conversion.conversionReviewVersions",
    });
  } else if (!versions.some((v) => v === "v1" || v === "v1beta1")) {
    causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid value: ${
        JSON.stringify(versions)
      }: must include at least one of v1, v1beta1`,
      field: "spec.conversion.conversionReviewVersions",
    });
  }
  return causes;
}
