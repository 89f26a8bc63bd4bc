/**
 * The checks every write shares, as kube-apiserver's strategies run them
 * before storage: the body is an object of the resource's kind; names,
 * labels, annotations, finalizers and owner references are valid; built-in
 * fields are pruned and the built-in kinds defaulted and validated; a CRD's
 * schema prunes, defaults and validates; a CRD itself is checked; RBAC's
 * escalation guard judges roles and bindings. Unknown fields warn or fail by
 * `fieldValidation`.
 *
 * @module
 */

import { ApiError, type StatusCause } from "../shared/errors.ts";
import { type ResourceDef, storageKey } from "../shared/resources.ts";
import type { KObject } from "../shared/types.ts";
import type { WriteOptions, Writer } from "./write_types.ts";

import { checkConfigData } from "../builtins/config_data.ts";
import {
  validateAnnotations,
  validateFinalizers,
  validateLabels,
  validateName,
} from "../schemas/metadata_validation.ts";
import { pruneBuiltinFields } from "../builtins/builtin_fields.ts";
import { strictErrors } from "../wire/json_duplicates.ts";
import { builtinCauses } from "../builtins/workload_validation.ts";
import { kindCauses } from "../builtins/kind_validation.ts";
import { admitPriorityClass } from "../builtins/priority_admission.ts";
import { applyDefaults, pruneUnknownFields, validateAgainstSchema } from "../schemas/schema.ts";
import { defaultedWorkload } from "../builtins/workload_defaults.ts";
import { oneWrite } from "../builtins/pod_spec_memo.ts";
import { validateCrd } from "./crd_strategy.ts";

export function asObject(body: unknown, def: ResourceDef): KObject {
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

/** The stored object of a URL, or 404. */
export function getObject(w: Writer, def: ResourceDef, namespace: string, name: string): KObject {
  const obj = w.store.get(storageKey(def), def.namespaced ? namespace : "", name);
  if (!obj) throw ApiError.notFound(def.plural, def.group, name);
  return obj;
}

/** Validation and schema handling shared by all writes. */
export function admitObject(
  w: Writer,
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
    if (mode === "Ignore") return;
    if (!pruned.length && !options.duplicates?.found.length && !options.duplicates?.yaml?.length) {
      return;
    }
    const list = strictErrors(
      options.duplicates,
      pruned,
      def.builtin === true,
      mode === "Strict",
    );
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
    // One write's built-in steps: they find its pod spec's text once (pod_spec_memo.ts).
    out = oneWrite(() => {
      let value = out;
      const known = pruneBuiltinFields(
        def.group,
        def.kind,
        value as unknown as Record<string, unknown>,
        current as unknown as Record<string, unknown> | undefined,
      );
      if (known?.pruned.length) value = known.value as unknown as KObject;
      unknown(known?.pruned ?? []);
      value = defaultedWorkload(def.group, def.kind, value, current, w.store);
      for (
        const c of builtinCauses(
          def.group,
          def.kind,
          value as unknown as Record<string, unknown>,
          current as unknown as Record<string, unknown> | undefined,
        )
      ) causes.push(c);
      for (const c of kindCauses(def.group, def.kind, value as never, current as never)) {
        causes.push(c);
      }
      return value;
    });
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
  if (w.rbacGuard && options.user && def.group === "rbac.authorization.k8s.io") {
    w.rbacGuard(def.plural, out, current, options.user); // 403 before 422, as kube does.
  }
  if (causes.length) throw ApiError.invalid(def.kind, def.group, name, causes);
  // The Priority admission plugin validates after the kind's own checks (403 after 422).
  if (def.builtin && def.group === "scheduling.k8s.io" && def.kind === "PriorityClass") {
    admitPriorityClass(out, !current, w.store.list(storageKey(def)));
  }
  return out;
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
