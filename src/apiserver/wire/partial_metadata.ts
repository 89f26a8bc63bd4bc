/**
 * Metadata-only answers. A client that needs only objects' metadata — client-go's
 * metadata client and informers (the garbage collector, quota, `kubectl` helpers),
 * the Python client's dynamic client — asks for it in the `Accept` header,
 * `application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`, and kube-apiserver
 * answers a `PartialObjectMetadataList` whose items carry kind, apiVersion and the whole
 * `metadata` of each object, nothing else. One object (a get, the object a write or a
 * delete answers with, each watch event) goes out as `PartialObjectMetadata`. Asking
 * for the list kind of one object, or the object kind of a list, is kube's 406.
 *
 * Only JSON ranges are judged: the server answers JSON, so a protobuf range is passed
 * over for the JSON one client-go sends after it.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import type { ResourceDef } from "../shared/resources.ts";
import type { KObject } from "../shared/types.ts";

/** What a metadata-only `Accept` asks for: the kind and its `meta.k8s.io` version. */
export interface PartialTarget {
  kind: "PartialObjectMetadata" | "PartialObjectMetadataList";
  apiVersion: "meta.k8s.io/v1" | "meta.k8s.io/v1beta1";
}

/**
 * Whether an `Accept` header asks for metadata only, judged as kube-apiserver negotiates:
 * the first JSON range decides; one without `as=` (or with `as=Table`) means a full answer.
 *
 * @param accept The header.
 * @returns The target, or undefined for a full (or Table) answer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { wantsPartialMetadata } from "./partial_metadata.ts";
 * assert.deepEqual(
 *   wantsPartialMetadata("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"),
 *   { kind: "PartialObjectMetadataList", apiVersion: "meta.k8s.io/v1" },
 * );
 * assert.equal(wantsPartialMetadata("application/json"), undefined);
 * ```
 */
export function wantsPartialMetadata(accept: string | null): PartialTarget | undefined {
  if (!accept || !accept.includes("PartialObjectMetadata")) return undefined;
  for (const range of accept.split(",")) {
    const [type = "", ...params] = range.split(";").map((s) => s.trim());
    if (!JSON_RANGES.has(type.toLowerCase())) continue;
    const p = new Map(params.map((kv) => {
      const i = kv.indexOf("=");
      return [kv.slice(0, i).trim().toLowerCase(), kv.slice(i + 1).trim()] as const;
    }));
    const as = p.get("as");
    if (as === undefined || as === "Table") return undefined;
    const v = p.get("v");
    if (
      (as === "PartialObjectMetadata" || as === "PartialObjectMetadataList") &&
      p.get("g") === "meta.k8s.io" && (v === "v1" || v === "v1beta1")
    ) return { kind: as, apiVersion: `meta.k8s.io/${v}` };
  }
  return undefined;
}

const JSON_RANGES = new Set(["application/json", "application/*", "*/*"]);

/**
 * One object's metadata as kube's `meta.AsPartialObjectMetadata` gives it.
 *
 * @param def The object's resource (for the 406 message).
 * @param obj The object.
 * @param target The negotiated target.
 * @returns The `PartialObjectMetadata`.
 * @throws {ApiError} 406 when a list was asked for.
 */
export function asPartialObjectMetadata(
  def: ResourceDef,
  obj: KObject,
  target: PartialTarget,
): Record<string, unknown> {
  if (target.kind !== "PartialObjectMetadata") {
    throw new ApiError(
      406,
      "NotAcceptable",
      `you requested PartialObjectMetadataList, but the requested object is not a list (${
        goType(def, false)
      })`,
    );
  }
  return item(obj, target.apiVersion);
}

/**
 * A list's items as kube's `asPartialObjectMetadataList` gives them: resourceVersion,
 * continue and remainingItemCount kept from the list.
 *
 * @param def The items' resource (for the 406 message).
 * @param items The objects.
 * @param metadata The list's metadata.
 * @param target The negotiated target.
 * @returns The `PartialObjectMetadataList`.
 * @throws {ApiError} 406 when one object was asked for.
 */
export function asPartialObjectMetadataList(
  def: ResourceDef,
  items: readonly KObject[],
  metadata: Record<string, unknown>,
  target: PartialTarget,
): Record<string, unknown> {
  if (target.kind !== "PartialObjectMetadataList") {
    throw new ApiError(
      406,
      "NotAcceptable",
      `you requested PartialObjectMetadata, but the requested object is a list (${
        goType(def, true)
      })`,
    );
  }
  return {
    kind: "PartialObjectMetadataList",
    apiVersion: target.apiVersion,
    metadata,
    items: items.map((o) => item(o, target.apiVersion)),
  };
}

/**
 * A watch event's object: kube's watch encoder turns every object (bookmarks too) into
 * `PartialObjectMetadata`, whichever of the two kinds was asked for.
 *
 * @param obj The object.
 * @param apiVersion The negotiated target's apiVersion (`meta.k8s.io/v1` or `/v1beta1`).
 * @returns The `PartialObjectMetadata`.
 */
export function partialEventObject(obj: KObject, apiVersion: string): Record<string, unknown> {
  return item(obj, apiVersion);
}

function item(obj: KObject, apiVersion: string): Record<string, unknown> {
  return { kind: "PartialObjectMetadata", apiVersion, metadata: obj.metadata };
}

/** The Go type kube's message names (`%T` of the internal object, or of an unstructured one). */
function goType(def: ResourceDef, list: boolean): string {
  if (!def.builtin) return list ? "*unstructured.UnstructuredList" : "*unstructured.Unstructured";
  const pkg = def.group === "" || def.group === "events.k8s.io" ? "core" : def.group.split(".")[0];
  return `*${pkg}.${def.kind}${list ? "List" : ""}`;
}
