/**
 * The shapes of a write: its per-request options, its admission stages, its
 * result, a delete's options and the patch types — named by the verbs, by the
 * server that parses requests into them, and by the webhooks that wrap them —
 * and the {@link Writer} the verbs work through.
 *
 * @module
 */

import type { ResourceRegistry } from "./registry.ts";
import type { ResourceDef } from "../shared/resources.ts";
import type { Store } from "../storage/store.ts";
import type { KObject } from "../shared/types.ts";

/** How unknown fields are treated (`?fieldValidation=`). */
export type FieldValidation = "Strict" | "Warn" | "Ignore";

/** Per-request options of a write. */
export interface WriteOptions {
  /** Validate and answer as if written, but store nothing (`?dryRun=All`). */
  dryRun?: boolean;
  /** Who makes the change (`?fieldManager=`); required for server-side apply. */
  fieldManager?: string;
  /** What to do with unknown fields (`?fieldValidation=`; default `"Warn"`). */
  fieldValidation?: FieldValidation;
  /** Server-side apply: take over conflicting fields. */
  force?: boolean;
  /**
   * Fields the request's JSON body sent twice (reported with the unknown fields): their paths
   * with the order they appear in, and where each key path first appears.
   */
  duplicates?: {
    found: Array<{ path: string; at: number }>;
    order: Map<string, number>;
    /** A YAML body's: go-yaml's `line N: key "k" already set in map` (`yaml_duplicates.ts`). */
    yaml?: string[];
  };
  /** Admission stages (the webhook calls of `admission.ts`); none by default. */
  admission?: AdmissionHooks;
  /** Who writes (the request's user): what `Objects.rbacGuard` judges. */
  user?: { username: string; groups: string[] };
  /**
   * Where a write meets the storage version (a CRD with a conversion webhook,
   * see `conversion.ts`); none by default. `decode` turns the stored object
   * into the request's version before the write works on it; `encode` turns
   * the object to store into the storage version (after admission and
   * validation, dry runs included).
   */
  conversion?: {
    /** The stored object at the request's version. */
    decode: (stored: KObject) => KObject;
    /** The object to store at the storage version. */
    encode: (draft: KObject) => KObject;
    /**
     * Whether a decoded object is stored at another version than the storage
     * version: then an unchanged write still writes (at the storage version),
     * as kube-apiserver compares the encoded bytes — how stored objects are
     * migrated to a new storage version.
     */
    outdated?: (decoded: KObject) => boolean;
  };
}

/**
 * Where a write hands its object to admission: `mutate` before the checks
 * (names, metadata, schema) — what mutating webhooks see; `validate` with the
 * object as it would be stored — what validating webhooks see. Each returns
 * the object to go on with, or throws to stop the write.
 */
export interface AdmissionHooks {
  /** The object before the checks (on create: before uid and generated name). */
  mutate?: (draft: KObject, current: KObject | undefined) => KObject;
  /** The object as it would be stored. */
  validate?: (draft: KObject, current: KObject | undefined) => KObject;
}

/** The result of a write. */
export interface WriteResult {
  /** The object as stored (or as it would be, for a dry run). */
  object: KObject;
  /** Warnings for the `Warning` response header (e.g. unknown fields with `Warn`). */
  warnings: string[];
  /** True when a new object was created (HTTP 201). */
  created: boolean;
}

/** Deletion options (the `DeleteOptions` body and query). */
export interface DeleteOptions {
  /** What happens to dependents (default `"Background"`). */
  propagationPolicy?: "Background" | "Foreground" | "Orphan";
  /** Delete only if the object still has this uid and/or resourceVersion. */
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Validate and answer as if deleted, but change nothing. */
  dryRun?: boolean;
}

/** The patch types of `Content-Type`. */
export type PatchType = "merge" | "json" | "strategic" | "apply";

/**
 * What the verbs need of the write path they serve: the store and the served
 * resources, the time source, the RBAC guard, and the two writes a verb may
 * start itself (an apply that creates; a CRD's removal that re-judges its
 * group's names). `Objects` is the one writer.
 */
export interface Writer {
  /** The objects. */
  readonly store: Store;
  /** The served resources. */
  readonly registry: ResourceRegistry;
  /** Time source (ISO strings without sub-seconds). */
  now: () => string;
  /** Refuses a user's escalating write of a role or binding; undefined: no check. */
  rbacGuard?: (plural: string, draft: KObject, current: KObject | undefined, user: {
    username: string;
    groups: string[];
  }) => void;
  /** Creates an object. */
  create(def: ResourceDef, namespace: string, body: unknown, options?: WriteOptions): WriteResult;
  /** Writes a system change to an object. */
  systemUpdate(key: string, obj: KObject, change: (o: KObject) => KObject): void;
}
