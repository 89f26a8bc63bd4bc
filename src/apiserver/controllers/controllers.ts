/**
 * The few controllers a bare API server needs so that objects come and go as
 * on a real cluster: the garbage collector (dependents of a deleted owner go
 * in the background; `Foreground` waits for them; `Orphan` releases them), the
 * namespace lifecycle (a terminating namespace deletes its contents, then
 * itself), and the CRD cleaner (a deleted CRD deletes its objects, then stops
 * being served). Each reacts to committed changes, one tick later, like the
 * real controllers react to their watches.
 *
 * @module
 */

import type { Objects } from "../objects/objects.ts";
import type { Store } from "../storage/store.ts";
import type { Change, KObject, OwnerReference } from "../shared/types.ts";

const CRD_KEY = "customresourcedefinitions.apiextensions.k8s.io";
const CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io";

/**
 * Runs the garbage collector, the namespace lifecycle and the CRD cleaner.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer();
 * const { objects, registry, controllers, store } = api.server;
 * const cm = registry.find("", "v1", "configmaps")!;
 * const { object: owner } = objects.create(cm, "default", { metadata: { name: "owner" } });
 * const ownerReferences = [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata.uid! }];
 * objects.create(cm, "default", { metadata: { name: "child", ownerReferences } });
 * objects.delete(cm, "default", "owner");
 * await controllers.settled(); // the garbage collector has deleted the child
 * assert.deepEqual(store.get("configmaps", "default", "child"), undefined);
 * ```
 */
export class Controllers {
  #store: Store;
  #objects: Objects;
  /** owner uid → refs of its dependents (`key\0ns\0name`) */
  #dependents = new Map<string, Set<string>>();
  #queue: Array<() => void> = [];
  #scheduled: ReturnType<typeof setTimeout> | undefined;
  #idle: Array<() => void> = [];
  #stopped = false;

  /**
   * Indexes the stored owner references and follows the store's commits.
   *
   * @param store The store to follow.
   * @param objects The write path to delete and update through.
   */
  constructor(store: Store, objects: Objects) {
    this.#store = store;
    this.#objects = objects;
    for (const key of [...store.keys()]) {
      for (const obj of store.list(key)) this.#index(key, undefined, obj);
    }
    store.onCommit((change) => this.#observe(change));
  }

  /** Resolves once no controller work is pending (for tests and clean stops). */
  settled(): Promise<void> {
    if (!this.#queue.length && this.#scheduled === undefined) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Stops reacting. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#scheduled);
    this.#scheduled = undefined;
    this.#queue = [];
    for (const r of this.#idle.splice(0)) r();
  }

  /**
   * Re-examines every object after a load from disk (finish deletions that were under way).
   */
  resync(): void {
    for (const key of [...this.#store.keys()]) {
      for (const obj of this.#store.list(key)) {
        if (obj.metadata.deletionTimestamp) this.#later(() => this.#terminating(key, obj));
      }
    }
  }

  #observe(change: Change): void {
    const { key, object, previous, type } = change;
    this.#index(
      key,
      type === "DELETED" ? object : previous,
      type === "DELETED" ? undefined : object,
    );
    if (this.#stopped) return;
    if (type === "DELETED") {
      this.#later(() => this.#ownerGone(object));
      this.#later(() => this.#dependentGone(key, object));
    } else if (object.metadata.deletionTimestamp) {
      this.#later(() => this.#terminating(key, object));
    }
  }

  #later(fn: () => void): void {
    this.#queue.push(fn);
    if (this.#scheduled === undefined) {
      this.#scheduled = setTimeout(() => this.#drain(), 0);
    }
  }

  #drain(): void {
    this.#scheduled = undefined;
    // Work added while draining runs in the same pass, in order.
    for (let i = 0; i < this.#queue.length && !this.#stopped; i++) {
      try {
        this.#queue[i]!();
      } catch (e) {
        console.error(`apiserver: a controller failed: ${e instanceof Error ? e.message : e}`);
      }
    }
    this.#queue = [];
    if (this.#scheduled === undefined) { for (const r of this.#idle.splice(0)) r(); }
  }

  #index(key: string, before: KObject | undefined, after: KObject | undefined): void {
    const ref = (o: KObject) => `${key}\0${o.metadata.namespace ?? ""}\0${o.metadata.name}`;
    const old = before?.metadata.ownerReferences ?? [];
    const now = after?.metadata.ownerReferences ?? [];
    if (old.length === 0 && now.length === 0) return;
    for (const r of old) {
      if (now.some((n) => n.uid === r.uid)) continue;
      const set = this.#dependents.get(r.uid);
      set?.delete(ref(before!));
      if (set?.size === 0) this.#dependents.delete(r.uid);
    }
    for (const r of now) {
      let set = this.#dependents.get(r.uid);
      if (!set) this.#dependents.set(r.uid, set = new Set());
      set.add(ref(after!));
    }
  }

  #dependentsOf(uid: string | undefined): Array<[string, KObject]> {
    const out: Array<[string, KObject]> = [];
    for (const ref of this.#dependents.get(uid ?? "") ?? []) {
      const [key, ns, name] = ref.split("\0") as [string, string, string];
      const obj = this.#store.get(key, ns, name);
      if (obj) out.push([key, obj]);
    }
    return out;
  }

  #ownerExists(dependent: KObject, ref: OwnerReference): boolean {
    const def = this.#objects.registry.findByKind(ref.apiVersion, ref.kind);
    if (!def) return false;
    const key = def.group ? `${def.plural}.${def.group}` : def.plural;
    const owner = this.#store.get(
      key,
      def.namespaced ? dependent.metadata.namespace ?? "" : "",
      ref.name,
    );
    return owner?.metadata.uid === ref.uid;
  }

  /** Background deletion: dependents of a gone owner go too, unless another owner holds them. */
  #ownerGone(owner: KObject): void {
    const uid = owner.metadata.uid;
    for (const [key, dep] of this.#dependentsOf(uid)) {
      const others = (dep.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
      if (others.some((r) => this.#ownerExists(dep, r))) {
        this.#objects.systemUpdate(key, dep, (o) => withoutOwner(o, uid!));
      } else {
        this.#objects.systemDelete(key, dep, { propagationPolicy: "Background" });
      }
    }
  }

  /** A dependent went: a foreground-deleting owner may now go; a terminating namespace or CRD may finish. */
  #dependentGone(key: string, obj: KObject): void {
    for (const ref of obj.metadata.ownerReferences ?? []) {
      const def = this.#objects.registry.findByKind(ref.apiVersion, ref.kind);
      if (!def) continue;
      const ownerKey = def.group ? `${def.plural}.${def.group}` : def.plural;
      const owner = this.#store.get(
        ownerKey,
        def.namespaced ? obj.metadata.namespace ?? "" : "",
        ref.name,
      );
      if (owner?.metadata.uid === ref.uid && owner.metadata.deletionTimestamp) {
        this.#terminating(ownerKey, owner);
      }
    }
    const ns = obj.metadata.namespace;
    if (ns) {
      const nsObj = this.#store.get("namespaces", "", ns);
      if (nsObj?.metadata.deletionTimestamp) this.#finishNamespace(nsObj);
    }
    const crd = this.#crdOf(key);
    if (crd?.metadata.deletionTimestamp) this.#finishCrd(crd, key);
  }

  #crdOf(key: string): KObject | undefined {
    return this.#store.get(CRD_KEY, "", key);
  }

  /** An object marked for deletion: act on the system finalizers it carries. */
  #terminating(key: string, obj: KObject): void {
    const current = this.#store.get(key, obj.metadata.namespace ?? "", obj.metadata.name!);
    if (
      !current || current.metadata.uid !== obj.metadata.uid || !current.metadata.deletionTimestamp
    ) return;
    const finalizers = current.metadata.finalizers ?? [];
    const uid = current.metadata.uid;
    if (finalizers.includes("orphan")) {
      for (const [depKey, dep] of this.#dependentsOf(uid)) {
        this.#objects.systemUpdate(depKey, dep, (o) => withoutOwner(o, uid!));
      }
      this.#objects.systemUpdate(key, current, (o) => withoutFinalizer(o, "orphan"));
      return;
    }
    if (finalizers.includes("foregroundDeletion")) {
      const deps = this.#dependentsOf(uid);
      if (deps.length === 0) {
        this.#objects.systemUpdate(key, current, (o) => withoutFinalizer(o, "foregroundDeletion"));
      } else {
        for (const [depKey, dep] of deps) {
          if (!dep.metadata.deletionTimestamp) {
            this.#objects.systemDelete(depKey, dep, { propagationPolicy: "Foreground" });
          }
        }
      }
      return;
    }
    if (key === "namespaces") this.#finishNamespace(current);
    else if (key === CRD_KEY) this.#finishCrd(current, current.metadata.name!);
  }

  #finishNamespace(ns: KObject): void {
    const name = ns.metadata.name!;
    let remaining = 0;
    for (const key of [...this.#store.keys()]) {
      if (key === "namespaces") continue;
      for (const obj of [...this.#store.list(key, name)]) {
        remaining++;
        if (!obj.metadata.deletionTimestamp) {
          this.#objects.systemDelete(key, obj, { propagationPolicy: "Background" });
        }
      }
    }
    if (remaining === 0 || this.#countIn(name) === 0) {
      const current = this.#store.get("namespaces", "", name);
      if (
        current &&
        ((current.spec as { finalizers?: string[] })?.finalizers ?? []).includes("kubernetes")
      ) {
        this.#objects.systemUpdate("namespaces", current, (o) => ({
          ...o,
          spec: { ...(o.spec as object), finalizers: [] },
        }));
      }
    }
  }

  #countIn(namespace: string): number {
    let n = 0;
    for (const key of this.#store.keys()) {
      if (key !== "namespaces") n += this.#store.count(key, namespace);
    }
    return n;
  }

  #finishCrd(crd: KObject, key: string): void {
    for (const obj of [...this.#store.list(key)]) {
      if (!obj.metadata.deletionTimestamp) {
        this.#objects.systemDelete(key, obj, { propagationPolicy: "Background" });
      }
    }
    if (this.#store.count(key) === 0) {
      const current = this.#store.get(CRD_KEY, "", crd.metadata.name!);
      if (current?.metadata.finalizers?.includes(CRD_CLEANUP_FINALIZER)) {
        this.#objects.systemUpdate(
          CRD_KEY,
          current,
          (o) => withoutFinalizer(o, CRD_CLEANUP_FINALIZER),
        );
      }
    }
  }
}

function withoutOwner(o: KObject, uid: string): KObject {
  const refs = (o.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
  const metadata = { ...o.metadata };
  if (refs.length) metadata.ownerReferences = refs;
  else delete metadata.ownerReferences;
  return { ...o, metadata };
}

function withoutFinalizer(o: KObject, finalizer: string): KObject {
  return {
    ...o,
    metadata: {
      ...o.metadata,
      finalizers: (o.metadata.finalizers ?? []).filter((f) => f !== finalizer),
    },
  };
}
