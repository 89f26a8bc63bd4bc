/**
 * Conversion: a ConversionReview (apiextensions.k8s.io/v1) request in, a
 * ConversionReview response out — the CRD conversion webhook of Kubernetes
 * (beyond Kopf). Each object of the request is converted from its version to
 * the request's `desiredAPIVersion` by the resource's converters
 * (`kopf.on.convert`): the direct step if registered, else the shortest chain
 * of steps (v1 → v2 → v3 when only v1 → v2 and v2 → v3 are registered).
 * Objects already at the desired version pass unchanged. Each step runs
 * through the one handler executor with errors `"permanent"` (Kubernetes
 * waits for the answer: nothing is retried); the first failure fails the
 * whole review (`result.status: "Failure"`), with a message that names the
 * converter and the object, as the API client will see it.
 *
 * Which resource: webhook servers route `POST <path>/convert/<plural>.<group>`
 * (the CRD's name) here with the webhook `convert/<plural>.<group>`; without
 * it, the resource is found by the objects' group and kind.
 *
 * @module
 */

import { deepCopy } from "../../cogs/structs/dicts.ts";
import { applyMergePatch } from "../../cogs/structs/merge_patch.ts";
import { Patch } from "../../cogs/structs/patches.ts";
import { Resource } from "../../cogs/structs/resource.ts";
import { executeHandlers, withAttempt } from "../actions/execution.ts";
import { allAtOnce } from "../actions/lifecycles.ts";
import { ObjectLogger } from "../actions/loggers.ts";
import { State } from "../actions/progression.ts";
import { objectContext } from "../intents/contexts.ts";
import type { ConverterHandler } from "../intents/converters.ts";
import type { AnyObject } from "../intents/handlers.ts";
import {
  type AdmissionOptions,
  MissingDataError,
  type WebhookRequestOptions,
} from "./admission.ts";
import { copyMemo, objectMemo } from "./memos.ts";
import { ConversionError } from "./review_errors.ts";

export { ConversionError };

/** The webhook (path under the server's root) of a CRD's conversion: `convert/<plural>.<group>`. */
export const CONVERSION_PREFIX = "convert/";

/** What the conversion engine needs from the operator: the admission engine's, and the resources. */
export interface ConversionOptions extends AdmissionOptions {
  /** The resources as discovered (for selectors by shortcut, singular or category). */
  resources?: () => Resource[];
}

/**
 * Serves one ConversionReview request.
 *
 * @param review The JSON-parsed ConversionReview request.
 * @param options The operator's parts.
 * @param request The webhook (`convert/<plural>.<group>`) the request came to.
 * @returns The ConversionReview response (a failure is a response too).
 * @throws {MissingDataError} Without `request.desiredAPIVersion` or `request.objects`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * import { serveConversion } from "./conversion.ts";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v2" }, ({ body }) => {
 *   const { field, ...spec } = body.spec;
 *   return { ...body, spec: { ...spec, renamed: field } };
 * });
 * const review = await serveConversion({
 *   apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview",
 *   request: {
 *     uid: "u1", desiredAPIVersion: "kopf.dev/v2",
 *     objects: [{ apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "x" }, spec: { field: 1 } }],
 *   },
 * }, { registry, settings: new kopf.OperatorSettings(), memo: {}, sink: () => {} },
 *   { webhook: "convert/kopfexamples.kopf.dev" });
 * assert.deepEqual(review.response.convertedObjects[0], { apiVersion: "kopf.dev/v2", kind: "KopfExample", metadata: { name: "x" }, spec: { renamed: 1 } });
 * ```
 */
export async function serveConversion(
  review: AnyObject,
  options: ConversionOptions,
  request: WebhookRequestOptions = {},
): Promise<AnyObject> {
  const req: AnyObject = review?.request ?? {};
  const desired = req.desiredAPIVersion;
  if (typeof desired !== "string" || !Array.isArray(req.objects)) {
    throw new MissingDataError("The conversion request has no desiredAPIVersion or objects.");
  }
  const crd = request.webhook?.startsWith(CONVERSION_PREFIX)
    ? request.webhook.slice(CONVERSION_PREFIX.length)
    : undefined;
  const response: AnyObject = { uid: req.uid ?? "" };
  try {
    const converted: AnyObject[] = [];
    const plans = new Map<string, Plan>(); // the objects of one review mostly share one plan
    for (const obj of req.objects as AnyObject[]) {
      converted.push(await convertObject(obj, desired, crd, options, plans));
    }
    response.convertedObjects = converted;
    response.result = { status: "Success" };
  } catch (e) {
    response.result = { status: "Failure", message: e instanceof Error ? e.message : String(e) };
  }
  return {
    apiVersion: review?.apiVersion ?? "apiextensions.k8s.io/v1",
    kind: review?.kind ?? "ConversionReview",
    response,
  };
}

/**
 * The shortest chain of converters from one version to another (breadth-first over the steps).
 *
 * @param converters The resource's converters.
 * @param from The object's version.
 * @param to The desired version.
 * @returns The steps in order ([] when from is to); undefined when no chain exists.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findChain } from "./conversion.ts";
 * const step = (from: string, to: string) => ({ id: `${from}-${to}`, from, to });
 * const chain = findChain([step("v1", "v2"), step("v2", "v3")] as never, "v1", "v3");
 * assert.deepEqual(chain?.map((h) => h.id), [ "v1-v2", "v2-v3" ]);
 * ```
 */
export function findChain(
  converters: ConverterHandler[],
  from: string,
  to: string,
): ConverterHandler[] | undefined {
  const paths = new Map<string, ConverterHandler[]>([[from, []]]);
  const queue = [from];
  while (queue.length) {
    const version = queue.shift()!;
    const path = paths.get(version)!;
    if (version === to) return path;
    for (const h of converters) {
      if (h.from !== version || paths.has(h.to)) continue;
      paths.set(h.to, [...path, h]);
      queue.push(h.to);
    }
  }
  return undefined;
}

/** How objects of one apiVersion and kind get to the desired version: the resource and the steps. */
interface Plan {
  resource: Resource;
  chain: ConverterHandler[];
}

async function convertObject(
  obj: AnyObject,
  desired: string,
  crd: string | undefined,
  options: ConversionOptions,
  plans: Map<string, Plan>,
): Promise<AnyObject> {
  if (obj?.apiVersion === desired) return obj;
  const key = `${obj?.apiVersion} ${obj?.kind}`;
  let plan = plans.get(key);
  if (!plan) plans.set(key, plan = planConversion(obj, desired, crd, options));
  let current = obj;
  for (const h of plan.chain) current = await runStep(h, current, plan.resource, desired, options);
  return current;
}

/** Finds the resource and the chain of converters for an object (or fails, naming it). */
function planConversion(
  obj: AnyObject,
  desired: string,
  crd: string | undefined,
  options: ConversionOptions,
): Plan {
  const what = describe(obj);
  const [group, from] = splitApiVersion(String(obj?.apiVersion ?? ""));
  const [desiredGroup, to] = splitApiVersion(desired);
  if (group !== desiredGroup) {
    throw new ConversionError(`Cannot convert ${what} to ${desired}: another API group.`);
  }
  const resource = findResource(obj, group, from, crd, options);
  const converters = options.registry.converterHandlers().filter((h) => h.selector.check(resource));
  for (const h of converters) {
    const twin = converters.find((o) => o !== h && o.from === h.from && o.to === h.to);
    if (twin) {
      throw new ConversionError(
        `Cannot convert ${what}: converters '${h.id}' and '${twin.id}' both convert ` +
          `${resource.plural}.${group} from ${h.from} to ${h.to}.`,
      );
    }
  }
  const chain = findChain(converters, from, to);
  if (!chain) {
    const steps = converters.map((h) => `${h.from}→${h.to}`).join(", ") || "none";
    throw new ConversionError(
      `Cannot convert ${what} from ${from} to ${to}: no converter or chain of converters ` +
        `of ${resource.plural}.${group} does it (registered steps: ${steps}).`,
    );
  }
  return { resource, chain };
}

/** Runs one converter on one object; returns the object at the converter's `to` version. */
async function runStep(
  h: ConverterHandler,
  obj: AnyObject,
  resource: Resource,
  desired: string,
  options: ConversionOptions,
): Promise<AnyObject> {
  const apiVersion = resource.group ? `${resource.group}/${h.to}` : h.to;
  const at = new Resource({ ...resource, version: h.from, preferred: true });
  const body = deepCopy(obj);
  const patch = new Patch();
  const logger = new ObjectLogger(options.sink, obj);
  const known = options.memories?.(obj);
  const memo = known ? objectMemo(known, options.memo) : copyMemo(options.memo);
  const context: AnyObject = {
    ...objectContext(body, at, patch, logger, {
      memo,
      settings: options.settings,
      indices: options.indices ?? {},
      ...(options.signal ? { signal: options.signal } : {}),
    }),
    from: h.from,
    to: h.to,
    apiVersion,
    desiredAPIVersion: desired,
  };
  const outcomes = await executeHandlers<ConverterHandler>([h], {
    state: new State("conversion"),
    kind: "conversion",
    defaultErrors: "permanent",
    lifecycle: allAtOnce,
    logger,
    noun: "Converter",
    successLevel: "debug",
    ...(options.signal ? { signal: options.signal } : {}),
    context: (handler, attempt) => withAttempt({ ...context, param: handler.param }, attempt),
  });
  const outcome = outcomes.get(h.id);
  const failed = (why: string) =>
    new ConversionError(
      `Converter '${h.id}' failed to convert ${describe(obj)} from ${h.from} to ${h.to}: ${why}`,
    );
  if (!outcome) throw failed("it did not run.");
  if (outcome.error !== undefined) {
    const e = outcome.error;
    throw failed(e instanceof Error ? e.message || e.name : String(e));
  }
  const result = outcome.result ?? body;
  if (typeof result !== "object" || result === null || Array.isArray(result)) {
    throw failed(
      `it returned ${Array.isArray(result) ? "an array" : typeof result}, not an object.`,
    );
  }
  const merged = patch.isEmpty() ? result : applyMergePatch(result, patch.toJSON());
  return finish(merged as AnyObject, obj, apiVersion);
}

/** The result with the target apiVersion, the kind, and the original metadata but labels/annotations. */
function finish(result: AnyObject, original: AnyObject, apiVersion: string): AnyObject {
  const metadata: AnyObject = { ...(original.metadata ?? {}) };
  const changed: AnyObject = result.metadata ?? {};
  for (const key of ["labels", "annotations"]) {
    if (!(key in changed)) continue;
    if (changed[key] === null || changed[key] === undefined) delete metadata[key];
    else metadata[key] = changed[key];
  }
  const { apiVersion: _, kind, metadata: __, ...rest } = result;
  return { apiVersion, kind: kind ?? original.kind, metadata, ...rest };
}

/** The object's resource: from the discovered ones if known, else from the path and the object. */
function findResource(
  obj: AnyObject,
  group: string,
  version: string,
  crd: string | undefined,
  options: ConversionOptions,
): Resource {
  if (crd !== undefined && !crd.endsWith(`.${group}`)) {
    throw new ConversionError(`Cannot convert ${describe(obj)}: this webhook is for ${crd}.`);
  }
  const plural = crd?.slice(0, -group.length - 1);
  const kind = typeof obj?.kind === "string" ? obj.kind : undefined;
  const known = options.resources?.().find((r) =>
    r.group === group && (plural !== undefined ? r.plural === plural : r.kind === kind)
  );
  if (known) return new Resource({ ...known, version, preferred: true });
  if (plural === undefined && kind === undefined) {
    throw new ConversionError(
      `Cannot convert ${describe(obj)}: neither its kind nor its CRD is known.`,
    );
  }
  // Neither the path nor discovery: the kind's usual singular and plural (a guess).
  const singular = kind?.toLowerCase();
  return new Resource({
    group,
    version,
    plural: plural ?? `${singular}s`,
    singular,
    kind,
    preferred: true,
  });
}

function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.lastIndexOf("/");
  return slash < 0 ? ["", apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

/** `KopfExample default/x (kopf.dev/v1)`. */
function describe(obj: AnyObject): string {
  const meta = obj?.metadata ?? {};
  const name = meta.namespace ? `${meta.namespace}/${meta.name}` : String(meta.name ?? "?");
  return `${obj?.kind ?? "object"} ${name} (${obj?.apiVersion ?? "no apiVersion"})`;
}
