/**
 * The types of {@link KubeClient}'s verbs: the objects, how a resource is named
 * ({@link ResourceRef}), and the options of get, list, create, replace, patch, apply, delete
 * and watch.
 *
 * @module
 */

import type { Resource, SelectorFields } from "../structs/references.ts";

/** Any object body, loosely typed (the default of the verbs' type parameter). */
// deno-lint-ignore no-explicit-any
export type KubeObject = Record<string, any>;

/**
 * A resource in any of Kopf's forms: a name (`"pods"`, `"deployments.apps"`,
 * `"kopfexamples.v1.kopf.dev"`), positional parts (`["kopf.dev", "kopfexamples"]`,
 * `["kopf.dev", "v1", "kopfexamples"]`, `["v1", "pods"]`), selector fields
 * (`{ group, plural }`, `{ apiVersion, kind }`), or a {@link Resource}.
 */
export type ResourceRef =
  | string
  | Resource
  | SelectorFields
  | readonly [string, string]
  | readonly [string, string, string];

/** Where the object is and how to stop the request. */
export interface KubeObjectOptions {
  /** The namespace; leave it out for cluster-scoped resources. */
  namespace?: string | null | undefined;
  /** Stops the request (and its retries). */
  signal?: AbortSignal | undefined;
}

/** Options of {@link KubeClient.get}. */
export interface KubeGetOptions extends KubeObjectOptions {
  /** Read this subresource, e.g. `"status"` or `"scale"`. */
  subresource?: string | undefined;
}

/** Options of {@link KubeClient.list}. */
export interface KubeListOptions extends KubeObjectOptions {
  /** A label selector, e.g. `app=x,tier!=db`. */
  labelSelector?: string | undefined;
  /** A field selector, e.g. `metadata.name=x`. */
  fieldSelector?: string | undefined;
  /** The page size; pages are followed to the end (default 500; 0: one request). */
  limit?: number | undefined;
}

/** The answer of {@link KubeClient.list}. */
export interface KubeList<T> {
  /** The objects, each with `apiVersion` and `kind`. */
  items: T[];
  /** The list's resourceVersion. */
  resourceVersion: string;
}

/** Options of {@link KubeClient.create} and {@link KubeClient.replace}. */
export interface KubeWriteOptions extends KubeObjectOptions {
  /** `?fieldManager=`: the name of the writer in `managedFields`. */
  fieldManager?: string | undefined;
}

/** Options of {@link KubeClient.replace}. */
export interface KubeReplaceOptions extends KubeWriteOptions {
  /** Replace this subresource, e.g. `"status"`. */
  subresource?: string | undefined;
}

/** The patch formats of {@link KubeClient.patch}. */
export type KubePatchType = "merge" | "json" | "strategic" | "apply";

/** Options of {@link KubeClient.patch}. */
export interface KubePatchOptions extends KubeWriteOptions {
  /**
   * `merge` (default; with a status subresource, `status` goes to `/status`),
   * `json` (an array of operations), `strategic` (built-in kinds only), or
   * `apply` (server-side apply: needs `fieldManager`).
   */
  type?: KubePatchType | undefined;
  /** Patch this subresource only, e.g. `"status"`. */
  subresource?: string | undefined;
  /** Server-side apply: take over fields that other managers own. */
  force?: boolean | undefined;
}

/** Options of {@link KubeClient.apply}. */
export interface KubeApplyOptions extends KubeObjectOptions {
  /** The field manager (required by server-side apply). */
  fieldManager: string;
  /** Take over fields that other managers own (else: a 409 {@link ConflictError}). */
  force?: boolean | undefined;
  /** Apply to this subresource, e.g. `"status"`. */
  subresource?: string | undefined;
}

/** Options of {@link KubeClient.delete}. */
export interface KubeDeleteOptions extends KubeObjectOptions {
  /** `Background` (default), `Foreground`, or `Orphan`. */
  propagationPolicy?: "Background" | "Foreground" | "Orphan" | undefined;
  /** Seconds of grace (pods); 0 for immediately. */
  gracePeriodSeconds?: number | undefined;
  /** Delete only this uid / resourceVersion (409 otherwise). */
  preconditions?: { uid?: string; resourceVersion?: string } | undefined;
}

/** Options of {@link KubeClient.watch}. */
export interface KubeWatchOptions extends KubeObjectOptions {
  /** A label selector. */
  labelSelector?: string | undefined;
  /** A field selector. */
  fieldSelector?: string | undefined;
}

/** One event of {@link KubeClient.watch}. */
export interface KubeWatchEvent<T> {
  /** What happened; the objects that exist when the watch starts come as `ADDED`. */
  type: "ADDED" | "MODIFIED" | "DELETED";
  /** The object (for `DELETED`: its last state). */
  object: T;
}
