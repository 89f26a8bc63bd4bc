/**
 * Admission in a running operator: the webhook server (or tunnel) from
 * `settings.admission.server`, given the operator's webhook function; and,
 * with `settings.admission.managed`, the managed ValidatingWebhookConfiguration
 * and MutatingWebhookConfiguration, created if absent and patched with one
 * webhook per handler every time the server yields a client config. At a
 * graceful exit, the non-persistent webhooks are removed (Kopf's
 * `configuration_manager` and `admission_webhook_server`).
 *
 * Apart from running.ts so that the operator's start stays readable: two
 * calls there, the rest here.
 *
 * @module
 */

import type { ApiClient } from "../../cogs/clients/api.ts";
import { ConflictError } from "../../cogs/clients/errors.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import type { Resource } from "../../cogs/structs/references.ts";
import { OperatorLogger } from "../actions/loggers.ts";
import { type WebhookClientConfig, type WebhookFn, webhookFn } from "../engines/admission.ts";
import { ABSENT, PRESENT } from "../intents/markers.ts";
import type { OperatorRegistry } from "../intents/registry.ts";
import type { WebhookHandler, WebhookType } from "../intents/webhooks.ts";
import { OperatorError } from "./errors.ts";
import { resolveResources } from "./observation.ts";
import type { OperatorContext } from "./processing.ts";

const GROUP_PATH = "/apis/admissionregistration.k8s.io/v1";
const KINDS: Record<WebhookType, [plural: string, kind: string]> = {
  validating: ["validatingwebhookconfigurations", "ValidatingWebhookConfiguration"],
  mutating: ["mutatingwebhookconfigurations", "MutatingWebhookConfiguration"],
};

/**
 * Fails the start-up when admission handlers exist and no server is configured.
 *
 * @param registry The registry.
 * @param settings The settings (after the startup handlers).
 * @throws {OperatorError} With one line saying what to set.
 */
export function checkAdmission(registry: OperatorRegistry, settings: OperatorSettings): void {
  if (registry.webhookHandlers().length && settings.admission.server === null) {
    throw new OperatorError(
      "Admission handlers exist, but no admission server/tunnel is configured in " +
        "settings.admission.server (e.g. new kopf.WebhookAutoServer() in a startup handler).",
    );
  }
}

/**
 * Starts the webhook server and the managed configurations, if configured.
 *
 * @param op The operator's parts.
 * @param api The API client.
 * @param stop Aborted to stop the operator (also when the server ends on its own).
 * @returns The task (none without a server).
 */
export function startAdmission(
  op: OperatorContext,
  api: ApiClient,
  stop: AbortController,
): { name: string; done: Promise<void> }[] {
  const server = op.settings.admission.server;
  if (server === null) return [];
  const signal = stop.signal;
  const logger = new OperatorLogger(op.sink, "kopf.admission");
  const fn = webhookFn({
    registry: op.registry,
    settings: op.settings,
    memo: op.memo,
    sink: op.sink,
    indices: op.indices,
    signal,
  });
  let lastConfig: WebhookClientConfig | undefined;
  const done = (async () => {
    const managed = op.settings.admission.managed;
    const handlers = op.registry.webhookHandlers();
    const resources = managed && handlers.length
      ? (await resolveResources(api, [...new Set(handlers.map((h) => h.selector))], signal, false))
        .resources
      : [];
    if (managed) {
      for (const reason of ["validating", "mutating"] as const) {
        await createConfiguration(api, reason, managed);
      }
    }
    let configured = false;
    try {
      for await (const config of iterate(server, fn, { signal, api })) {
        if (!managed) continue;
        for (const reason of ["validating", "mutating"] as const) {
          logger.info(`Reconfiguring the ${reason} webhook ${managed}.`);
          const webhooks = buildWebhooks(
            handlers.filter((h) => h.reason === reason),
            resources,
            managed,
            config,
          );
          await patchConfiguration(api, reason, managed, webhooks);
          configured = true;
        }
      }
      if (!signal.aborted) {
        throw new OperatorError("The admission webhook server has exited; the operator stops.");
      }
    } finally {
      if (managed && configured) {
        logger.info(`Cleaning up the admission webhooks ${managed}.`);
        for (const reason of ["validating", "mutating"] as const) {
          const kept = handlers.filter((h) => h.reason === reason && h.persistent);
          const webhooks = lastConfig ? buildWebhooks(kept, resources, managed, lastConfig) : [];
          await patchConfiguration(api, reason, managed, webhooks).catch((e) => {
            logger.warning(`Cannot clean up the ${reason} webhooks: ${(e as Error).message}`);
          });
        }
      }
      await (server as { [Symbol.asyncDispose]?: () => Promise<void> })[Symbol.asyncDispose]
        ?.call(server);
    }
  })().catch((e) => {
    stop.abort();
    throw e;
  });
  async function* iterate(
    s: unknown,
    f: WebhookFn,
    o: { signal: AbortSignal; api: ApiClient },
  ): AsyncGenerator<WebhookClientConfig> {
    const it = typeof s === "function"
      ? s(f, o)
      : (s as { serve: (f: WebhookFn, o: unknown) => AsyncIterable<WebhookClientConfig> })
        .serve(f, o);
    for await (const c of it as AsyncIterable<WebhookClientConfig>) yield lastConfig = c;
  }
  return [{ name: "admission", done }];
}

/**
 * The webhooks of the managed configurations, one per handler (Kopf's `build_webhooks`).
 *
 * @param handlers The handlers (of one type).
 * @param resources The resolved resources (for the rules).
 * @param suffix The managed name (the webhooks' names end with it).
 * @param config The client config from the server (the handler id is appended to its URL).
 * @returns The webhooks.
 */
export function buildWebhooks(
  handlers: WebhookHandler[],
  resources: Resource[],
  suffix: string,
  config: WebhookClientConfig,
): Record<string, unknown>[] {
  return handlers.map((h) => {
    const selector = objectSelector(h);
    return {
      name: webhookName(h.id, suffix),
      sideEffects: h.sideEffects ? "NoneOnDryRun" : "None",
      failurePolicy: h.ignoreFailures ? "Ignore" : "Fail",
      matchPolicy: "Equivalent",
      rules: resources.filter((r) => h.selector.check(r)).map((r) => ({
        apiGroups: [r.group],
        apiVersions: [r.version],
        resources: [h.subresource === undefined ? r.plural : `${r.plural}/${h.subresource}`],
        operations: h.operations ? [...h.operations] : ["*"],
        scope: "*",
      })),
      ...(selector ? { objectSelector: selector } : {}),
      clientConfig: withHandlerId(config, h.id),
      timeoutSeconds: 30,
      admissionReviewVersions: ["v1"],
    };
  });
}

/** `create_fn/sub` → `create-fn.sub.<suffix>`; other characters as `x<hex>`. */
function webhookName(id: string, suffix: string): string {
  const name = id.replaceAll("/", ".").replaceAll("_", "-")
    .replace(/[^\w.-]/g, (c) => `x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  return `${name}.${suffix}`;
}

/** Label filters that Kubernetes can evaluate (strings, PRESENT, ABSENT); callbacks are ours. */
function objectSelector(h: WebhookHandler): Record<string, unknown> | undefined {
  const exprs = Object.entries(h.labels ?? {}).filter(([, v]) => typeof v !== "function").map((
    [key, v],
  ) =>
    v === PRESENT
      ? { key, operator: "Exists" }
      : v === ABSENT
      ? { key, operator: "DoesNotExist" }
      : { key, operator: "In", values: [String(v)] }
  );
  return exprs.length ? { matchExpressions: exprs } : undefined;
}

function withHandlerId(config: WebhookClientConfig, id: string): WebhookClientConfig {
  const out: WebhookClientConfig = { ...config };
  const encoded = encodeURIComponent(id);
  if (config.url !== undefined) out.url = `${config.url.replace(/\/+$/, "")}/${encoded}`;
  if (config.service) {
    out.service = {
      ...config.service,
      path: `${(config.service.path ?? "").replace(/\/+$/, "")}/${encoded}`,
    };
  }
  return out;
}

async function createConfiguration(api: ApiClient, reason: WebhookType, name: string) {
  const [plural, kind] = KINDS[reason];
  try {
    await api.request("POST", `${GROUP_PATH}/${plural}`, {
      body: { apiVersion: "admissionregistration.k8s.io/v1", kind, metadata: { name } },
    });
  } catch (e) {
    if (!(e instanceof ConflictError)) throw e;
  }
}

async function patchConfiguration(
  api: ApiClient,
  reason: WebhookType,
  name: string,
  webhooks: Record<string, unknown>[],
) {
  const [plural] = KINDS[reason];
  await api.request("PATCH", `${GROUP_PATH}/${plural}/${name}`, {
    body: { webhooks },
    contentType: "application/merge-patch+json",
  });
}
