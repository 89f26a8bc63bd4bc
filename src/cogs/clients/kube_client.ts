/**
 * The API client for operator authors: {@link KubeClient} — get, list,
 * create, replace, patch (merge, JSON, strategic, server-side apply), delete
 * and watch of any resource, named in any of Kopf's resource forms.
 *
 * Why a client of its own: handlers that talk to the API through a client
 * library that loads `~/.kube/config` by itself go wherever that file points
 * — not where the operator goes (under `KopfRunner`, a developer's real
 * cluster). This one is a thin layer over the operator's own
 * {@link ApiClient}: the same credentials (and re-login on 401), the same
 * networking settings (request concurrency, retries on 429/5xx honouring
 * `Retry-After`, timeouts), the same error classes. The verbs reuse the
 * framework's own (`fetching.ts`, `creating.ts`, `patching.ts`,
 * `deleting.ts`, `watching.ts`); this module only resolves names and shapes
 * the answers.
 *
 * Names are resolved as the operator resolves its handlers' resources: by
 * cluster discovery ({@link scanResources}) and a {@link Selector}, so
 * `"pods"`, `"deployments.apps"`, `"kopfexamples.v1.kopf.dev"`,
 * `["kopf.dev", "kopfexamples"]`, `{ apiVersion: "v1", kind: "ConfigMap" }`
 * and a {@link Resource} all work. Discovery is read once and cached; a name
 * the cache does not know makes it read discovery again once (a CRD created
 * a moment ago).
 *
 * Errors: every error answer is thrown as its {@link ApiError} subclass —
 * also a 404 on get, patch and delete ({@link NotFoundError}), unlike the
 * framework's own calls that treat a missing object as done.
 *
 * @module
 */

import { Resource, ResourceSelectorError, Selector } from "../structs/references.ts";
import type { SelectorFields } from "../structs/references.ts";
import { ApiClient, type ClientSettings } from "./api.ts";
import type { Vault } from "../structs/credentials.ts";
import { createObject } from "./creating.ts";
import { deleteObject } from "./deleting.ts";
import { ForbiddenError } from "./errors.ts";
import { listObjects } from "./fetching.ts";
import { patchObject } from "./patching.ts";
import { scanResources } from "./scanning.ts";
import type { RawBody } from "./types.ts";
import { infiniteWatchBatches } from "./watching.ts";
import type { KubeList, KubeObject, KubeWatchEvent, ResourceRef } from "./kube_client_types.ts";
import type {
  KubeApplyOptions,
  KubeDeleteOptions,
  KubeGetOptions,
  KubeListOptions,
  KubePatchOptions,
  KubeReplaceOptions,
  KubeWatchOptions,
  KubeWriteOptions,
} from "./kube_client_types.ts";

export type * from "./kube_client_types.ts";

/**
 * The API client of operator authors (see the module doc). In an operator,
 * every handler finds it as `api` in its context, and `kopf.api()` returns it
 * anywhere inside the operator; outside of one, build it over an
 * {@link ApiClient}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConnectionInfo, KubeClient, NotFoundError, Vault } from "@kopf/kopf";
 * import { startApiServer } from "@kopf/kopf/testing";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const api = KubeClient.fromVault(vault);
 * await api.create("configmaps", { metadata: { name: "cm1" }, data: { a: "1" } }, { namespace: "default" });
 * const cm = await api.get("configmaps", "cm1", { namespace: "default" });
 * assert.equal(cm.data.a, "1");
 * await api.delete("configmaps", "cm1", { namespace: "default" });
 * await assert.rejects(api.get("configmaps", "cm1", { namespace: "default" }), NotFoundError);
 * ```
 */
export class KubeClient {
  #client: ApiClient | (() => ApiClient);
  #resources: Promise<Resource[]> | undefined;
  /**
   * What string and Resource references resolved to in the current discovery (`#resources`):
   * a handler's every call names its resource anew, and it is selected once. Emptied with a new
   * discovery.
   */
  #resolved = new Map<string | Resource, Resource>();
  #resolvedIn: Promise<Resource[]> | undefined;

  /**
   * Creates the client.
   *
   * @param client The operator's API client, or a function that returns it
   *   (an operator builds its client only after logging in; the function
   *   throws until then).
   */
  constructor(client: ApiClient | (() => ApiClient)) {
    this.#client = client;
  }

  /**
   * A client of its own over credentials, for code outside of an operator
   * (scripts, tests); inside one, use the handlers' `api` or `kopf.api()`.
   *
   * @param vault The credentials (closing the vault frees the connections).
   * @param options The networking and watching settings (default: `OperatorSettings`' defaults).
   * @returns The client.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ConnectionInfo, KubeClient, Vault } from "@kopf/kopf";
   * using vault = new Vault({ login: new ConnectionInfo({ server: "http://127.0.0.1:6443" }) });
   * const api = KubeClient.fromVault(vault, { settings: { networking: { errorBackoffs: [] } } });
   * assert.deepEqual(api instanceof KubeClient, true);
   * ```
   */
  static fromVault(vault: Vault, options: { settings?: ClientSettings } = {}): KubeClient {
    return new KubeClient(new ApiClient({ vault, settings: options.settings }));
  }

  /** The underlying API client (credentials, settings, retries). */
  get #api(): ApiClient {
    return typeof this.#client === "function" ? this.#client() : this.#client;
  }

  /**
   * Resolves a resource reference through discovery.
   *
   * @param ref A resource in any of Kopf's forms.
   * @param signal Stops the discovery requests.
   * @returns The one resource it means (its preferred version unless a version is given).
   * @throws {ResourceSelectorError} If the cluster serves no such resource, or several.
   */
  async resolve(ref: ResourceRef, signal?: AbortSignal): Promise<Resource> {
    const key = typeof ref === "string" || ref instanceof Resource ? ref : undefined;
    if (key !== undefined && this.#resolvedIn === this.#resources && this.#resources) {
      const known = this.#resolved.get(key);
      if (known) return known;
    }
    const selector = selectorOf(ref);
    const fresh = this.#resources === undefined;
    try {
      const resources = this.#discover(signal, ref);
      const discovered = this.#resources;
      const resource = selector.selectOne(await resources);
      if (key !== undefined && discovered === this.#resources) {
        if (this.#resolvedIn !== discovered) {
          this.#resolved.clear();
          this.#resolvedIn = discovered;
        }
        if (this.#resolved.size < 256) this.#resolved.set(key, resource);
      }
      return resource;
    } catch (error) {
      if (ref instanceof Resource && error instanceof ResourceSelectorError) return ref;
      if (fresh || !(error instanceof ResourceSelectorError)) throw error;
      this.#resources = undefined; // maybe a CRD created since the last discovery
      return selector.selectOne(await this.#discover(signal, ref));
    }
  }

  /**
   * Reads one object.
   *
   * @param ref The resource.
   * @param name The object's name.
   * @param options The namespace, a subresource, a signal.
   * @returns The object.
   * @throws {NotFoundError} If it does not exist.
   * @throws {ApiError} For other error answers (after the retries of the settings).
   */
  async get<T = KubeObject>(
    ref: ResourceRef,
    name: string,
    options: KubeGetOptions = {},
  ): Promise<T> {
    const resource = await this.resolve(ref, options.signal);
    const { namespace, subresource, signal } = options;
    const url = resource.getUrl({ namespace, name, subresource });
    return await this.#api.request<T>("GET", url, { signal, expect: "object" });
  }

  /**
   * Lists objects in a namespace, or cluster-wide without one, following the pages.
   *
   * @param ref The resource.
   * @param options The namespace, selectors, page size, signal.
   * @returns The objects and the list's resourceVersion.
   * @throws {ApiError} For error answers.
   */
  async list<T = KubeObject>(
    ref: ResourceRef,
    options: KubeListOptions = {},
  ): Promise<KubeList<T>> {
    const resource = await this.resolve(ref, options.signal);
    const { namespace, ...rest } = options;
    const listed = await listObjects(this.#api, resource, namespace, rest);
    return listed as unknown as KubeList<T>;
  }

  /**
   * Creates an object; the namespace given (else the body's) is where.
   *
   * @param ref The resource.
   * @param body The object (`apiVersion` and `kind` may be left out).
   * @param options The namespace, field manager, signal.
   * @returns The object as stored.
   * @throws {AlreadyExistsError} If an object of that name exists.
   * @throws {UnprocessableError} If the object is invalid (422).
   * @throws {ApiError} For other error answers.
   */
  async create<T = KubeObject>(
    ref: ResourceRef,
    body: KubeObject,
    options: KubeWriteOptions = {},
  ): Promise<T> {
    const resource = await this.resolve(ref, options.signal);
    const { namespace, ...rest } = options;
    return await createObject(this.#api, resource, namespace, body as RawBody, rest) as T;
  }

  /**
   * Replaces an object (PUT) with the given body, named by its `metadata.name`.
   * With `metadata.resourceVersion`, a concurrent change makes it fail.
   *
   * @param ref The resource.
   * @param body The whole object.
   * @param options The namespace (else the body's), a subresource, field manager, signal.
   * @returns The object as stored.
   * @throws {ConflictError} If `metadata.resourceVersion` is not the current one.
   * @throws {NotFoundError} If it does not exist.
   * @throws {ApiError} For other error answers.
   */
  async replace<T = KubeObject>(
    ref: ResourceRef,
    body: KubeObject,
    options: KubeReplaceOptions = {},
  ): Promise<T> {
    const resource = await this.resolve(ref, options.signal);
    const name = body.metadata?.name;
    if (typeof name !== "string" || !name) {
      throw new TypeError(`Replacing a ${resource.plural} object needs its metadata.name`);
    }
    const namespace = resource.namespaced
      ? options.namespace ?? body.metadata?.namespace
      : undefined;
    const url = resource.getUrl({
      namespace,
      name,
      subresource: options.subresource,
      params: { fieldManager: options.fieldManager },
    });
    return await this.#api.request<T>("PUT", url, { body, signal: options.signal });
  }

  /**
   * Patches an object.
   *
   * @param ref The resource.
   * @param name The object's name.
   * @param patch A merge or strategic patch (an object), a JSON patch (an
   *   array of operations), or the fields to apply.
   * @param options The type (default `merge`), namespace, subresource, field manager, force, signal.
   * @returns The patched object.
   * @throws {NotFoundError} If it does not exist.
   * @throws {UnprocessableError} If a JSON patch's `test` fails or the result is invalid.
   * @throws {ConflictError} If server-side apply meets fields of other managers without `force`.
   * @throws {ApiError} For other error answers.
   */
  async patch<T = KubeObject>(
    ref: ResourceRef,
    name: string,
    patch: unknown,
    options: KubePatchOptions = {},
  ): Promise<T> {
    const resource = await this.resolve(ref, options.signal);
    const { namespace, type, ...rest } = options;
    const patched = await patchObject(this.#api, resource, namespace, name, patch, {
      ...rest,
      contentType: type ?? "merge",
      ignoreNotFound: false,
    });
    return patched as T;
  }

  /**
   * Server-side apply of an object, named by its `metadata.name`: the
   * fields given are owned by the field manager; fields it owned before and
   * left out now are removed.
   *
   * @param ref The resource.
   * @param body The object's fields to apply (with `apiVersion` and `kind`,
   *   filled from the resource when left out).
   * @param options The field manager, force, namespace (else the body's), subresource, signal.
   * @returns The object as stored.
   * @throws {ConflictError} If another manager owns a field with another value and not `force`.
   * @throws {ApiError} For other error answers.
   */
  async apply<T = KubeObject>(
    ref: ResourceRef,
    body: KubeObject,
    options: KubeApplyOptions,
  ): Promise<T> {
    const resource = await this.resolve(ref, options.signal);
    const name = body.metadata?.name;
    if (typeof name !== "string" || !name) {
      throw new TypeError(`Applying a ${resource.plural} object needs its metadata.name`);
    }
    const namespace = resource.namespaced
      ? options.namespace ?? body.metadata?.namespace
      : undefined;
    const full = { apiVersion: resource.apiVersion, kind: resource.kind, ...body };
    return await this.patch<T>(resource, name, full, { ...options, namespace, type: "apply" });
  }

  /**
   * Deletes an object (or marks it for deletion while finalizers hold it).
   *
   * @param ref The resource.
   * @param name The object's name.
   * @param options The namespace, propagation policy (default `Background`), grace, preconditions, signal.
   * @returns The server's answer: the object (with `deletionTimestamp` while
   *   finalizers hold it), or a `Status`.
   * @throws {NotFoundError} If it does not exist.
   * @throws {ConflictError} If the preconditions do not hold.
   * @throws {ApiError} For other error answers.
   */
  async delete<T = KubeObject>(
    ref: ResourceRef,
    name: string,
    options: KubeDeleteOptions = {},
  ): Promise<T> {
    const resource = await this.resolve(ref, options.signal);
    const { namespace, ...rest } = options;
    const answer = await deleteObject(this.#api, resource, namespace, name, {
      ...rest,
      ignoreNotFound: false,
    });
    return answer as T;
  }

  /**
   * Watches objects in a namespace, or cluster-wide without one: first the
   * objects that exist now (as `ADDED`), then every change, until the signal
   * aborts or the loop breaks. Disconnects and expired resourceVersions heal
   * by themselves (re-listing may repeat an object; a deletion missed while
   * disconnected comes as `DELETED`).
   *
   * @param ref The resource.
   * @param options The namespace, selectors, signal.
   * @returns The events.
   * @throws {ApiError} When listing or watching fails for good.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ConnectionInfo, KubeClient, Vault } from "@kopf/kopf";
   * import { startApiServer } from "@kopf/kopf/testing";
   *
   * await using server = await startApiServer();
   * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
   * const api = KubeClient.fromVault(vault);
   * const stop = new AbortController();
   * const watching = (async () => {
   *   for await (const { type, object } of api.watch("configmaps", { namespace: "default", signal: stop.signal })) {
   *     if (type === "ADDED" && object.metadata.name === "cm1") stop.abort();
   *   }
   * })();
   * await api.create("configmaps", { metadata: { name: "cm1" } }, { namespace: "default" });
   * await watching;
   * assert.ok(stop.signal.aborted);
   * ```
   */
  async *watch<T = KubeObject>(
    ref: ResourceRef,
    options: KubeWatchOptions = {},
  ): AsyncGenerator<KubeWatchEvent<T>, void, undefined> {
    const resource = await this.resolve(ref, options.signal);
    const { namespace, ...rest } = options;
    // The watcher's batches, taken whole: one generator between them and the caller, not two.
    for await (const events of infiniteWatchBatches(this.#api, resource, namespace, rest)) {
      for (let i = 0; i < events.length; i++) {
        const event = events[i]!;
        if (event.type === "LISTED") continue;
        yield { type: event.type ?? "ADDED", object: event.object as T };
      }
    }
  }

  #discover(signal: AbortSignal | undefined, ref: ResourceRef): Promise<Resource[]> {
    if (!this.#resources) {
      const scanning = scanResources(this.#api, { signal });
      this.#resources = scanning;
      scanning.catch(() => {
        if (this.#resources === scanning) this.#resources = undefined;
      });
    }
    return this.#resources.catch((error) => {
      // Without discovery (RBAC), a Resource is still usable as it is.
      if (ref instanceof Resource && error instanceof ForbiddenError) return [ref];
      throw error;
    });
  }
}

function selectorOf(ref: ResourceRef): Selector {
  if (ref instanceof Resource) {
    return new Selector({ group: ref.group, version: ref.version, plural: ref.plural });
  }
  if (typeof ref === "string") return new Selector(ref);
  if (Array.isArray(ref)) return new Selector(...(ref as [string, string]));
  return new Selector(ref as SelectorFields);
}
