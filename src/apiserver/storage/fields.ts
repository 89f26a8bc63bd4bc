/**
 * The fields a field selector may name, per resource, as kube-apiserver
 * supports them: `metadata.name` and `metadata.namespace` everywhere, plus the
 * well-known pod, event, secret, namespace, node and job fields. Anything else
 * is a 400 "field label not supported", as on a real cluster.
 *
 * @module
 */

import type { FieldRequirement } from "../../cogs/structs/field_selector.ts";
import { ApiError } from "../shared/errors.ts";
import type { ResourceDef } from "../shared/resources.ts";
import type { KObject } from "../shared/types.ts";

type Getter = (o: KObject) => unknown;

const at = (...path: string[]): Getter => (o) => {
  let cur: unknown = o;
  for (const p of path) {
    cur = cur && typeof cur === "object" ? (cur as Record<string, unknown>)[p] : undefined;
  }
  return cur;
};

const EXTRA: Record<string, Record<string, Getter>> = {
  pods: {
    "spec.nodeName": at("spec", "nodeName"),
    "spec.restartPolicy": at("spec", "restartPolicy"),
    "spec.schedulerName": at("spec", "schedulerName"),
    "spec.serviceAccountName": at("spec", "serviceAccountName"),
    "spec.hostNetwork": (o) => String(at("spec", "hostNetwork")(o) ?? false),
    "status.phase": at("status", "phase"),
    "status.podIP": at("status", "podIP"),
    "status.nominatedNodeName": at("status", "nominatedNodeName"),
  },
  events: {
    "involvedObject.kind": at("involvedObject", "kind"),
    "involvedObject.namespace": at("involvedObject", "namespace"),
    "involvedObject.name": at("involvedObject", "name"),
    "involvedObject.uid": at("involvedObject", "uid"),
    "involvedObject.apiVersion": at("involvedObject", "apiVersion"),
    "involvedObject.resourceVersion": at("involvedObject", "resourceVersion"),
    "involvedObject.fieldPath": at("involvedObject", "fieldPath"),
    "reason": at("reason"),
    "reportingComponent": at("reportingComponent"),
    "source": at("source", "component"),
    "type": at("type"),
  },
  secrets: { "type": at("type") },
  namespaces: { "status.phase": at("status", "phase") },
  nodes: { "spec.unschedulable": (o) => String(at("spec", "unschedulable")(o) ?? false) },
  jobs: { "status.successful": (o) => String(at("status", "successful")(o) ?? 0) },
};

/**
 * Returns a getter of selectable field values for a resource, checking the
 * requested fields first.
 *
 * @param def The resource.
 * @param requirements The parsed field selector.
 * @returns A function that reads a field of an object as a string.
 * @throws {ApiError} 400 for a field the resource does not support.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fieldGetter } from "./fields.ts";
 * import { ResourceRegistry } from "../objects/registry.ts";
 * const pods = new ResourceRegistry().find("", "v1", "pods")!;
 * const get = fieldGetter(pods, [{ field: "status.phase", operator: "=", value: "Running" }]);
 * assert.deepEqual(get({ metadata: {}, status: { phase: "Running" } }, "status.phase"), "Running");
 * ```
 */
export function fieldGetter(
  def: ResourceDef,
  requirements: FieldRequirement[],
): (obj: KObject, field: string) => string | undefined {
  const extra =
    (def.builtin && (def.group === "" || def.group === "events.k8s.io" || def.group === "batch"))
      ? EXTRA[def.plural] ?? {}
      : {};
  for (const r of requirements) {
    if (r.field === "metadata.name" || r.field === "metadata.namespace" || r.field in extra) {
      continue;
    }
    throw ApiError.badRequest(`field label not supported: ${r.field}`);
  }
  return (obj, field) => {
    if (field === "metadata.name") return obj.metadata.name;
    if (field === "metadata.namespace") return obj.metadata.namespace ?? "";
    const v = extra[field]?.(obj);
    return v === undefined || v === null ? undefined : String(v);
  };
}
