/**
 * The write path of the API server: what kube-apiserver's registry strategies
 * do between a request and the store. Create, update, patch and delete share
 * one admission step (names, metadata, CRD schema: prune, default, validate),
 * one rule for generation (bumped when anything but metadata and status
 * changes), one rule for finalizers (an object goes when its last finalizer
 * goes; none can be added once it is deleting), and one rule for no-ops (an
 * unchanged object keeps its resourceVersion and emits no event).
 *
 * @module
 */

import { validateCrdSchemas } from "./crd_schema.ts";
import { crdDecodeError } from "./crd_validation.ts";
import { acceptNames, type CrdNames } from "./crd_names.ts";
import { validateCrdConversion } from "./conversion.ts";
import { applyJsonPatch, JsonPatchError } from "../cogs/structs/json_patch.ts";
import { applyMergePatch } from "../cogs/structs/merge_patch.ts";
import { deepEqual } from "../cogs/structs/deep_equal.ts";
import { ApiError, type StatusCause } from "./errors.ts";
import { checkConfigData } from "./config_data.ts";
import {
  validateAnnotations,
  validateFinalizers,
  validateLabels,
  validateName,
} from "./metadata_validation.ts";
import type { ResourceRegistry } from "./registry.ts";
import { apiVersionOf, type ResourceDef, storageKey } from "./resources.ts";
import { pruneBuiltinFields } from "./builtin_fields.ts";
import { strictErrors } from "./json_duplicates.ts";
import { builtinCauses } from "./workload_validation.ts";
import { applyDefaults, pruneUnknownFields, validateAgainstSchema } from "./schema.ts";
import type { KObject, Meta, Store } from "./store.ts";
import { applyStrategicMergePatch, StrategicMergeError } from "./strategic_merge.ts";
import { applyConfiguration, type ApplyConflict } from "./apply.ts";
import { createdPod, defaultedService, keepsGeneration, updatedPod } from "./builtin_strategies.ts";
import { createdWorkload, defaultedWorkload } from "./workload_defaults.ts";

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
  };
  /** Admission stages (the webhook calls of `admission.ts`); none by default. */
  admission?: AdmissionHooks;
  /** Who writes (the request's user): what {@linkcode Objects.rbacGuard} judges. */
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

const NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789";
const CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io";
const CRDS = "customresourcedefinitions.apiextensions.k8s.io";

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
    const obj = asObject(body, def);
    const meta: Meta = { ...(obj.metadata ?? {}) };
    if (def.namespaced) {
      if (meta.namespace && namespace && meta.namespace !== namespace) {
        throw ApiError.badRequest(
          "the namespace of the provided object does not match the namespace sent on the request",
        );
      }
      meta.namespace = namespace || meta.namespace || "";
      if (!meta.namespace) {
        throw ApiError.badRequest(
          "the server could not find the requested resource: a namespace is required",
        );
      }
      this.#requireNamespace(meta.namespace);
    } else {
      delete meta.namespace;
    }
    if (options.admission?.mutate) {
      const mutated = options.admission.mutate({ ...obj, metadata: meta }, undefined);
      return this.#createAdmitted(def, mutated, { ...(mutated.metadata ?? {}) }, options);
    }
    return this.#createAdmitted(def, obj, meta, options);
  }

  #createAdmitted(def: ResourceDef, obj: KObject, meta: Meta, options: WriteOptions): WriteResult {
    if (!meta.name && meta.generateName) {
      let name: string;
      do name = meta.generateName + randomSuffix(); while (
        this.store.get(storageKey(def), meta.namespace ?? "", name)
      );
      meta.name = name;
    }
    if (!meta.name) {
      throw ApiError.invalid(def.kind, def.group, "", [
        {
          reason: "FieldValueRequired",
          message: "Required value: name or generateName is required",
          field: "metadata.name",
        },
      ]);
    }
    if (this.store.get(storageKey(def), meta.namespace ?? "", meta.name)) {
      throw ApiError.alreadyExists(def.plural, def.group, meta.name);
    }
    meta.uid = crypto.randomUUID();
    meta.creationTimestamp = this.now();
    if (keepsGeneration(def)) meta.generation = 1;
    else delete meta.generation;
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (meta.managedFields && !Array.isArray(meta.managedFields)) delete meta.managedFields;
    let draft: KObject = { ...obj, apiVersion: apiVersionOf(def), kind: def.kind, metadata: meta };
    if (def.statusSubresource && !def.builtin) delete draft.status;
    const warnings: string[] = [];
    draft = this.#admit(def, draft, undefined, options, warnings);
    draft = this.#onCreate(def, draft);
    if (options.admission?.validate) draft = options.admission.validate(draft, undefined);
    if (options.conversion) draft = options.conversion.encode(draft);
    if (options.dryRun) {
      return { object: { ...draft, metadata: { ...draft.metadata } }, warnings, created: true };
    }
    const stored = this.store.commit("ADDED", storageKey(def), draft);
    this.#afterWrite(def, stored);
    return { object: stored, warnings, created: true };
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
    const obj = asObject(body, def);
    let current = this.#get(def, namespace, name);
    if (options.conversion) current = options.conversion.decode(current);
    requireSameVersion(def, current, obj);
    if (obj.metadata?.name && obj.metadata.name !== name) {
      throw ApiError.badRequest(
        `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    return this.#replace(def, current, obj, options, subresource);
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
    if (type === "strategic" && !def.builtin) {
      throw new ApiError(
        415,
        "UnsupportedMediaType",
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
      );
    }
    let current = this.store.get(storageKey(def), def.namespaced ? namespace : "", name);
    if (current && options.conversion) current = options.conversion.decode(current);
    if (type === "apply") {
      const manager = options.fieldManager;
      if (!manager) {
        throw ApiError.badRequest(
          'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
        );
      }
      const applied = asObject(patch, def);
      if (!current) {
        const first = applyConfiguration(
          undefined,
          applied,
          manager,
          def,
          this.now(),
          options.force,
        );
        return this.create(def, namespace, first.object, options);
      }
      const next = applyConfiguration(current, applied, manager, def, this.now(), options.force);
      if (next.conflicts.length) {
        throw applyConflict(next.conflicts);
      }
      return this.#replace(def, current, next.object, options, subresource, true);
    }
    if (!current) throw ApiError.notFound(def.plural, def.group, name);
    if (type === "json" && !Array.isArray(patch)) {
      // As kube-apiserver: an undecodable JSON patch is 400; a failing operation is 422.
      throw ApiError.badRequest("a JSON patch must be an array of operations");
    }
    let patched: unknown;
    try {
      if (type === "merge") patched = applyMergePatch(current, patch);
      else if (type === "json") patched = applyJsonPatch(current, patch);
      else patched = applyStrategicMergePatch(current, patch as Record<string, unknown>, def.kind);
    } catch (e) {
      if (e instanceof JsonPatchError) {
        throw new ApiError(422, "Invalid", e.message);
      }
      if (e instanceof StrategicMergeError) throw ApiError.badRequest(e.message);
      throw e;
    }
    const obj = asObject(patched, def);
    requireSameVersion(def, current, obj);
    if (obj.metadata?.name !== undefined && obj.metadata.name !== name) {
      throw ApiError.badRequest(
        "metadata.name: Invalid value: the name cannot be changed by a patch",
      );
    }
    return this.#replace(def, current, obj, options, subresource);
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
    const current = this.#get(def, namespace, name);
    // kube's BeforeDelete: a precondition given (even "") must hold, the uid's first; the
    // conflict names the kind (`Kind.group`), not the plural, as kube-apiserver's does.
    const pre = options.preconditions;
    if (typeof pre?.uid === "string" && pre.uid !== current.metadata.uid) {
      throw ApiError.conflict(
        def.kind,
        def.group,
        name,
        `the UID in the precondition (${pre.uid}) does not match the UID in record (${current.metadata.uid}). The object might have been deleted and then recreated`,
      );
    }
    const rv = pre?.resourceVersion;
    if (typeof rv === "string" && rv !== current.metadata.resourceVersion) {
      throw ApiError.conflict(
        def.kind,
        def.group,
        name,
        `the ResourceVersion in the precondition (${rv}) does not match the ResourceVersion in record (${current.metadata.resourceVersion}). The object might have been modified`,
      );
    }
    const finalizers = [...(current.metadata.finalizers ?? [])];
    const policy = options.propagationPolicy;
    if (policy === "Foreground" && !finalizers.includes("foregroundDeletion")) {
      finalizers.push("foregroundDeletion");
    }
    if (policy === "Orphan" && !finalizers.includes("orphan")) finalizers.push("orphan");
    const key = storageKey(def);
    const isNamespace = key === "namespaces";
    const isCrd = key === "customresourcedefinitions.apiextensions.k8s.io";
    const nsFinalizers = isNamespace
      ? ((current.spec as { finalizers?: string[] })?.finalizers ?? [])
      : [];
    if (finalizers.length === 0 && nsFinalizers.length === 0) {
      if (options.dryRun) return current;
      return this.#remove(def, current);
    }
    if (current.metadata.deletionTimestamp) {
      // Already deleting: only a new propagation finalizer may be added.
      if (finalizers.length === (current.metadata.finalizers ?? []).length) return current;
    }
    const draft: KObject = {
      ...current,
      metadata: {
        ...current.metadata,
        finalizers,
        deletionTimestamp: current.metadata.deletionTimestamp ?? this.now(),
        deletionGracePeriodSeconds: 0,
      },
    };
    // Graceful deletion bumps the generation of the objects that keep one (kube's BeforeDelete).
    if (current.metadata.generation) {
      draft.metadata.generation = current.metadata.generation +
        (current.metadata.deletionTimestamp ? 0 : 1);
    }
    if (isNamespace) draft.status = { ...(current.status as object), phase: "Terminating" };
    if (isCrd) {
      draft.status = withCondition(draft.status, {
        type: "Terminating",
        status: "True",
        reason: "InstanceDeletionInProgress",
        message: "CustomResource deletion is in progress",
      }, this.now());
    }
    if (options.dryRun) return draft;
    return this.store.commit("MODIFIED", key, draft);
  }

  /**
   * Removes an object for good (its last finalizer is gone): the DELETED event.
   *
   * @param def The resource.
   * @param current The stored object.
   * @returns The object with the deletion's resourceVersion.
   */
  #remove(def: ResourceDef, current: KObject): KObject {
    const key = storageKey(def);
    const gone = this.store.commit("DELETED", key, current);
    if (key === CRDS) {
      this.registry.removeCrd(current.metadata.name!);
      // Its names are free: the group's CRDs that wanted them are judged again (crd_names.ts).
      const group = (current.spec as { group?: string } | undefined)?.group;
      for (const other of [...this.store.list(CRDS)]) {
        const names = (other.status as { conditions?: Array<{ type: string; status: string }> })
          ?.conditions?.find((c) => c.type === "NamesAccepted");
        if ((other.spec as { group?: string })?.group !== group || names?.status !== "False") {
          continue;
        }
        this.systemUpdate(CRDS, other, (o) => structuredClone(o));
      }
    }
    return gone;
  }

  #get(def: ResourceDef, namespace: string, name: string): KObject {
    const obj = this.store.get(storageKey(def), def.namespaced ? namespace : "", name);
    if (!obj) throw ApiError.notFound(def.plural, def.group, name);
    return obj;
  }

  #requireNamespace(namespace: string): void {
    const ns = this.store.get("namespaces", "", namespace);
    if (!ns) {
      throw new ApiError(404, "NotFound", `namespaces "${namespace}" not found`, {
        name: namespace,
        kind: "namespaces",
      });
    }
    if (ns.metadata.deletionTimestamp) {
      throw new ApiError(
        403,
        "Forbidden",
        `unable to create new content in namespace ${namespace} because it is being terminated`,
        { name: namespace, kind: "namespaces" },
      );
    }
  }

  /** The shared tail of update and patch: merge the request into the stored object and commit. */
  #replace(
    def: ResourceDef,
    current: KObject,
    obj: KObject,
    options: WriteOptions,
    subresource: string | undefined,
    keepManagedFields = false,
  ): WriteResult {
    const incoming: Meta = { ...(obj.metadata ?? {}) };
    let draft: KObject;
    if (subresource === "status") {
      // The status endpoint ignores everything but the status.
      draft = { ...current, metadata: { ...current.metadata } };
      if (obj.status === undefined) delete draft.status;
      else draft.status = obj.status;
    } else {
      // Left out rather than deleted: a deleted key slows every later read of the object.
      const generation = keepsGeneration(def) ? current.metadata.generation : undefined;
      const meta: Meta = generation === undefined
        ? {
          ...incoming,
          name: current.metadata.name,
          uid: current.metadata.uid,
          creationTimestamp: current.metadata.creationTimestamp,
          resourceVersion: current.metadata.resourceVersion,
        }
        : {
          ...incoming,
          name: current.metadata.name,
          uid: current.metadata.uid,
          creationTimestamp: current.metadata.creationTimestamp,
          generation,
          resourceVersion: current.metadata.resourceVersion,
        };
      if (generation === undefined && Object.hasOwn(meta, "generation")) delete meta.generation;
      if (current.metadata.namespace !== undefined) meta.namespace = current.metadata.namespace;
      else delete meta.namespace;
      if (current.metadata.deletionTimestamp) {
        meta.deletionTimestamp = current.metadata.deletionTimestamp;
        meta.deletionGracePeriodSeconds = current.metadata.deletionGracePeriodSeconds ?? 0;
      } else {
        delete meta.deletionTimestamp;
        delete meta.deletionGracePeriodSeconds;
      }
      if (!keepManagedFields) {
        if (current.metadata.managedFields) meta.managedFields = current.metadata.managedFields;
        else delete meta.managedFields;
        if (incoming.managedFields !== undefined && Array.isArray(incoming.managedFields)) {
          meta.managedFields = incoming.managedFields.length ? incoming.managedFields : undefined;
          if (!meta.managedFields) delete meta.managedFields;
        }
      }
      draft = { ...obj, apiVersion: apiVersionOf(def), kind: def.kind, metadata: meta };
      if (def.statusSubresource) {
        if (current.status === undefined) delete draft.status;
        else draft.status = current.status;
      }
    }
    draft.apiVersion = apiVersionOf(def);
    draft.kind = def.kind;
    const warnings: string[] = [];
    if (options.admission?.mutate) draft = options.admission.mutate(draft, current);
    draft = this.#admit(def, draft, current, options, warnings);
    if (current.metadata.deletionTimestamp) {
      const before = new Set(current.metadata.finalizers ?? []);
      const added = (draft.metadata.finalizers ?? []).filter((f) => !before.has(f));
      if (added.length) {
        throw ApiError.invalid(def.kind, def.group, current.metadata.name!, [{
          reason: "FieldValueForbidden",
          message:
            "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers " +
            JSON.stringify(added),
          field: "metadata.finalizers",
        }]);
      }
    }
    if (keepsGeneration(def) && changedBeyondMetadata(current, draft, def)) {
      draft.metadata.generation = (current.metadata.generation ?? 1) + 1;
    }
    draft = this.#onUpdate(def, draft, current);
    if (options.admission?.validate) draft = options.admission.validate(draft, current);
    const comparable = {
      ...draft,
      metadata: { ...draft.metadata, resourceVersion: current.metadata.resourceVersion },
    };
    if (deepEqual(comparable, current) && !options.conversion?.outdated?.(current)) {
      return { object: current, warnings, created: false };
    }
    if (options.conversion) draft = options.conversion.encode(draft);
    if (options.dryRun) return { object: draft, warnings, created: false };
    const key = storageKey(def);
    if (
      draft.metadata.deletionTimestamp && (draft.metadata.finalizers ?? []).length === 0 &&
      !(key === "namespaces" &&
        ((draft.spec as { finalizers?: string[] })?.finalizers ?? []).length)
    ) {
      // The last finalizer is gone: the object goes.
      if (!draft.metadata.finalizers?.length) delete draft.metadata.finalizers;
      return { object: this.#remove(def, draft), warnings, created: false };
    }
    const stored = this.store.commit("MODIFIED", key, draft);
    this.#afterWrite(def, stored);
    return { object: stored, warnings, created: false };
  }

  /** Validation and schema handling shared by all writes. */
  #admit(
    def: ResourceDef,
    draft: KObject,
    current: KObject | undefined,
    options: WriteOptions,
    warnings: string[],
  ): KObject {
    const meta = draft.metadata;
    const name = meta.name ?? "";
    const causes: StatusCause[] = [];
    if (!current) {
      const label = def.plural === "namespaces";
      // RBAC names need only be path segments (`system:discovery`), as kube-apiserver validates.
      const pathSegment = def.group === "rbac.authorization.k8s.io";
      causes.push(
        ...validateName(name, { field: "metadata.name", dns1123Label: label, pathSegment }),
      );
    }
    if (meta.labels !== undefined) {
      // Empty maps are omitted, as Go's omitempty does on a real server.
      if (meta.labels === null || !Object.keys(meta.labels).length) delete meta.labels;
      else causes.push(...validateLabels(meta.labels));
    }
    if (meta.annotations !== undefined) {
      // Empty maps are omitted, as Go's omitempty does on a real server.
      const empty = meta.annotations === null || !Object.keys(meta.annotations).length;
      if (empty) delete meta.annotations;
      else causes.push(...validateAnnotations(meta.annotations));
    }
    if (meta.finalizers !== undefined) {
      if (
        meta.finalizers === null || (Array.isArray(meta.finalizers) && meta.finalizers.length === 0)
      ) {
        delete meta.finalizers;
      } else causes.push(...validateFinalizers(meta.finalizers));
    }
    if (meta.generateName !== undefined && typeof meta.generateName !== "string") {
      causes.push(typeCause("metadata.generateName", meta.generateName, "string"));
      delete meta.generateName;
    }
    if (
      meta.ownerReferences !== undefined && meta.ownerReferences !== null &&
      !Array.isArray(meta.ownerReferences)
    ) {
      causes.push(typeCause("metadata.ownerReferences", meta.ownerReferences, "array"));
      delete meta.ownerReferences;
    }
    if (meta.ownerReferences !== undefined) {
      if (meta.ownerReferences === null || meta.ownerReferences.length === 0) {
        delete meta.ownerReferences;
      } else {
        meta.ownerReferences.forEach((ref, i) => {
          for (const f of ["apiVersion", "kind", "name", "uid"] as const) {
            if (!ref?.[f]) {
              causes.push({
                reason: "FieldValueRequired",
                message: "Required value",
                field: `metadata.ownerReferences[${i}].${f}`,
              });
            }
          }
        });
      }
    }
    if (def.builtin && def.group === "") {
      causes.push(...checkConfigData(def.kind, draft as unknown as Record<string, unknown>));
    }
    let out = draft;
    const unknown = (pruned: string[]) => {
      const mode = options.fieldValidation ?? "Warn";
      if (mode === "Ignore" || (!pruned.length && !options.duplicates?.found.length)) return;
      const list = strictErrors(options.duplicates, pruned, def.builtin === true);
      if (mode === "Strict" && list.length) {
        throw ApiError.badRequest(
          `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: strict decoding error: ${
            list.join(", ")
          }`,
        );
      }
      warnings.push(...list);
    };
    if (def.builtin) {
      const known = pruneBuiltinFields(
        def.group,
        def.kind,
        out as unknown as Record<string, unknown>,
        current as unknown as Record<string, unknown> | undefined,
      );
      if (known?.pruned.length) out = known.value as unknown as KObject;
      unknown(known?.pruned ?? []);
    }
    if (def.builtin) {
      out = defaultedWorkload(def.group, def.kind, out, current, this.store);
      causes.push(
        ...builtinCauses(
          def.group,
          def.kind,
          out as unknown as Record<string, unknown>,
          current as unknown as Record<string, unknown> | undefined,
        ),
      );
    }
    if (def.schema) {
      const { value, pruned } = pruneUnknownFields(def.schema, out);
      if (pruned.length) out = value as KObject;
      unknown(pruned);
      out = applyDefaults(def.schema, out) as KObject;
      causes.push(...validateAgainstSchema(def.schema, out));
    }
    if (storageKey(def) === "customresourcedefinitions.apiextensions.k8s.io") {
      causes.push(...validateCrd(out, current));
    }
    if (this.rbacGuard && options.user && def.group === "rbac.authorization.k8s.io") {
      this.rbacGuard(def.plural, out, current, options.user); // 403 before 422, as kube does.
    }
    if (causes.length) throw ApiError.invalid(def.kind, def.group, name, causes);
    return out;
  }

  /** Per-kind defaults on create (namespaces, CRDs). */
  #onCreate(def: ResourceDef, draft: KObject): KObject {
    const key = storageKey(def);
    if (key === "secrets" && !draft.type) return { ...draft, type: "Opaque" };
    if (key === "pods") return createdPod(draft, this.now());
    if (def.builtin) draft = createdWorkload(def.group, def.kind, draft, this.now());
    if (key === "services") return defaultedService(draft, undefined, this.#services());
    if (key === "namespaces") {
      return {
        ...draft,
        spec: { finalizers: ["kubernetes"] },
        status: { phase: "Active" },
        metadata: {
          ...draft.metadata,
          labels: { ...draft.metadata.labels, "kubernetes.io/metadata.name": draft.metadata.name! },
        },
      };
    }
    if (key === "customresourcedefinitions.apiextensions.k8s.io") {
      const finalizers = [...(draft.metadata.finalizers ?? [])];
      if (!finalizers.includes(CRD_CLEANUP_FINALIZER)) finalizers.push(CRD_CLEANUP_FINALIZER);
      return {
        ...draft,
        metadata: { ...draft.metadata, finalizers },
        status: crdStatus(draft, this.now(), undefined, true, this.store.list(CRDS)),
      };
    }
    return draft;
  }

  #onUpdate(def: ResourceDef, draft: KObject, current: KObject): KObject {
    const key = storageKey(def);
    if (key === "services") return defaultedService(draft, current, this.#services(current));
    if (key === "pods") return updatedPod(draft, current);
    if (key === "namespaces") {
      const labels = {
        ...draft.metadata.labels,
        "kubernetes.io/metadata.name": draft.metadata.name!,
      };
      const out: KObject = { ...draft, metadata: { ...draft.metadata, labels } };
      if (current.metadata.deletionTimestamp) {
        out.status = { ...(out.status as object), phase: "Terminating" };
      }
      return out;
    }
    if (
      key === "customresourcedefinitions.apiextensions.k8s.io" &&
      !current.metadata.deletionTimestamp
    ) {
      // A status write brings its own storedVersions (the step that ends a storage migration).
      // (A spec write keeps the stored status: the status subresource changed it if it differs.)
      const statusWrite = !deepEqual(draft.status, current.status);
      const previous = draft.status ?? current.status;
      const others = this.store.list(CRDS);
      const status = crdStatus(draft, this.now(), previous, !statusWrite, others);
      const causes = validateStoredVersions(draft, status.storedVersions as string[]);
      if (causes.length) {
        throw ApiError.invalid(def.kind, def.group, draft.metadata.name!, causes);
      }
      return { ...draft, status };
    }
    return draft;
  }

  /** The cluster IPs and node ports the stored services hold (but `except`). */
  #services(except?: KObject): { taken: () => { ips: Set<string>; nodePorts: Set<number> } } {
    return {
      taken: () => {
        const ips = new Set<string>();
        const nodePorts = new Set<number>();
        for (const svc of this.store.list("services")) {
          if (except && svc.metadata.uid === except.metadata.uid) continue;
          const spec = (svc.spec ?? {}) as {
            clusterIPs?: unknown;
            clusterIP?: unknown;
            ports?: Array<{ nodePort?: unknown }>;
          };
          const list = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [spec.clusterIP];
          for (const ip of list) if (typeof ip === "string" && ip !== "None") ips.add(ip);
          for (const p of Array.isArray(spec.ports) ? spec.ports : []) {
            if (typeof p?.nodePort === "number") nodePorts.add(p.nodePort);
          }
        }
        return { ips, nodePorts };
      },
    };
  }

  /** After a CRD is stored: serve its resources (synchronously, before anyone hears of it). */
  #afterWrite(def: ResourceDef, stored: KObject): void {
    if (
      storageKey(def) === "customresourcedefinitions.apiextensions.k8s.io" &&
      !stored.metadata.deletionTimestamp
    ) {
      this.registry.applyCrd(stored);
    }
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
    this.#replace(def, current, change(current), {}, undefined);
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

/** Optimistic concurrency: a request carrying a resourceVersion must carry the current one. */
function requireSameVersion(def: ResourceDef, current: KObject, obj: KObject): void {
  const rv = obj.metadata?.resourceVersion;
  if (rv && rv !== current.metadata.resourceVersion) {
    throw ApiError.conflict(
      def.plural,
      def.group,
      current.metadata.name!,
      "the object has been modified; please apply your changes to the latest version and try again",
    );
  }
}

function asObject(body: unknown, def: ResourceDef): KObject {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw ApiError.badRequest(`the body of the request must be a JSON object (a ${def.kind})`);
  }
  const obj = body as KObject;
  if (obj.metadata !== undefined && (typeof obj.metadata !== "object" || obj.metadata === null)) {
    throw ApiError.badRequest("metadata must be an object");
  }
  if (obj.kind !== undefined && obj.kind !== def.kind && obj.kind !== "") {
    throw ApiError.badRequest(
      `the kind of the body (${obj.kind}) does not match the resource (${def.kind}); send it to the ${obj.kind}'s endpoint`,
    );
  }
  return obj.metadata ? obj : { ...obj, metadata: {} };
}

function randomSuffix(): string {
  let s = "";
  const bytes = crypto.getRandomValues(new Uint8Array(5));
  for (const b of bytes) s += NAME_CHARS[b % NAME_CHARS.length];
  return s;
}

/** Whether anything but metadata (and status, where it is a subresource) changed. */
function changedBeyondMetadata(current: KObject, draft: KObject, def: ResourceDef): boolean {
  const skipStatus = def.statusSubresource || def.builtin;
  const keys = new Set([...Object.keys(current), ...Object.keys(draft)]);
  for (const k of keys) {
    if (k === "metadata" || k === "apiVersion" || k === "kind") continue;
    if (k === "status" && skipStatus) continue;
    if (!deepEqual(current[k], draft[k])) return true;
  }
  return false;
}

function withCondition(
  status: unknown,
  cond: { type: string; status: string; reason: string; message: string },
  now: string,
): Record<string, unknown> {
  const s = { ...(status as Record<string, unknown> ?? {}) };
  const conditions = ((s.conditions as Array<Record<string, unknown>>) ?? []).filter((c) =>
    c.type !== cond.type
  );
  conditions.push({ ...cond, lastTransitionTime: now });
  s.conditions = conditions;
  return s;
}

function crdStatus(
  crd: KObject,
  now: string,
  previous?: unknown,
  addStorage = true,
  others: Iterable<KObject> = [],
): Record<string, unknown> {
  const spec = (crd.spec ?? {}) as {
    names?: Record<string, unknown>;
    versions?: Array<{ name?: string; storage?: boolean }>;
  };
  const names = { ...spec.names };
  if (!names.singular && typeof names.kind === "string") names.singular = names.kind.toLowerCase();
  if (!names.listKind && typeof names.kind === "string") names.listKind = `${names.kind}List`;
  const prevStored = ((previous as { storedVersions?: string[] })?.storedVersions) ?? [];
  const storage = spec.versions?.find((v) => v.storage)?.name;
  const storedVersions = [...new Set([...prevStored, ...(storage && addStorage ? [storage] : [])])];
  const prevConds = ((previous as {
    conditions?: Array<{ type: string; status?: string; lastTransitionTime?: string }>;
  })
    ?.conditions) ?? [];
  const prev = (type: string) => prevConds.find((c) => c.type === type);
  const since = (type: string, status: string) =>
    prev(type)?.status === status ? prev(type)?.lastTransitionTime ?? now : now;
  // The naming controller's verdict (crd_names.ts); an established CRD stays established.
  const verdict = acceptNames({ ...crd, status: previous }, names as CrdNames, others);
  const established = verdict.status === "True" || prev("Established")?.status === "True"
    ? {
      status: "True",
      reason: "InitialNamesAccepted",
      message: "the initial names have been accepted",
    }
    : { status: "False", reason: "NotAccepted", message: "not all names are accepted" };
  return {
    conditions: [
      {
        type: "NamesAccepted",
        status: verdict.status,
        reason: verdict.reason,
        message: verdict.message,
        lastTransitionTime: since("NamesAccepted", verdict.status),
      },
      {
        type: "Established",
        ...established,
        lastTransitionTime: since("Established", established.status),
      },
    ],
    acceptedNames: verdict.acceptedNames,
    storedVersions,
  };
}

/**
 * kube-apiserver's check of `status.storedVersions` on every update of a CRD: the storage
 * version is among them, and each of them is still in `spec.versions` (a version whose objects
 * may still be stored cannot be dropped before they are migrated).
 */
function validateStoredVersions(crd: KObject, stored: string[]): StatusCause[] {
  const field = "status.storedVersions";
  if (!stored.length) {
    return [{
      reason: "FieldValueInvalid",
      message: "Invalid value: []: must have at least one stored version",
      field,
    }];
  }
  const versions = ((crd.spec as { versions?: Array<{ name?: string; storage?: boolean }> })
    ?.versions) ?? [];
  const causes: StatusCause[] = [];
  const storage = versions.find((v) => v.storage)?.name;
  if (storage !== undefined && !stored.includes(storage)) {
    causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid value: ${JSON.stringify(stored)}: must have the storage version ${storage}`,
      field,
    });
  }
  stored.forEach((v, i) => {
    if (!versions.some((sv) => sv.name === v)) {
      causes.push({
        reason: "FieldValueInvalid",
        message: `Invalid value: ${JSON.stringify(v)}: must appear in spec.versions`,
        field: `${field}[${i}]`,
      });
    }
  });
  return causes;
}

function validateCrd(crd: KObject, current: KObject | undefined): StatusCause[] {
  // kube-apiserver decodes a CRD into Go structs first: a keyword of the wrong JSON type is a 400.
  const undecodable = crdDecodeError(crd.spec);
  if (undecodable) throw ApiError.badRequest(undecodable);
  const causes: StatusCause[] = [];
  const spec = (crd.spec ?? {}) as {
    group?: string;
    scope?: string;
    names?: { plural?: string; kind?: string };
    versions?: Array<
      { name?: string; served?: boolean; storage?: boolean; schema?: { openAPIV3Schema?: unknown } }
    >;
  };
  const req = (field: string) =>
    causes.push({ reason: "FieldValueRequired", message: "Required value", field });
  if (!spec.group) req("spec.group");
  if (!spec.names?.plural) req("spec.names.plural");
  if (!spec.names?.kind) req("spec.names.kind");
  if (spec.scope !== "Namespaced" && spec.scope !== "Cluster") {
    causes.push({
      reason: "FieldValueNotSupported",
      message: `Unsupported value: ${
        JSON.stringify(spec.scope ?? "")
      }: supported values: "Cluster", "Namespaced"`,
      field: "spec.scope",
    });
  }
  if (
    spec.group && spec.names?.plural && crd.metadata.name !== `${spec.names.plural}.${spec.group}`
  ) {
    causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid value: ${
        JSON.stringify(crd.metadata.name)
      }: must be spec.names.plural+"."+spec.group`,
      field: "metadata.name",
    });
  }
  const versions = spec.versions ?? [];
  if (!versions.length) {
    causes.push({
      reason: "FieldValueInvalid",
      message: "Invalid value: must have exactly one version marked as storage version",
      field: "spec.versions",
    });
  } else if (versions.filter((v) => v.storage).length !== 1) {
    causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid value: ${
        JSON.stringify(versions)
      }: must have exactly one version marked as storage version`,
      field: "spec.versions",
    });
  }
  causes.push(...validateCrdSchemas(versions));
  causes.push(
    ...validateCrdConversion((crd.spec as { conversion?: unknown } | undefined)?.conversion),
  );
  if (current) {
    const old = (current.spec ?? {}) as typeof spec;
    if (old.group !== spec.group) {
      causes.push({
        reason: "FieldValueInvalid",
        message: "Invalid value: field is immutable",
        field: "spec.group",
      });
    }
    if (old.scope !== spec.scope) {
      causes.push({
        reason: "FieldValueInvalid",
        message: "Invalid value: field is immutable",
        field: "spec.scope",
      });
    }
  }
  return causes;
}

/** A 422 cause for a metadata field of the wrong JSON type, worded as the other type checks. */
function typeCause(field: string, value: unknown, expected: string): StatusCause {
  const actual = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
  return {
    reason: "FieldValueTypeInvalid",
    message: `Invalid value: "${actual}": ${field} must be of type ${expected}`,
    field,
  };
}

/**
 * The 409 of an apply that conflicts, worded as kube-apiserver's field manager words it
 * (`NewConflictError`): one conflict in one line, several grouped by manager (sorted), one
 * `FieldManagerConflict` cause per field.
 */
function applyConflict(conflicts: ApplyConflict[]): ApiError {
  const who = (manager: string) => JSON.stringify(manager);
  let message: string;
  if (conflicts.length === 1) {
    const [c] = conflicts as [ApplyConflict];
    message = `Apply failed with 1 conflict: conflict with ${who(c.manager)}: ${c.path}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      byManager.set(c.manager, [...byManager.get(c.manager) ?? [], c.path]);
    }
    const lines: string[] = [];
    for (const manager of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${who(manager)}:`);
      for (const path of byManager.get(manager)!) lines.push(`- ${path}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`;
  }
  return new ApiError(409, "Conflict", message, {
    causes: conflicts.map((c) => ({
      reason: "FieldManagerConflict",
      message: `conflict with ${who(c.manager)}`,
      field: c.path,
    })),
  });
}
