/**
 * A CustomResourceDefinition's own strategy: its status (names accepted or
 * not, established, stored versions, terminating), the check of its stored
 * versions, and the validation of its spec (schemas, names, conversion,
 * versions), as apiextensions-apiserver runs them on create and update.
 *
 * @module
 */

import { validateCrdSchemas } from "../schemas/crd_schema.ts";
import { crdDecodeError } from "../schemas/crd_validation.ts";
import { acceptNames, type CrdNames } from "../schemas/crd_names.ts";
import { validateCrdConversion } from "../schemas/crd_conversion.ts";
import { ApiError, type StatusCause } from "../shared/errors.ts";
import type { KObject } from "../shared/types.ts";

export function withCondition(
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

export function crdStatus(
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
export function validateStoredVersions(crd: KObject, stored: string[]): StatusCause[] {
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

export function validateCrd(crd: KObject, current: KObject | undefined): StatusCause[] {
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
