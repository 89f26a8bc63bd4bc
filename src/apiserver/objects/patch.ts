/**
 * The patch verb: a JSON merge patch, a JSON patch, a strategic merge patch
 * (built-in kinds only) or server-side apply (which may create), applied to
 * the stored object and written through update's shared tail.
 *
 * @module
 */

import { applyJsonPatch, JsonPatchError } from "../../cogs/structs/json_patch.ts";
import { applyMergePatch } from "../../cogs/structs/merge_patch.ts";
import { ApiError } from "../shared/errors.ts";
import { type ResourceDef, storageKey } from "../shared/resources.ts";
import type { PatchType, WriteOptions, Writer, WriteResult } from "./write_types.ts";
import { applyStrategicMergePatch, StrategicMergeError } from "./strategic_merge.ts";
import { applyConfiguration, type ApplyConflict } from "./apply.ts";
import { asObject } from "./admit.ts";
import { replaceObject, requireSameVersion } from "./update.ts";

/** Patches an object or its status (see `Objects.patch`). */
export function patchObject(
  w: Writer,
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
  let current = w.store.get(storageKey(def), def.namespaced ? namespace : "", name);
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
        w.now(),
        options.force,
      );
      return w.create(def, namespace, first.object, options);
    }
    const next = applyConfiguration(current, applied, manager, def, w.now(), options.force);
    if (next.conflicts.length) {
      throw applyConflict(next.conflicts);
    }
    return replaceObject(w, def, current, next.object, options, subresource, true);
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
  return replaceObject(w, def, current, obj, options, subresource);
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
