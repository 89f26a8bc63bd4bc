/**
 * The write path of the API server: what kube-apiserver's registry strategies
 * do between a request and the store. Create, update, patch and delete share
 * one admission step (names, metadata, CRD schema: prune, default, validate),
 * one rule for generation (bumped when anything but metadata and status
 * changes), one rule for finalizers (an object goes when its last finalizer
 * goes; none can be added once it is deleting), and one rule for no-ops (an
 * unchanged object keeps its resourceVersion and emits no event).
 *
 * This file is the facade; each verb is a file of its own, as kube-apiserver's
 * `rest.BeforeCreate`/`BeforeUpdate`/`BeforeDelete` are: `create.ts`,
 * `update.ts` (with the tail update and patch share), `patch.ts`, `delete.ts`;
 * the shared checks are `admit.ts`, the per-kind steps `kind_hooks.ts` and
 * `crd_strategy.ts`, and the shapes of a write `write_types.ts`.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import type { ResourceRegistry } from "./registry.ts";
import type { ResourceDef } from "../shared/resources.ts";
import type { Store } from "../storage/store.ts";
import type { KObject } from "../shared/types.ts";
import type { DeleteOptions, PatchType, WriteOptions, WriteResult } from "./write_types.ts";
import { createObject } from "./create.ts";
import { replaceObject, updateObject } from "./update.ts";
import { patchObject } from "./patch.ts";
import { deleteObject } from "./delete.ts";

let lastSecond = NaN;
let lastStamp = "";

/** Now, as Kubernetes writes timestamps (no sub-seconds); formatted once per second. */
function nowSeconds(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastStamp = new Date(second * 1000).toISOString().replace(".000Z", "Z");
  }
  return lastStamp;
}

/**
 * Create, update, patch and delete with Kubernetes semantics.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer();
 * const { objects, registry } = api.server;
 * const cm = registry.find("", "v1", "configmaps")!;
 * const { object } = objects.create(cm, "default", { metadata: { name: "x" }, data: { a: "1" } });
 * assert.deepEqual(object.metadata.uid !== undefined, true);
 * ```
 */
export class Objects {
  /** The objects. */
  readonly store: Store;
  /** The served resources. */
  readonly registry: ResourceRegistry;
  /** Time source (ISO strings without sub-seconds, as Kubernetes writes timestamps). */
  now: () => string = nowSeconds;
  /**
   * With RBAC on (`rbac_escalation.ts`): refuses a user's write of a role or
   * binding that grants more than she holds. Undefined: no check.
   */
  rbacGuard?: (plural: string, draft: KObject, current: KObject | undefined, user: {
    username: string;
    groups: string[];
  }) => void;

  /**
   * Creates the write path over a store (no namespaces yet; see {@link Objects.bootstrap}).
   *
   * @param store The object store.
   * @param registry The served resources.
   */
  constructor(store: Store, registry: ResourceRegistry) {
    this.store = store;
    this.registry = registry;
  }

  /** Creates the namespaces a fresh cluster has, if missing. */
  bootstrap(): void {
    const ns = this.registry.find("", "v1", "namespaces")!;
    for (const name of ["default", "kube-system", "kube-public", "kube-node-lease"]) {
      if (!this.store.get("namespaces", "", name)) {
        this.create(ns, "", { apiVersion: "v1", kind: "Namespace", metadata: { name } });
      }
    }
  }

  /**
   * Creates an object.
   *
   * @param def The resource.
   * @param namespace The namespace of the URL ("" for cluster-scoped).
   * @param body The object.
   * @param options Write options.
   * @returns The created object.
   * @throws {ApiError} 409 AlreadyExists, 404 for a missing namespace, 403 in a terminating one, 422 Invalid.
   */
  create(
    def: ResourceDef,
    namespace: string,
    body: unknown,
    options: WriteOptions = {},
  ): WriteResult {
    return createObject(this, def, namespace, body, options);
  }

  /**
   * Replaces an object (PUT), or its status (PUT /status).
   *
   * @param def The resource.
   * @param namespace The namespace.
   * @param name The name from the URL.
   * @param body The new object.
   * @param options Write options.
   * @param subresource "status" for the status endpoint.
   * @returns The stored object.
   * @throws {ApiError} 404, 409 Conflict on a stale resourceVersion, 422.
   */
  update(
    def: ResourceDef,
    namespace: string,
    name: string,
    body: unknown,
    options: WriteOptions = {},
    subresource?: string,
  ): WriteResult {
    return updateObject(this, def, namespace, name, body, options, subresource);
  }

  /**
   * Patches an object (or its status): merge, JSON, strategic merge, or server-side apply.
   *
   * @param def The resource.
   * @param namespace The namespace.
   * @param name The name.
   * @param type The patch type.
   * @param patch The parsed patch body.
   * @param options Write options.
   * @param subresource "status" for the status endpoint.
   * @returns The stored object.
   * @throws {ApiError} 404, 415 for strategic merge on custom resources, 422 for a failed JSON patch.
   */
  patch(
    def: ResourceDef,
    namespace: string,
    name: string,
    type: PatchType,
    patch: unknown,
    options: WriteOptions = {},
    subresource?: string,
  ): WriteResult {
    return patchObject(this, def, namespace, name, type, patch, options, subresource);
  }

  /**
   * Deletes an object: at once, or by marking it (deletionTimestamp) while finalizers remain.
   *
   * @param def The resource.
   * @param namespace The namespace.
   * @param name The name.
   * @param options Propagation policy, preconditions, dry run.
   * @returns The object as deleted or marked.
   * @throws {ApiError} 404, 409 on a failed precondition.
   */
  delete(def: ResourceDef, namespace: string, name: string, options: DeleteOptions = {}): KObject {
    return deleteObject(this, def, namespace, name, options);
  }

  /**
   * Used by the garbage collector and the namespace/CRD cleaners: deletes or
   * finalizes on behalf of the system, ignoring missing objects.
   *
   * @param key The storage key.
   * @param obj The object (as stored).
   * @param options Deletion options.
   */
  systemDelete(key: string, obj: KObject, options: DeleteOptions = {}): void {
    const def = this.#defFor(key, obj);
    if (!def) return;
    try {
      this.delete(def, obj.metadata.namespace ?? "", obj.metadata.name!, options);
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
  }

  /**
   * Writes a system change to an object (remove a finalizer, an owner reference).
   *
   * @param key The storage key.
   * @param obj The object as stored.
   * @param change Returns the new object from the current one.
   */
  systemUpdate(key: string, obj: KObject, change: (o: KObject) => KObject): void {
    const def = this.#defFor(key, obj);
    if (!def) return;
    const current = this.store.get(key, obj.metadata.namespace ?? "", obj.metadata.name!);
    if (!current) return;
    replaceObject(this, def, current, change(current), {}, undefined);
  }

  /**
   * Removes the objects of a resource for good (a CRD's objects as it goes), with DELETED events.
   *
   * @param key The storage key.
   */
  purge(key: string): void {
    for (const obj of [...this.store.list(key)]) this.store.commit("DELETED", key, obj);
  }

  #defFor(key: string, obj: KObject): ResourceDef | undefined {
    const versions = this.registry.versionsOf(key);
    const [group, version] = (obj.apiVersion ?? "").includes("/")
      ? (obj.apiVersion ?? "").split("/", 2)
      : ["", obj.apiVersion ?? ""];
    return versions.find((d) => d.group === group && d.version === version) ?? versions[0];
  }
}
