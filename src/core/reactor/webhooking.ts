/**
 * Admission in a running operator: the webhook server (or tunnel) from
 * `settings.admission.server`, given the operator's webhook function; and,
 * with `settings.admission.managed`, the managed ValidatingWebhookConfiguration
 * and MutatingWebhookConfiguration, created if absent and patched with one
 * webhook per handler every time the server yields a client config. At a
 * graceful exit, the non-persistent webhooks are removed (Kopf's
 * `configuration_manager` and `admission_webhook_server`); the main exit
 * sequence (running.ts) awaits that clean-up before the vault closes.
 *
 * Conversion (beyond Kopf): the same server answers ConversionReviews at
 * `<url>/convert/<plural>.<group>`; with `settings.admission.managed`, each
 * CRD served by converters gets `spec.conversion` = strategy Webhook with
 * that URL and the server's caBundle (patched only when it differs). It is
 * left in place at exit: a CRD whose stored objects need conversion cannot
 * go back to `None` safely — reads of other versions fail while the
 * operator is away, as with `failurePolicy: Fail`.
 *
 * The handlers' resources are resolved at start, and again at every client
 * config and after CRD changes (debounced; a CRD that appears later gets its
 * admission rules and its conversion). Only changes are patched, so the
 * operator's own CRD patches end in a no-op.
 *
 * Admission memos (the docs' "In-memory containers"): UPDATE and DELETE
 * requests get the object's own memo — the one its change handlers, daemons
 * and timers share. The per-object memories live in the watchers' queues;
 * running.ts gives `startAdmission()` the orchestrator's lookup by resource
 * and uid (`Orchestrator.memoryOf`), which the engines use. CREATE requests,
 * and objects no watcher has seen, get a fresh shallow copy of the operator
 * memo, discarded after the request (nothing is remembered for them).
 *
 * A part of the operator's start ({@link admissionPart}, parts.ts): one line
 * in running.ts's list, the rest here.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import type { ApiClient } from "../../cogs/clients/api.ts";
import { ConflictError } from "../../cogs/clients/errors.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import { OperatorLogger } from "../actions/loggers.ts";
import { Debouncer } from "../../cogs/aio/debounce.ts";
import { deepEqual } from "../../cogs/structs/deep_equal.ts";
import { type WebhookClientConfig, type WebhookFn, webhookFn } from "../engines/admission.ts";
import { CONVERSION_PREFIX, serveConversion } from "../engines/conversion.ts";
import { tracedReviews } from "../engines/review_tracing.ts";
import { TRACING } from "../../cogs/tracing/tracing.ts";
import type { ConverterHandler } from "../intents/converters.ts";
import type { AnyObject } from "../intents/handlers.ts";
import { ABSENT, PRESENT } from "../intents/markers.ts";
import type { OperatorRegistry } from "../intents/registry.ts";
import { type WebhookHandler, webhookSegment, type WebhookType } from "../intents/webhooks.ts";
import { need, type OperatorPart } from "./parts.ts";
import { OperatorError } from "./errors.ts";
import { followCrds, resolveResources } from "./observation.ts";
import type { OperatorContext } from "./processing.ts";

const GROUP_PATH = "/apis/admissionregistration.k8s.io/v1";
const KINDS: Record<WebhookType, [plural: string, kind: string]> = {
  validating: ["validatingwebhookconfigurations", "ValidatingWebhookConfiguration"],
  mutating: ["mutatingwebhookconfigurations", "MutatingWebhookConfiguration"],
};

/**
 * Fails the start-up when admission handlers or converters exist and no server is configured, or
 * when the managed configurations would hold a webhook name kube-apiserver refuses.
 *
 * @param registry The registry.
 * @param settings The settings (after the startup handlers).
 * @throws {OperatorError} With one line saying what to set.
 */
export function checkAdmission(registry: OperatorRegistry, settings: OperatorSettings): void {
  if (settings.admission.server !== null) {
    if (settings.admission.managed) checkWebhookNames(registry.webhookHandlers());
    return;
  }
  const what = registry.webhookHandlers().length
    ? "Admission handlers exist"
    : registry.converterHandlers().length
    ? "Converters (kopf.on.convert) exist"
    : undefined;
  if (what) {
    throw new OperatorError(
      `${what}, but no admission server/tunnel is configured in ` +
        "settings.admission.server (e.g. new kopf.WebhookAutoServer() in a startup handler).",
    );
  }
}

/**
 * Refuses handler ids that make no webhook name kube-apiserver accepts, or the same name twice
 * in one configuration (validating or mutating): kube-apiserver would refuse the managed
 * configuration with a 422 at every patch, and no handler of that type would be called.
 */
function checkWebhookNames(handlers: WebhookHandler[]): void {
  const seen = new Map<string, string>();
  for (const h of handlers) {
    const segment = webhookSegment(h.id);
    if (segment === undefined) {
      throw new OperatorError(
        `The ${h.reason} handler ${
          JSON.stringify(h.id)
        } makes no webhook name Kubernetes accepts ` +
          "(a lowercase DNS name: letters, digits, '-' and '.', starting and ending with a letter or digit): " +
          "give it an id= that does.",
      );
    }
    const other = seen.get(`${h.reason} ${segment}`);
    if (other !== undefined) {
      throw new OperatorError(
        `The ${h.reason} handlers ${JSON.stringify(other)} and ${
          JSON.stringify(h.id)
        } make the same ` +
          `webhook name ${
            JSON.stringify(segment)
          } (Kubernetes names are lowercase, '_' becomes '-'): ` +
          "give one of them another id=.",
      );
    }
    seen.set(`${h.reason} ${segment}`, h.id);
  }
}

/** The webhook server's task, and its end with the managed clean-up done (for the exit). */
export interface AdmissionTasks {
  /** The tasks (none without a server). */
  tasks: { name: string; done: Promise<void> }[];
  /** Resolves when the server has stopped and the managed clean-up is done (or failed). */
  closed: Promise<void>;
}

/**
 * Starts the webhook server and the managed configurations, if configured. The resources of
 * the handlers and converters are resolved at start and again at every client config and
 * after CRD changes (a CRD that appears later gets its rules and its conversion webhook).
 *
 * @param op The operator's parts.
 * @param api The API client.
 * @param stop Aborted to stop the operator (also when the server ends on its own).
 * @param memories The per-object memory of an object the watchers know, by the request's body and
 *   resource (admission memos); undefined for objects not seen.
 * @returns The task, and its end with the clean-up (to await before the vault closes).
 */
export function startAdmission(
  op: OperatorContext,
  api: ApiClient,
  stop: AbortController,
  memories?: (body: AnyObject, resource?: Resource) => { memo: AnyObject } | undefined,
): AdmissionTasks {
  const server = op.settings.admission.server;
  if (server === null) return { tasks: [], closed: Promise.resolve() };
  const signal = stop.signal;
  const logger = new OperatorLogger(op.sink, "kopf.admission");
  const managed = op.settings.admission.managed;
  const handlers = op.registry.webhookHandlers();
  const converters = op.registry.converterHandlers();
  let resources: Resource[] = [];
  const parts = { ...op, ...(memories ? { memories } : {}), signal, resources: () => resources };
  const admit = webhookFn(parts);
  // Bound to the operator's async scope: a server's request callbacks lose it (kopf.api(), kopf.event()).
  // A request the operator cannot serve is answered 4xx/5xx by the server, and kube-apiserver
  // only tells its client "failed calling webhook": the operator says which one and why.
  const serve: WebhookFn = async (review, request) => {
    try {
      return await (review?.kind === "ConversionReview"
        ? serveConversion(review, parts, request)
        : admit(review, request));
    } catch (e) {
      logger.error(unservedLine(review, request?.webhook, e));
      throw e;
    }
  };
  // With tracing on, a server span per review, continuing the caller's traceparent.
  const fn: WebhookFn = AsyncLocalStorage.bind(TRACING ? tracedReviews(serve) : serve);
  const selectors = [...new Set([...handlers, ...converters].map((h) => h.selector))];
  const resolve = async () => {
    if (selectors.length) {
      resources = (await resolveResources(api, selectors, signal, false)).resources;
    }
  };
  let lastConfig: WebhookClientConfig | undefined;
  let applied = "";
  let configured = false;
  // One reconfiguration at a time; a burst of triggers while one runs: one more after it.
  let chain: Promise<void> = Promise.resolve();
  let queued = false;
  const reconfigure = (): Promise<void> => {
    if (queued) return chain;
    queued = true;
    return chain = chain.then(async () => {
      queued = false;
      const config = lastConfig;
      if (!managed || !config || signal.aborted) return;
      await resolve();
      const key = JSON.stringify([resources.map(String), config]);
      if (key !== applied) {
        for (const reason of ["validating", "mutating"] as const) {
          logger.info(`Reconfiguring the ${reason} webhook ${managed}.`);
          const own = handlers.filter((h) => h.reason === reason);
          await patchConfiguration(
            api,
            reason,
            managed,
            buildWebhooks(own, resources, managed, config),
          );
          configured = true;
        }
        applied = key;
      }
      await manageConversion(api, converters, resources, config, logger);
    }).catch((e) => {
      if (!signal.aborted) {
        logger.warning(`Reconfiguring the webhooks failed: ${(e as Error).message}`);
      }
    });
  };
  const done = (async () => {
    await resolve();
    if (managed) {
      for (const reason of ["validating", "mutating"] as const) {
        await createConfiguration(api, reason, managed);
      }
      if (!op.settings.scanning.disabled) {
        const rescan = new Debouncer(0.5, reconfigure, op.clock);
        signal.addEventListener("abort", () => rescan.cancel(), { once: true });
        void followCrds(api, {
          signal,
          onChange: () => rescan.trigger(),
          onError: (e) =>
            logger.debug(`Not following CRDs: ${(e as Error).message.split("\n")[0]}`),
        });
      }
    }
    try {
      for await (const config of iterate(server, fn, { signal, api, logger })) {
        lastConfig = config;
        await reconfigure();
      }
      if (!signal.aborted) {
        throw new OperatorError("The admission webhook server has exited; the operator stops.");
      }
    } finally {
      await chain;
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
  return { tasks: [{ name: "admission", done }], closed: done.then(() => {}, () => {}) };
}

function iterate(
  s: unknown,
  f: WebhookFn,
  o: { signal: AbortSignal; api: ApiClient; logger: OperatorLogger },
): AsyncIterable<WebhookClientConfig> {
  return typeof s === "function"
    ? s(f, o)
    : (s as { serve: (f: WebhookFn, o: unknown) => AsyncIterable<WebhookClientConfig> }).serve(
      f,
      o,
    );
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

/**
 * `create_fn/sub` → `create-fn.sub.<suffix>`, `checkSpec` → `checkspec.<suffix>` (kube-apiserver
 * wants a lowercase DNS subdomain; {@link webhookSegment}). The start-up check
 * ({@link checkAdmission}) has refused ids that make no such name, or the same name twice.
 */
function webhookName(id: string, suffix: string): string {
  return `${webhookSegment(id) ?? id}.${suffix}`;
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

function withHandlerId(
  config: WebhookClientConfig,
  id: string,
  encode = true,
): WebhookClientConfig {
  const out: WebhookClientConfig = { ...config };
  const encoded = encode ? encodeURIComponent(id) : id;
  if (config.url !== undefined) out.url = `${config.url.replace(/\/+$/, "")}/${encoded}`;
  if (config.service) {
    // Each segment of a service's path must be a DNS subdomain (kube-apiserver refuses the
    // configuration otherwise): a handler's id as its segment (the admission engine takes it).
    const segment = encode ? webhookSegment(id) ?? encoded : id;
    out.service = {
      ...config.service,
      path: `${(config.service.path ?? "").replace(/\/+$/, "")}/${segment}`,
    };
  }
  return out;
}

/**
 * The `spec.conversion` of a CRD served by the operator's converters.
 *
 * @param crd The CRD's name (`<plural>.<group>`).
 * @param config The client config from the server (`/convert/<crd>` is appended to its URL).
 * @returns The conversion (strategy Webhook, the client config, review versions v1).
 */
export function buildConversion(crd: string, config: WebhookClientConfig): AnyObject {
  const clientConfig: AnyObject = withHandlerId(config, `${CONVERSION_PREFIX}${crd}`, false);
  // A merge patch: the other of url/service is removed (exactly one of them is allowed).
  if (clientConfig.url !== undefined) clientConfig.service = null;
  else clientConfig.url = null;
  return { strategy: "Webhook", webhook: { clientConfig, conversionReviewVersions: ["v1"] } };
}

/** Patches the conversion of the converters' CRDs where it is not what it should be. */
async function manageConversion(
  api: ApiClient,
  converters: ConverterHandler[],
  resources: Resource[],
  config: WebhookClientConfig,
  logger: OperatorLogger,
): Promise<void> {
  const crds = new Set<string>();
  for (const r of resources) {
    if (r.group && converters.some((h) => h.selector.check(r))) crds.add(`${r.plural}.${r.group}`);
  }
  for (const crd of crds) {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`;
    const wanted = buildConversion(crd, config);
    const current = (await api.request<AnyObject>("GET", path))?.spec?.conversion;
    const { clientConfig, ...rest } = wanted.webhook;
    const present = Object.fromEntries(Object.entries(clientConfig).filter(([, v]) => v !== null));
    if (deepEqual(current, { ...wanted, webhook: { ...rest, clientConfig: present } })) continue;
    logger.info(`Reconfiguring the conversion webhook of ${crd}.`);
    await api.request("PATCH", path, {
      body: { spec: { conversion: wanted } },
      contentType: "application/merge-patch+json",
    });
  }
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

/**
 * One line for a webhook request that the operator could not serve: which webhook, what
 * operation on what, and why (e.g. `Webhook 'mutate1' could not serve a DELETE of
 * kopfexamples.kopf.dev default/x: Either old or new object is missing from the admission request.`).
 */
function unservedLine(review: AnyObject, webhook: string | undefined, e: unknown): string {
  const why = e instanceof Error ? e.message || e.name : String(e);
  const who = webhook ? `Webhook '${webhook}'` : "A webhook request";
  const req: AnyObject = review?.request ?? {};
  if (review?.kind === "ConversionReview") {
    return `${who} could not convert to ${String(req.desiredAPIVersion ?? "?")}: ${why}`;
  }
  const r: AnyObject = req.resource ?? {};
  const what = r.resource ? `${r.resource}${r.group ? `.${r.group}` : ""}` : "an unnamed resource";
  const name = req.name ?? req.object?.metadata?.name ?? req.oldObject?.metadata?.name;
  const where = name ? ` ${req.namespace ? `${req.namespace}/` : ""}${name}` : "";
  return `${who} could not serve ${
    req.operation ? `a ${req.operation}` : "a request with no operation"
  } of ${what}${where}: ${why}`;
}

/**
 * Admission as a part of a running operator (running.ts): its settings checked after the startup
 * handlers; started after the watchers (whose per-object memories it lends to the requests);
 * its clean-up awaited at the exit before the vault closes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { admissionPart } from "./webhooking.ts";
 * assert.equal(admissionPart.name, "admission");
 * ```
 */
export const admissionPart: OperatorPart = {
  name: "admission",
  check: (run) => checkAdmission(run.registry, run.settings),
  start(run) {
    const watchers = need(run, "watchers");
    const admission = startAdmission(
      need(run, "op"),
      need(run, "api"),
      run.stop,
      watchers.memoryOf,
    );
    return { tasks: admission.tasks, exit: { admission: () => admission.closed } };
  },
};
