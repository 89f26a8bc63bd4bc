/**
 * CRD version conversion through a webhook, as kube-apiserver does it for a
 * CRD with `spec.conversion.strategy: Webhook`: objects are stored at the
 * storage version, and every object served or written at another version
 * goes through the webhook (a v1 `ConversionReview` POSTed to
 * `spec.conversion.webhook.clientConfig.url` with `?timeout=30s`, over TLS
 * verified against the `caBundle`).
 *
 * Where it happens is where the real server's storage codec does it:
 * - writes work at the request's version: the stored object is converted to
 *   it first (decode), then the request (PUT body, patch, apply) is applied,
 *   mutating admission, defaulting and schema validation against that
 *   version's schema, validating admission — and only the object to store is
 *   converted to the storage version (encode; dry runs too). The answer is
 *   the stored object converted back to the request's version.
 * - GET, LIST (one review with every object of the page that is not at the
 *   wanted version, as the real server batches), WATCH (per event, in order;
 *   one call per change and version however many watchers) and the answers
 *   of deletes convert from whatever version an object is stored at.
 * - objects already at the wanted version are not sent; a review with no
 *   objects is not made.
 *
 * A failed conversion answers as kube-apiserver's (a plain error, so status
 * 500 with no reason): `conversion webhook for kopf.dev/v1, Kind=KopfExample
 * failed: Post "<url>?timeout=30s": dial tcp 127.0.0.1:1: connect:
 * connection refused`, or `... failed: <result.message>` when the webhook
 * answers `result.status: Failure`, or `... returned invalid converted
 * object at index 0: invalid groupVersion (expected kopf.dev/v2, received
 * kopf.dev/v1)`. A watch ends with that Status as an ERROR event.
 *
 * The converted objects keep the original metadata but for labels and
 * annotations (the real server's `restoreObjectMeta`); name, namespace, uid
 * and kind must stay the same.
 *
 * With `strategy: None` (the default) nothing here applies: objects are
 * stored once and served at every version with the apiVersion rewritten.
 *
 * Not done: `clientConfig.service` (no service network: a failed call saying
 * so); `conversionReviewVersions` other than `v1` and `v1beta1` are refused.
 *
 * @module
 */

import { deepEqual } from "../../cogs/structs/deep_equal.ts";
import { ApiError } from "../shared/errors.ts";
import type { WriteOptions, WriteResult } from "../objects/write_types.ts";
import type { ResourceRegistry } from "../objects/registry.ts";
import { apiVersionOf, type ResourceDef, storageKey } from "../shared/resources.ts";
import type { Store } from "../storage/store.ts";
import type { KObject } from "../shared/types.ts";
import { Pending, settle } from "./settle.ts";
import type { ConversionSpec } from "../schemas/crd_conversion.ts";
import {
  WebhookCallError,
  type WebhookClientCertificate,
  WebhookClients,
} from "./webhook_client.ts";

const CRDS = "customresourcedefinitions.apiextensions.k8s.io";
const TIMEOUT_SECONDS = 30;
const MAX_ATTEMPTS = 5;

type ConversionHooks = NonNullable<WriteOptions["conversion"]>;

/** The stored object changed between its conversion and the write: start again. */
class Stale {}

/**
 * The conversion webhook caller of one API server.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Conversion } from "./conversion.ts";
 * import { Objects } from "../objects/objects.ts";
 * import { ResourceRegistry } from "../objects/registry.ts";
 * import { Store } from "../storage/store.ts";
 * const store = new Store();
 * const registry = new ResourceRegistry();
 * const objects = new Objects(store, registry);
 * objects.bootstrap();
 * const conversion = new Conversion(store, registry);
 * const def = registry.find("", "v1", "configmaps")!;
 * const { object } = objects.create(def, "default", { metadata: { name: "x" } });
 * const [same] = await conversion.toVersion(def, [object]);
 * assert.deepEqual(same === object, true); // no conversion webhook: as stored
 * conversion.close();
 * ```
 */
export class Conversion {
  readonly #store: Store;
  readonly #registry: ResourceRegistry;
  readonly #clients: WebhookClients;
  readonly #watchCache = new Map<string, Promise<KObject>>();

  /**
   * @param store The objects (and the CRDs with their conversion settings).
   * @param registry The served resources (for the storage version).
   * @param identity The client certificate presented to webhooks, if any.
   * @param roots PEM certificates webhook calls trust besides the system's roots.
   */
  constructor(
    store: Store,
    registry: ResourceRegistry,
    identity?: WebhookClientCertificate,
    roots: string[] = [],
  ) {
    this.#store = store;
    this.#registry = registry;
    this.#clients = new WebhookClients(identity, roots);
  }

  /** Closes the cached HTTP clients. */
  close(): void {
    this.#clients.close();
  }

  /**
   * Whether a resource's objects are converted by a webhook.
   *
   * @param def The resource.
   * @returns True for a CRD's resource with `spec.conversion.strategy: Webhook`.
   */
  converts(def: ResourceDef): boolean {
    return this.#spec(def) !== undefined;
  }

  /**
   * Objects at the resource's version: those stored at another one go to the
   * webhook, all in one review; the others are returned as they are.
   *
   * @param def The resource (its version is the wanted one).
   * @param objects The objects as stored.
   * @param list Whether they are a list's (for the error's kind, `<Kind>List`).
   * @returns The objects in the same order.
   * @throws {ApiError} 500 when the conversion fails.
   */
  async toVersion(def: ResourceDef, objects: KObject[], list = false): Promise<KObject[]> {
    const spec = this.#spec(def);
    if (!spec) return objects;
    return await this.#convert(def, spec, objects, def.version, list);
  }

  /**
   * A converter for a watch of the resource (undefined when no webhook
   * converts it). Conversions are shared by the watchers of one change.
   *
   * @param def The watched resource.
   * @returns The converter of one object stored at another version.
   */
  watchConverter(def: ResourceDef): ((obj: KObject) => Promise<KObject>) | undefined {
    if (!this.#spec(def)) return undefined;
    return (obj) => {
      const key = `${storageKey(def)} ${obj.metadata.uid} ${obj.metadata.resourceVersion} ${
        apiVersionOf(def)
      }`;
      let converted = this.#watchCache.get(key);
      if (!converted) {
        const spec = this.#spec(def);
        converted = spec
          ? this.#convert(def, spec, [obj], def.version, false).then(([o]) => o!)
          : Promise.resolve({ ...obj, apiVersion: apiVersionOf(def) });
        this.#watchCache.set(key, converted);
        converted.catch(() => {}).finally(() =>
          setTimeout(() => this.#watchCache.delete(key), 1000)
        );
      }
      return converted;
    };
  }

  /**
   * Runs a write at the request's version over an object stored at the
   * storage version: the stored object converted first, the object to store
   * converted last, the answer converted back.
   *
   * @param def The resource of the request.
   * @param namespace The namespace of the URL.
   * @param name The name of the URL ("" on create).
   * @param options The request's write options.
   * @param write The write (admission included), given the options to run with.
   * @returns The write's result, its object at the request's version.
   * @throws {ApiError} A failed conversion (500), or the write's own errors.
   */
  async write(
    def: ResourceDef,
    namespace: string,
    name: string,
    options: WriteOptions,
    write: (options: WriteOptions) => WriteResult | Promise<WriteResult>,
  ): Promise<WriteResult> {
    const spec = this.#spec(def);
    if (!spec) return await write(options);
    const storage = this.#storageVersion(def);
    const storageApiVersion = `${def.group}/${storage}`;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const stored = name
        ? this.#store.get(storageKey(def), def.namespaced ? namespace : "", name)
        : undefined;
      const view = stored
        ? (await this.#convert(def, spec, [stored], def.version, false))[0]!
        : undefined;
      const encoded: Array<[KObject, KObject]> = [];
      const outdated = new WeakSet<KObject>();
      const hooks: ConversionHooks = {
        decode: (current) => {
          let decoded: KObject;
          if (
            stored && view && current.metadata.uid === stored.metadata.uid &&
            current.metadata.resourceVersion === stored.metadata.resourceVersion
          ) decoded = structuredClone(view);
          else if (current.apiVersion === apiVersionOf(def)) decoded = current;
          else throw new Stale();
          if (current.apiVersion !== storageApiVersion) outdated.add(decoded);
          return decoded;
        },
        outdated: (decoded) => outdated.has(decoded),
        encode: (draft) => {
          if (draft.apiVersion === storageApiVersion) return draft;
          // Metadata but labels and annotations comes from the draft, so it is not part of the key.
          const keyOf = (o: KObject) => ({
            ...o,
            metadata: { labels: o.metadata.labels, annotations: o.metadata.annotations },
          });
          const hit = encoded.find(([d]) => deepEqual(d, keyOf(draft)));
          if (hit) {
            return restoreMeta(draft, structuredClone(hit[1]));
          }
          const copy = structuredClone(draft);
          throw new Pending(
            this.#convert(def, spec, [copy], storage, false).then(([converted]) => {
              encoded.push([keyOf(copy), converted!]);
            }),
          );
        },
      };
      try {
        const result = await settle(() => write({ ...options, conversion: hooks }));
        const [object] = await this.#convert(def, spec, [result.object], def.version, false);
        return { ...result, object: object! };
      } catch (e) {
        if (e instanceof Stale) continue;
        throw e;
      }
    }
    throw ApiError.conflict(
      def.plural,
      def.group,
      name,
      "the object has been modified; please apply your changes to the latest version and try again",
    );
  }

  #spec(def: ResourceDef): ConversionSpec | undefined {
    if (def.builtin || !def.group) return undefined;
    const crd = this.#store.get(CRDS, "", `${def.plural}.${def.group}`);
    const spec = (crd?.spec as { conversion?: ConversionSpec } | undefined)?.conversion;
    return spec?.strategy === "Webhook" ? spec : undefined;
  }

  #storageVersion(def: ResourceDef): string {
    return this.#registry.versionsOf(storageKey(def)).find((d) => d.storage)?.version ??
      def.version;
  }

  /** One ConversionReview for the objects not at `version`; the others stay as they are. */
  async #convert(
    def: ResourceDef,
    spec: ConversionSpec,
    objects: KObject[],
    version: string,
    list: boolean,
  ): Promise<KObject[]> {
    const desired = `${def.group}/${version}`;
    const send = objects.filter((o) => o.apiVersion !== desired);
    if (!send.length) return objects;
    const gvk = `${send[0]!.apiVersion}, Kind=${def.kind}${list ? "List" : ""}`;
    const fail = (why: string) => new ApiError(500, "", `conversion webhook for ${gvk} ${why}`);
    const reviewVersion = (spec.webhook?.conversionReviewVersions ?? []).find((v) =>
      v === "v1" || v === "v1beta1"
    );
    if (!reviewVersion) throw new ApiError(500, "", "no supported conversion review versions");
    const uid = crypto.randomUUID();
    const reviewApiVersion = `apiextensions.k8s.io/${reviewVersion}`;
    const body = {
      apiVersion: reviewApiVersion,
      kind: "ConversionReview",
      request: { uid, desiredAPIVersion: desired, objects: send },
    };
    let response: Record<string, unknown>;
    try {
      response = await this.#post(spec, body);
    } catch (e) {
      if (e instanceof CallError) throw fail(`failed: ${e.message}`);
      throw e;
    }
    const review = response as {
      apiVersion?: string;
      kind?: string;
      response?: {
        uid?: string;
        convertedObjects?: KObject[];
        result?: { status?: string; message?: string };
      };
    };
    if (
      reviewVersion === "v1" &&
      (review.apiVersion !== reviewApiVersion || review.kind !== "ConversionReview")
    ) {
      throw fail(
        `failed: expected webhook response of ${reviewApiVersion}, Kind=ConversionReview, got ${
          review.apiVersion ?? ""
        }, Kind=${review.kind ?? ""}`,
      );
    }
    const answer = review.response;
    if (!answer || typeof answer !== "object") throw fail("failed: no response provided");
    if (reviewVersion === "v1" && answer.uid !== uid) {
      throw fail(`failed: expected response.uid="${uid}", got "${answer.uid ?? ""}"`);
    }
    if (answer.result?.status !== "Success") {
      throw fail(
        `failed: ${
          answer.result?.message ||
          `response.result.status was '${answer.result?.status ?? ""}', not 'Success'`
        }`,
      );
    }
    const converted = Array.isArray(answer.convertedObjects) ? answer.convertedObjects : [];
    if (converted.length !== send.length) {
      throw fail(`returned ${converted.length} objects, expected ${send.length}`);
    }
    let index = 0;
    return objects.map((original) => {
      if (original.apiVersion === desired) return original;
      const i = index++;
      const out = converted[i];
      const invalid = (why: string) =>
        fail(`returned invalid converted object at index ${i}: ${why}`);
      if (!out || typeof out !== "object" || Array.isArray(out)) {
        throw invalid("the object is not a JSON object");
      }
      if (out.apiVersion !== desired) {
        throw invalid(
          `invalid groupVersion (expected ${desired}, received ${out.apiVersion ?? ""})`,
        );
      }
      if (out.kind !== original.kind) {
        throw invalid(`invalid kind (expected ${original.kind}, received ${out.kind ?? ""})`);
      }
      const om = original.metadata, cm = (out.metadata ?? {}) as KObject["metadata"];
      for (
        const [what, a, b] of [
          ["name", om.name, cm.name],
          ["namespace", om.namespace, cm.namespace],
          ["UID", om.uid, cm.uid],
        ] as const
      ) {
        if ((a ?? "") !== (b ?? "")) {
          throw invalid(`must have the same ${what}: ${a ?? ""} != ${b ?? ""}`);
        }
      }
      if (!out.metadata) {
        throw fail(
          `returned invalid metadata in object at index ${i}: missing metadata in converted object`,
        );
      }
      return restoreMeta(original, out);
    });
  }

  async #post(spec: ConversionSpec, body: unknown): Promise<Record<string, unknown>> {
    let text: string;
    try {
      text = await this.#clients.post(spec.webhook?.clientConfig ?? {}, TIMEOUT_SECONDS, body);
    } catch (e) {
      throw e instanceof WebhookCallError ? new CallError(e.message) : e;
    }
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new CallError(`invalid character in the webhook's answer: ${(e as Error).message}`);
    }
  }
}

/** A failed call (what the real server's REST client reports). */
class CallError extends Error {
  override name = "CallError";
}

/** The original's metadata with the converted object's labels and annotations (`restoreObjectMeta`). */
function restoreMeta(original: KObject, converted: KObject): KObject {
  const metadata = structuredClone(original.metadata);
  for (const field of ["labels", "annotations"] as const) {
    const value = converted.metadata?.[field];
    if (value === undefined || value === null) delete metadata[field];
    else metadata[field] = value;
  }
  return { ...converted, metadata };
}
