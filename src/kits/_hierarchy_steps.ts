/**
 * The steps behind the hierarchy helpers: reading and checking the owner, the
 * name, the namespace and the labels (every check before any change), then
 * applying each to the collected children.
 *
 * @module
 */

import { isObject, type JsonObject } from "../cogs/structs/_json.ts";
import {
  type Body,
  buildOwnerReference as buildMetaOwnerReference,
  type OwnerReferenceOptions,
} from "../cogs/structs/bodies.ts";
import {
  checkMetadata,
  describe,
  ensureMetaArray,
  ensureMetadata,
  ensureMetaObject,
  isSet,
  type NestedFieldPath,
  parseNested,
  peekMeta,
  resolveNested,
  type Target,
} from "./_objects.ts";
import type { OwnerReference } from "./hierarchy_types.ts";

// ---------------------------------------------------------------------------
// Reading the owner.

export function ownerString(fn: string, owner: JsonObject, field: "apiVersion" | "kind"): string {
  const value = owner[field];
  if (!isSet(value)) {
    throw new TypeError(
      `${fn}(): the owner has no ${field}; set owner.apiVersion and owner.kind ` +
        `(items of a list response from the API omit them).`,
    );
  }
  return value as string;
}

export function ownerMeta(fn: string, owner: JsonObject, field: "name" | "uid"): string {
  const value = peekMeta(owner, field);
  if (!isSet(value)) {
    throw new TypeError(
      `${fn}(): the owner has no metadata.${field}; pass the owner as read from the API ` +
        `(e.g. the handler's body), not a manifest that was never created.`,
    );
  }
  return value as string;
}

export function checkOwner(fn: string, owner: unknown): JsonObject {
  if (!isObject(owner)) {
    throw new TypeError(
      `${fn}(): the owner is ${describe(owner)}; pass the parent object (e.g. the handler's body).`,
    );
  }
  const meta = owner.metadata;
  if (meta !== undefined && meta !== null && !isObject(meta)) {
    throw new TypeError(
      `${fn}(): the owner's metadata is ${
        describe(meta)
      }; pass the parent object as read from the API.`,
    );
  }
  return owner;
}

export function makeOwnerReference(
  fn: string,
  owner: unknown,
  options: OwnerReferenceOptions = {},
): OwnerReference {
  const body = checkOwner(fn, owner) as Body; // an object, with metadata that is an object or absent
  // The structs build the reference (options, Kopf's key order); the kit insists on the four fields.
  return {
    ...buildMetaOwnerReference(body, options),
    apiVersion: ownerString(fn, body, "apiVersion"),
    kind: ownerString(fn, body, "kind"),
    name: ownerMeta(fn, body, "name"),
    uid: ownerMeta(fn, body, "uid"),
  };
}

export function ownerLabels(fn: string, owner: JsonObject): Record<string, string> {
  const labels = peekMeta(owner, "labels");
  if (labels === undefined || labels === null) return {};
  return checkLabels(fn, labels, "the owner's metadata.labels");
}

export function checkLabels(fn: string, labels: unknown, what: string): Record<string, string> {
  if (!isObject(labels)) {
    throw new TypeError(
      `${fn}(): ${what} is ${describe(labels)}; pass labels as an object of strings.`,
    );
  }
  for (const [key, value] of Object.entries(labels)) {
    if (typeof value !== "string") {
      throw new TypeError(
        `${fn}(): ${what} has ${describe(value)} for "${key}"; label values must be strings.`,
      );
    }
  }
  return labels as Record<string, string>;
}

// ---------------------------------------------------------------------------
// The steps, on already collected and validated targets.

export function applyOwnerReference(targets: Target[], ref: OwnerReference): void {
  for (const { obj } of targets) {
    const refs = ensureMetaArray(obj, "ownerReferences");
    if (!refs.some((r) => isObject(r) && r.uid === ref.uid)) refs.push({ ...ref });
  }
}

export function applyNaming(
  targets: Target[],
  name: string,
  forced: boolean,
  strict: boolean,
): void {
  for (const { obj } of targets) {
    const meta = isObject(obj.metadata) ? obj.metadata : undefined;
    const named = meta !== undefined && (isSet(meta.name) || isSet(meta.generateName));
    if (named && !forced) continue;
    const target = ensureMetadata(obj);
    if (strict) {
      target.name = name;
      delete target.generateName;
    } else {
      target.generateName = `${name}-`;
      delete target.name;
    }
  }
}

export function applyNamespace(
  targets: Target[],
  namespace: string | undefined,
  forced: boolean,
): void {
  for (const { obj } of targets) {
    if (!forced && isSet(peekMeta(obj, "namespace"))) continue;
    if (namespace !== undefined) {
      ensureMetadata(obj).namespace = namespace;
    } else if (forced && isObject(obj.metadata)) {
      delete obj.metadata.namespace;
    }
  }
}

export function applyLabels(
  targets: Target[],
  labels: Record<string, string>,
  forced: boolean,
): void {
  for (const { obj } of targets) {
    const existing = ensureMetaObject(obj, "labels");
    for (const [key, value] of Object.entries(labels)) {
      if (forced || existing[key] === undefined || existing[key] === null) existing[key] = value;
    }
  }
}

/** The objects plus their nested sub-objects, validated for labelling. */
export function labelTargets(
  fn: string,
  targets: Target[],
  nested: NestedFieldPath | Iterable<NestedFieldPath> | undefined,
): Target[] {
  const paths = parseNested(fn, nested);
  const all: Target[] = [];
  for (const target of targets) {
    all.push(target);
    for (const path of paths) {
      const sub = resolveNested(fn, target, path);
      if (sub !== undefined) all.push(sub);
    }
  }
  for (const target of all) checkMetadata(fn, target, ["labels", "object"]);
  return all;
}

export function checkName(fn: string, name: unknown): string {
  if (!isSet(name)) {
    throw new TypeError(
      `${fn}(): the name is ${describe(name)}${name === "" ? " (empty)" : ""}; ` +
        `pass a non-empty string (e.g. the owner's metadata.name).`,
    );
  }
  return name as string;
}

export function checkNamespace(fn: string, namespace: unknown): string | undefined {
  if (namespace === undefined || namespace === null || namespace === "") return undefined;
  if (typeof namespace !== "string") {
    throw new TypeError(
      `${fn}(): the namespace is ${describe(namespace)}; pass a string, or null for none.`,
    );
  }
  return namespace;
}
