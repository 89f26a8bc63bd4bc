/**
 * The calls of admission webhooks (`admission.ts` decides when and which):
 * mutating webhooks in order with their JSON Patches applied and `IfNeeded`
 * ones reinvoked, validating webhooks at once, each at its matched version
 * (objects converted once per version), and one call's AdmissionReview out and
 * its answer checked as kube-apiserver checks it.
 *
 * @module
 */

import { applyJsonPatch } from "../../cogs/structs/json_patch.ts";
import { deepEqual } from "../../cogs/structs/deep_equal.ts";
import type { Webhook } from "./admission_matching.ts";
import { denial, failedCall, internalError, reviewBody } from "./admission_wire.ts";
import { ApiError } from "../shared/errors.ts";
import type { AdmissionRequestInfo, Review } from "./admission_types.ts";
import { apiVersionOf, type ResourceDef } from "../shared/resources.ts";
import type { KObject } from "../shared/types.ts";
import {
  decodeBase64,
  WebhookCallError,
  type WebhookClientCertificate,
  WebhookClients,
} from "./webhook_client.ts";

/** A matched webhook and the version of the resource it is called at: the request's, or an equivalent one. */
export interface Invocation {
  hook: Webhook;
  def: ResourceDef;
}

/** Objects at a resource's version (a CRD's conversion); may answer them as they are. */
export type Convert = (def: ResourceDef, objects: KObject[]) => Promise<KObject[]>;

/** A failed call: subject to the webhook's failurePolicy. */
class CallError extends Error {
  override name = "CallError";
}

/**
 * One request's objects at the versions its webhooks are called at: each
 * object converted to each version once, and a converted object that was not
 * patched goes back to its original with no conversion (as the real server
 * converts back only what a webhook changed).
 */
export class Views {
  readonly #convert: Convert;
  readonly #cache = new Map<KObject, Map<string, Promise<KObject>>>();

  constructor(convert: Convert) {
    this.#convert = convert;
  }

  /** The object at `def`'s version (null stays null). */
  at(def: ResourceDef, object: KObject | null): Promise<KObject | null> {
    const apiVersion = apiVersionOf(def);
    if (!object || object.apiVersion === apiVersion) return Promise.resolve(object);
    let byVersion = this.#cache.get(object);
    if (!byVersion) this.#cache.set(object, byVersion = new Map());
    let view = byVersion.get(apiVersion);
    if (!view) {
      view = this.#convert(def, [object]).then(([converted]) => {
        const out = { ...converted!, apiVersion };
        this.#cache.set(out, new Map([[object.apiVersion ?? "", Promise.resolve(object)]]));
        return out;
      }, (e) => {
        throw e instanceof ApiError ? internalError(e.message) : e;
      });
      byVersion.set(apiVersion, view);
    }
    return view;
  }
}

/** The calls to admission webhooks of one API server, over its cached webhook clients. */
export class AdmissionCalls {
  readonly #clients: WebhookClients;

  /**
   * @param identity The client certificate presented to webhooks, if any.
   * @param roots PEM certificates webhook calls trust besides the system's roots.
   */
  constructor(identity?: WebhookClientCertificate, roots: string[] = []) {
    this.#clients = new WebhookClients(identity, roots);
  }

  /** Closes the cached HTTP clients. */
  close(): void {
    this.#clients.close();
  }

  /**
   * Calls the mutating webhooks in order, each at its version, applying their
   * patches; reinvokes `IfNeeded` ones once. Answers the object at the
   * request's version.
   */
  async mutate(
    invocations: Invocation[],
    info: AdmissionRequestInfo,
    review: Review,
    views: Views,
    warnings: string[],
  ): Promise<KObject> {
    let object = review.object;
    const seenAt = new Map<Invocation, KObject | null>();
    const round = async (list: Invocation[]) => {
      for (const invocation of list) {
        const { hook, def } = invocation;
        const before = object = await views.at(def, object);
        const oldObject = await views.at(def, review.oldObject);
        const response = await this.#call(
          hook,
          info,
          def,
          { ...review, object, oldObject },
          warnings,
        );
        seenAt.set(invocation, before);
        if (!response || !response.patch) continue;
        let ops: unknown;
        try {
          if (response.patchType !== "JSONPatch") {
            throw new CallError(`unsupported patch type "${response.patchType ?? ""}"`);
          }
          ops = JSON.parse(new TextDecoder().decode(decodeBase64(String(response.patch))));
        } catch (e) {
          if (hook.failurePolicy === "Ignore") continue;
          throw failedCall(hook, e instanceof Error ? e.message : String(e));
        }
        if (Array.isArray(ops) && !ops.length) continue;
        if (object === null) {
          // A delete: there is no object to patch (kube-apiserver's words, whatever the policy).
          throw internalError(
            `admission webhook "${hook.name}" attempted to modify the object, which is not supported for this operation`,
          );
        }
        try {
          object = applyJsonPatch(object, ops) as KObject;
        } catch (e) {
          throw new ApiError(
            500,
            "InternalError",
            `Internal error occurred: ${(e as Error).message}`,
            { causes: [{ reason: "", message: (e as Error).message }] },
          );
        }
      }
    };
    await round(invocations);
    const again: Invocation[] = [];
    for (const invocation of invocations) {
      if (invocation.hook.reinvocationPolicy !== "IfNeeded") continue;
      if (!deepEqual(seenAt.get(invocation), await views.at(invocation.def, object))) {
        again.push(invocation);
      }
    }
    if (again.length) await round(again);
    return (await views.at(info.def, object)) ?? review.object!;
  }

  /**
   * Calls the validating webhooks at once, each with the objects at its
   * version (all converted first); the first denial or failure (in order) wins.
   */
  async validate(
    invocations: Invocation[],
    info: AdmissionRequestInfo,
    review: Review,
    views: Views,
    warnings: string[],
  ): Promise<void> {
    const reviews = await Promise.all(invocations.map(async ({ def }) => ({
      ...review,
      object: await views.at(def, review.object),
      oldObject: await views.at(def, review.oldObject),
    })));
    const perHook = invocations.map(() => [] as string[]);
    const results = await Promise.allSettled(
      invocations.map(({ hook, def }, i) => this.#call(hook, info, def, reviews[i]!, perHook[i]!)),
    );
    for (const w of perHook) warnings.push(...w);
    for (const r of results) if (r.status === "rejected") throw r.reason;
  }

  /**
   * One webhook call: the AdmissionReview out, the response checked. A
   * denial throws its Status; a failed call throws the 500 (failurePolicy
   * Fail) or answers undefined (Ignore).
   */
  async #call(
    hook: Webhook,
    info: AdmissionRequestInfo,
    def: ResourceDef,
    review: Review,
    warnings: string[],
  ): Promise<Record<string, unknown> | undefined> {
    if (review.dryRun && hook.sideEffects !== "None" && hook.sideEffects !== "NoneOnDryRun") {
      throw ApiError.badRequest(`admission webhook "${hook.name}" does not support dry run`);
    }
    const uid = crypto.randomUUID();
    let response: Record<string, unknown>;
    try {
      response = await this.#post(hook, reviewBody(uid, info, def, review));
      if (response.uid !== uid) {
        throw new CallError(`expected response.uid="${uid}", got "${String(response.uid ?? "")}"`);
      }
    } catch (e) {
      if (!(e instanceof CallError)) throw e;
      if (hook.failurePolicy === "Ignore") return undefined;
      throw failedCall(hook, e.message);
    }
    if (Array.isArray(response.warnings)) {
      for (const w of response.warnings) if (typeof w === "string" && w) warnings.push(w);
    }
    if (response.allowed !== true) throw denial(hook.name, response.status);
    return response;
  }

  /** POSTs the review; every failure to get a v1 AdmissionReview back is a CallError. */
  async #post(hook: Webhook, body: unknown): Promise<Record<string, unknown>> {
    let text: string;
    try {
      text = await this.#clients.post(hook.clientConfig ?? {}, hook.timeoutSeconds ?? 10, body);
    } catch (e) {
      if (!(e instanceof WebhookCallError)) throw e;
      throw new CallError(e.transport ? `failed to call webhook: ${e.message}` : e.message);
    }
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new CallError(
        `received invalid webhook response: ${(e as Error).message}`,
      );
    }
    if (parsed?.apiVersion !== "admission.k8s.io/v1" || parsed?.kind !== "AdmissionReview") {
      throw new CallError(
        `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${
          String(parsed?.apiVersion ?? "")
        }, Kind=${String(parsed?.kind ?? "")}`,
      );
    }
    const response = parsed.response as Record<string, unknown> | undefined;
    if (!response || typeof response !== "object") {
      throw new CallError("webhook response was absent");
    }
    return response;
  }
}
