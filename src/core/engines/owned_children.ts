/**
 * The index of owned children: which watched child belongs to which parent,
 * by the parent's uid in the child's `metadata.ownerReferences`. Reconcilers
 * (reconciling.ts) read a parent's children from here and learn from it which
 * parents a child's event concerns.
 *
 * Why two maps and no scans: a child's event must find its parents at once —
 * child uid → parent uids (the child's previous owners too, so that a child
 * that lost an owner reference, or is gone, still reaches that parent) — and a
 * reconcile call must find a parent's children at once: parent uid → resource
 * → child uid → body. Each event costs O(owner references), whatever the
 * number of objects.
 *
 * Memory: the bodies are the very objects the watch yielded (the watcher keeps
 * a reference to each live object anyway, see cogs/clients/watching.ts), so
 * the index adds its entries, not copies. Only children with an owner
 * reference that the caller accepts (a parent's kind) are kept.
 *
 * @module
 */

import type { AnyObject } from "../intents/handlers.ts";

/** An owner reference, as `metadata.ownerReferences` holds it. */
export interface OwnerRef {
  /** The owner's `apiVersion`. */
  apiVersion?: string;
  /** The owner's kind. */
  kind?: string;
  /** The owner's name. */
  name?: string;
  /** The owner's uid: what the index matches on. */
  uid?: string;
  /** Whether the owner is the managing controller. */
  controller?: boolean;
}

/** What the index knows of one child. */
interface ChildEntry {
  /** The resource's key (as the caller names it, e.g. `pods.v1`). */
  resource: string;
  /** The watcher that delivered it (its children go when it stops). */
  stream: string;
  /** The uids of its accepted owners. */
  parents: string[];
  /** The child as last seen. */
  body: AnyObject;
}

/**
 * Children by parent, filled from the children's watch events.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ChildIndex } from "./owned_children.ts";
 * const index = new ChildIndex();
 * const pvc = {
 *   metadata: { uid: "c1", name: "data", resourceVersion: "1", ownerReferences: [{ uid: "p1" }] },
 * };
 * assert.deepEqual(index.apply("pvcs@*", "persistentvolumeclaims.v1", "ADDED", pvc, () => true), [ "p1" ]);
 * assert.deepEqual(index.children("p1", "persistentvolumeclaims.v1").length, 1);
 * assert.deepEqual(index.apply("pvcs@*", "persistentvolumeclaims.v1", "DELETED", pvc, () => true), [ "p1" ]);
 * assert.deepEqual(index.children("p1", "persistentvolumeclaims.v1").length, 0);
 * ```
 */
export class ChildIndex {
  /** Child uid → its entry. */
  readonly #children = new Map<string, ChildEntry>();
  /** Parent uid → resource key → child uid → child body. */
  readonly #parents = new Map<string, Map<string, Map<string, AnyObject>>>();

  /** How many children are indexed. */
  get size(): number {
    return this.#children.size;
  }

  /**
   * Takes in one watch event of a child.
   *
   * @param stream The watcher that delivered it.
   * @param resource The child's resource key.
   * @param type The event type (null for listings).
   * @param body The child.
   * @param accepts Whether an owner reference names a parent of interest (by its kind).
   * @returns The uids of the parents the event concerns (old and new owners); none for a repeat.
   */
  apply(
    stream: string,
    resource: string,
    type: string | null,
    body: AnyObject,
    accepts: (ref: OwnerRef) => boolean,
  ): string[] {
    const uid = body?.metadata?.uid;
    if (typeof uid !== "string") return [];
    const old = this.#children.get(uid);
    const refs: OwnerRef[] = Array.isArray(body.metadata.ownerReferences)
      ? body.metadata.ownerReferences
      : [];
    const parents = type === "DELETED" ? [] : [
      ...new Set(
        refs.filter((r) => typeof r?.uid === "string" && accepts(r)).map((r) => r.uid!),
      ),
    ];
    if (old && type !== "DELETED" && sameVersion(old.body, body) && same(old.parents, parents)) {
      return []; // a repeat (a relist delivers every object again)
    }
    if (old) { for (const p of old.parents) this.#unlink(p, old.resource, uid); }
    if (parents.length) {
      this.#children.set(uid, { resource, stream, parents, body });
      for (const p of parents) this.#link(p, resource, uid, body);
    } else this.#children.delete(uid);
    return [...new Set([...(old?.parents ?? []), ...parents])];
  }

  /**
   * The children of a parent of one resource, sorted by namespace and name.
   *
   * @param parent The parent's uid.
   * @param resource The children's resource key.
   * @returns The children (the bodies as last seen).
   */
  children(parent: string, resource: string): AnyObject[] {
    const found = this.#parents.get(parent)?.get(resource);
    if (!found) return [];
    return [...found.values()].sort((a, b) => order(a).localeCompare(order(b)));
  }

  /**
   * Forgets the children one watcher delivered (it stopped: a namespace or CRD went away).
   *
   * @param stream The watcher.
   * @returns The uids of the parents that lost children.
   */
  forgetStream(stream: string): string[] {
    const affected = new Set<string>();
    for (const [uid, entry] of this.#children) {
      if (entry.stream !== stream) continue;
      for (const p of entry.parents) {
        this.#unlink(p, entry.resource, uid);
        affected.add(p);
      }
      this.#children.delete(uid);
    }
    return [...affected];
  }

  #link(parent: string, resource: string, uid: string, body: AnyObject): void {
    let byResource = this.#parents.get(parent);
    if (!byResource) this.#parents.set(parent, byResource = new Map());
    let bodies = byResource.get(resource);
    if (!bodies) byResource.set(resource, bodies = new Map());
    bodies.set(uid, body);
  }

  #unlink(parent: string, resource: string, uid: string): void {
    const byResource = this.#parents.get(parent);
    const bodies = byResource?.get(resource);
    if (!byResource || !bodies) return;
    bodies.delete(uid);
    if (!bodies.size) byResource.delete(resource);
    if (!byResource.size) this.#parents.delete(parent);
  }
}

function sameVersion(a: AnyObject, b: AnyObject): boolean {
  const v = a.metadata?.resourceVersion;
  return v !== undefined && v === b.metadata?.resourceVersion;
}

function same(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function order(body: AnyObject): string {
  return `${body.metadata?.namespace ?? ""}/${body.metadata?.name ?? ""}`;
}
