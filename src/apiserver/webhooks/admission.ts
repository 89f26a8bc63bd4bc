/**
 * Admission webhooks, called as kube-apiserver calls them: the stored
 * `MutatingWebhookConfiguration`s and `ValidatingWebhookConfiguration`s
 * (admissionregistration.k8s.io/v1) are matched against every create, update
 * (PUT, patches, server-side apply) and delete that comes over HTTP — by
 * `rules` (apiGroups, apiVersions, resources with `x/status`, `x/*`, `*` and
 * `*\/*`, operations, scope), `namespaceSelector` and `objectSelector` — and
 * the matching webhooks get a v1 `AdmissionReview` POSTed to
 * `clientConfig.url` (with `?timeout=<n>s`), over TLS verified against the
 * `caBundle`.
 *
 * The order is the real server's: mutating webhooks in order (configurations
 * by name, webhooks as listed), their base64 JSON Patches applied one after
 * another, `reinvocationPolicy: IfNeeded` webhooks called once more if a later
 * one changed the object; then the server's own checks (names, metadata, CRD
 * schema pruning, defaulting, validation); then the validating webhooks, all
 * at once. Mutating webhooks of a create see the object before its uid and
 * generated name, as on a real server; those of a delete (and of each object
 * of a deletecollection) see the stored object as `oldObject`, `object` null
 * and the DeleteOptions (meta.k8s.io/v1) as `options` — mutating and
 * validating alike, as since Kubernetes 1.15; a mutating webhook's non-empty
 * patch on a delete is a 500 (`... attempted to modify the object, which is
 * not supported for this operation`).
 *
 * Answers as kube-apiserver's:
 * - a denial: the webhook's `status` with the message
 *   `admission webhook "<name>" denied the request: <message>` (or
 *   `... denied the request without explanation`), its code (400 when it
 *   gives none or one below 400) and its reason and details;
 * - a failed call with `failurePolicy: Fail` (the default): 500
 *   `Internal error occurred: failed calling webhook "<name>": failed to call webhook: Post "<url>": <why>`,
 *   `<why>` said as Go says it (`tls: failed to verify certificate: x509:
 *   certificate signed by unknown authority`, `dial tcp <host>: connect:
 *   connection refused`, `context deadline exceeded`); with `Ignore` the
 *   webhook is skipped;
 * - a dry run (`?dryRun=All`) matching a webhook whose `sideEffects` is not
 *   `None` or `NoneOnDryRun`: 400 `admission webhook "<name>" does not support dry run`;
 * - the webhooks' `warnings` go out as `Warning: 299 - "<text>"` headers.
 *
 * `matchPolicy: Equivalent` (the default) as kube-apiserver's: a webhook
 * whose rules miss the request's version but name another served version of
 * the same resource is called at that version — its rules in order, each
 * tried against the other versions in the registry's order. The AdmissionReview
 * then says `kind`/`resource` of that version and `requestKind`/
 * `requestResource` of the request's, and `object`/`oldObject` are converted
 * to it (the CRD's conversion: the apiVersion rewritten for `None`, the
 * conversion webhook for `Webhook`); a mutating webhook's patch applies to
 * the converted object, and the result is converted back to the request's
 * version before the write goes on. A failed conversion is a 500
 * `Internal error occurred: conversion webhook for ...`, whatever the
 * failurePolicy. An exact match is always preferred (no conversion), and
 * `matchPolicy: Exact` never tries other versions.
 *
 * Not done: `clientConfig.service` (there is no service network here: such a
 * webhook is a failed call, `... service "<ns>/<name>" is not reachable from
 * the embedded API server`, then its failurePolicy); `matchConditions` are
 * not evaluated; the server's own writes (garbage collector, namespace
 * cleanup) are not admitted; webhooks are not called for webhook
 * configurations themselves; equivalents across API groups (kube-apiserver's
 * deployments in apps and extensions) — only versions of one group count.
 *
 * @module
 */

import { deepEqual } from "../../cogs/structs/deep_equal.ts";
import { type JsonObject, setOwn } from "../../cogs/structs/_json.ts";
import {
  isWebhookConfiguration,
  matchedResource,
  MUTATING,
  selectorMatchesAny,
  VALIDATING,
  type Webhook,
} from "./admission_matching.ts";
import { writeOptionsObject } from "./admission_wire.ts";
import { ApiError } from "../shared/errors.ts";
import type { AdmissionOperation, AdmissionRequestInfo, Review } from "./admission_types.ts";
import type { Objects } from "../objects/objects.ts";
import type { AdmissionHooks, WriteOptions, WriteResult } from "../objects/write_types.ts";
import { type ResourceDef, storageKey } from "../shared/resources.ts";
import type { Store } from "../storage/store.ts";
import type { KObject } from "../shared/types.ts";
import { settle } from "./settle.ts";
import type { WebhookClientCertificate } from "./webhook_client.ts";
import { AdmissionCalls, type Convert, type Invocation, Views } from "./admission_calls.ts";

const MAX_RETRIES = 5;
/** The operations a create, update or patch may turn out to be. */
const WRITES = ["CREATE", "UPDATE"] as const;

/** The webhooks a request's rules may match, and the other served versions of its resource. */
interface Candidates {
  mutating: Webhook[];
  validating: Webhook[];
  others: () => ResourceDef[];
}

/** A sentinel: the write reached an admission stage; carries what it saw. */
class Reached {
  constructor(readonly draft: KObject, readonly current: KObject | undefined) {}
}

/** A sentinel: the stored object changed while webhooks were called; start again. */
class Changed {}

/**
 * The admission webhook caller of one API server.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Admission } from "./admission.ts";
 * import { Objects } from "../objects/objects.ts";
 * import { ResourceRegistry } from "../objects/registry.ts";
 * import { Store } from "../storage/store.ts";
 * const registry = new ResourceRegistry();
 * const objects = new Objects(new Store(), registry);
 * objects.bootstrap();
 * const admission = new Admission(objects);
 * const def = registry.find("", "v1", "configmaps")!;
 * const info = { def, namespace: "default", name: "", userInfo: { username: "me" } };
 * const { object } = await admission.write(
 *   info,
 *   { fieldManager: "me" },
 *   (options) => objects.create(def, "default", { metadata: { name: "x" } }, options),
 * );
 * assert.deepEqual(object.metadata.name, "x"); // no webhooks configured: written as is
 * admission.close();
 * ```
 */
export class Admission {
  readonly #objects: Objects;
  readonly #convert: Convert;
  readonly #calls: AdmissionCalls;

  /**
   * @param objects The write path whose writes are admitted.
   * @param convert Objects to the version of a webhook matched at an equivalent version (the CRD's conversion: `Conversion.toVersion`); the default answers them as they are (their apiVersion is rewritten here, as strategy None does).
   * @param identity The client certificate presented to webhooks, if any.
   * @param roots PEM certificates webhook calls trust besides the system's roots.
   */
  constructor(
    objects: Objects,
    convert: (def: ResourceDef, objects: KObject[]) => Promise<KObject[]> = (_, o) =>
      Promise.resolve(o),
    identity?: WebhookClientCertificate,
    roots: string[] = [],
  ) {
    this.#objects = objects;
    this.#convert = convert;
    this.#calls = new AdmissionCalls(identity, roots);
  }

  get #store(): Store {
    return this.#objects.store;
  }

  /** Closes the cached HTTP clients. */
  close(): void {
    this.#calls.close();
  }

  /**
   * Runs a create, update or patch through the webhooks: mutating webhooks on
   * the object before the server's checks, validating webhooks on the object
   * as it would be stored, then the write itself (or the dry run). A write
   * that no webhook's rules can match goes straight on; a stage (mutating,
   * validating) that none can match is not reached.
   *
   * @param info The resource, URL parts and caller.
   * @param options The request's write options.
   * @param write The write, given the options to run with (called up to three times per attempt — to reach the mutating stage, to reach the validating stage, to write — all but the last as dry runs).
   * @returns The write's result, with the webhooks' warnings added.
   * @throws {ApiError} A denial, a failed call (failurePolicy Fail), or the write's own errors.
   */
  async write(
    info: AdmissionRequestInfo,
    options: WriteOptions,
    write: (options: WriteOptions) => WriteResult,
  ): Promise<WriteResult> {
    if (this.#objects.rbacGuard) {
      // Who writes: what the RBAC escalation check judges (only with RBAC on).
      const user = { username: info.userInfo.username, groups: info.userInfo.groups ?? [] };
      options = { ...options, user };
    }
    const candidates = this.#candidates(info, WRITES);
    if (!candidates.mutating.length && !candidates.validating.length) {
      return await settle(() => write(options));
    }
    for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
      const frozen = this.#objects.now();
      const pass = (hooks: AdmissionHooks, dryRun: boolean) => {
        const saved = this.#objects.now;
        this.#objects.now = () => frozen;
        try {
          return write({ ...options, dryRun, admission: hooks });
        } finally {
          this.#objects.now = saved;
        }
      };
      const reviewOf = (object: KObject, current: KObject | undefined): Review => {
        const operation: AdmissionOperation = current ? "UPDATE" : "CREATE";
        return {
          operation,
          object,
          oldObject: current ?? null,
          dryRun: !!options.dryRun,
          options: writeOptionsObject(operation, options, info.subresource),
        };
      };
      const warnings: string[] = [];
      const views = new Views(this.#convert);
      const hooks: AdmissionHooks = {};
      if (candidates.mutating.length) {
        const first = reached(() =>
          pass({
            mutate: (d, c) => {
              throw new Reached(cloneJson(d), c);
            },
          }, true)
        );
        if (!first) return await settle(() => write(options));
        const { draft, current } = first;
        const review = reviewOf(draft, current);
        const mutating = this.#matching(candidates, "mutating", info, review);
        const mutated = mutating.length
          ? await this.#calls.mutate(mutating, info, review, views, warnings)
          : draft;
        hooks.mutate = (d, c) => {
          if (c?.metadata.resourceVersion !== current?.metadata.resourceVersion) {
            throw new Changed();
          }
          if (!deepEqual(d, draft)) throw new Changed();
          if (mutated === draft) return d;
          const out = cloneJson(mutated);
          if (info.subresource === "status") return { ...d, status: out.status };
          return out;
        };
      }
      try {
        if (!candidates.validating.length) {
          const result = await settle(() => pass(hooks, !!options.dryRun));
          return { ...result, warnings: [...result.warnings, ...warnings] };
        }
        const second = reached(() =>
          pass({
            ...hooks,
            validate: (d, c) => {
              throw new Reached(cloneJson(d), c);
            },
          }, true)
        );
        if (!second) return await settle(() => write(options));
        const { draft: seen, current } = second;
        const review = reviewOf(seen, current);
        const validating = this.#matching(candidates, "validating", info, review);
        if (validating.length) {
          await this.#calls.validate(validating, info, review, views, warnings);
        }
        const result = await settle(() =>
          pass({
            ...hooks,
            validate: (d, c) => {
              if (c?.metadata.resourceVersion !== current?.metadata.resourceVersion) {
                throw new Changed();
              }
              if (c) {
                if (!deepEqual(d, seen)) throw new Changed();
                return d;
              }
              const same = {
                ...d,
                metadata: { ...d.metadata, uid: seen.metadata.uid, name: seen.metadata.name },
              };
              if (!deepEqual(same, seen)) throw new Changed();
              if (
                seen.metadata.name !== d.metadata.name &&
                this.#store.get(
                  storageKey(info.def),
                  seen.metadata.namespace ?? "",
                  seen.metadata.name!,
                )
              ) {
                throw ApiError.alreadyExists(info.def.plural, info.def.group, seen.metadata.name!);
              }
              return same;
            },
          }, !!options.dryRun)
        );
        return { ...result, warnings: [...result.warnings, ...warnings] };
      } catch (e) {
        if (e instanceof Changed) continue;
        throw e;
      }
    }
    throw ApiError.conflict(
      info.def.plural,
      info.def.group,
      info.name,
      "the object has been modified; please apply your changes to the latest version and try again",
    );
  }

  /**
   * Runs a delete through the webhooks: mutating, then validating webhooks,
   * all with the stored object as `oldObject` and no `object` (as since
   * Kubernetes 1.15); a mutating webhook that answers a non-empty patch
   * fails the delete with kube-apiserver's 500.
   *
   * @param info The resource, URL parts and caller.
   * @param options The request's DeleteOptions (for `request.options`; `dryRun` makes it a dry run).
   * @param remove The delete itself.
   * @returns The deleted (or marked) object and the webhooks' warnings.
   * @throws {ApiError} A denial, a failed call (failurePolicy Fail), or the delete's own errors.
   */
  async delete(
    info: AdmissionRequestInfo,
    options: { dryRun?: boolean; propagationPolicy?: string; preconditions?: unknown },
    remove: () => KObject,
  ): Promise<{ object: KObject; warnings: string[] }> {
    const warnings: string[] = [];
    const candidates = this.#candidates(info, ["DELETE"]);
    if (!candidates.mutating.length && !candidates.validating.length) {
      return { object: remove(), warnings };
    }
    const key = storageKey(info.def);
    const ns = info.def.namespaced ? info.namespace : "";
    for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
      const current = this.#store.get(key, ns, info.name);
      if (!current) return { object: remove(), warnings }; // its 404
      const deleteOptions = {
        kind: "DeleteOptions",
        apiVersion: "meta.k8s.io/v1",
        ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
        ...(options.preconditions ? { preconditions: options.preconditions } : {}),
        ...(options.dryRun ? { dryRun: ["All"] } : {}),
      };
      const base = {
        operation: "DELETE" as const,
        dryRun: !!options.dryRun,
        options: deleteOptions,
      };
      const views = new Views(this.#convert);
      // Since Kubernetes 1.15 both stages see the stored object as oldObject (object null).
      const review: Review = { ...base, object: null, oldObject: current };
      const mutating = this.#matching(candidates, "mutating", info, review);
      if (mutating.length) await this.#calls.mutate(mutating, info, review, views, warnings);
      const validating = this.#matching(candidates, "validating", info, review);
      if (validating.length) await this.#calls.validate(validating, info, review, views, warnings);
      const now = this.#store.get(key, ns, info.name);
      if (now?.metadata.resourceVersion !== current.metadata.resourceVersion) continue;
      return { object: remove(), warnings };
    }
    throw ApiError.conflict(
      info.def.plural,
      info.def.group,
      info.name,
      "the object has been modified; please apply your changes to the latest version and try again",
    );
  }

  /**
   * The webhooks that a request's rules may match with one of `operations`,
   * by kind, in the real server's order (configurations by name, webhooks as
   * listed). Selectors need the object, so they wait for `#matching`;
   * a request with no candidates goes straight on, with no dry passes, and a
   * stage with none is not reached.
   */
  #candidates(info: AdmissionRequestInfo, operations: readonly string[]): Candidates {
    let equivalents: ResourceDef[] | undefined;
    const others = () =>
      equivalents ??= this.#objects.registry.versionsOf(storageKey(info.def))
        .filter((d) => d.version !== info.def.version);
    const of = (key: string) => {
      if (isWebhookConfiguration(info.def) || !this.#store.count(key)) return [];
      const configs = [...this.#store.list(key)];
      if (!configs.length) return [];
      configs.sort((a, b) => (a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1);
      const out: Webhook[] = [];
      for (const config of configs) {
        for (const hook of (config.webhooks as Webhook[] | undefined) ?? []) {
          if (operations.some((op) => matchedResource(hook, op, info, others))) out.push(hook);
        }
      }
      return out;
    };
    return { mutating: of(MUTATING), validating: of(VALIDATING), others };
  }

  /** The candidates of one kind that match the request, each with the version it is called at. */
  #matching(
    candidates: Candidates,
    kind: "mutating" | "validating",
    info: AdmissionRequestInfo,
    review: Review,
  ): Invocation[] {
    const out: Invocation[] = [];
    for (const hook of candidates[kind]) {
      const def = matchedResource(hook, review.operation, info, candidates.others);
      if (def && this.#selected(hook, info, review)) out.push({ hook, def });
    }
    return out;
  }

  /** Whether the webhook's object and namespace selectors take the request. */
  #selected(hook: Webhook, info: AdmissionRequestInfo, review: Review): boolean {
    const objects = [review.object, review.oldObject].filter((o): o is KObject => !!o);
    if (hook.objectSelector && !selectorMatchesAny(hook.objectSelector, objects)) return false;
    if (hook.namespaceSelector) {
      if (storageKey(info.def) === "namespaces") {
        if (!selectorMatchesAny(hook.namespaceSelector, objects)) return false;
      } else if (info.def.namespaced) {
        const ns = this.#store.get("namespaces", "", info.namespace);
        if (!selectorMatchesAny(hook.namespaceSelector, [ns ?? { metadata: {} }])) return false;
      }
    }
    return true;
  }
}

/** A copy of a JSON value (objects here are JSON: far cheaper than `structuredClone`). */
function cloneJson<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  const out: JsonObject = {};
  for (const key of Object.keys(value)) setOwn(out, key, cloneJson((value as JsonObject)[key]));
  return out as T;
}

function reached(run: () => unknown): Reached | undefined {
  try {
    run();
    return undefined;
  } catch (e) {
    if (e instanceof Reached) return e;
    throw e;
  }
}
