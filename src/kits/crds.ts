/**
 * `kopf.crds()`: the CustomResourceDefinitions of the typed resources
 * (`kopf.resource`) that a registry's handlers are registered on, as objects.
 * One definition in the code is then the only place a CRD's schema is
 * written: the CRD cannot drift from the types the handlers were checked
 * against.
 *
 * Why apart from `kopf crd` (src/cli/crd.ts), which prints them as YAML: the
 * objects are all an operator that applies its own CRDs needs, and `mod.ts`
 * must not load a YAML printer (or the command line) for them.
 *
 * @module
 */

import type { TypedResource, VersionedResource } from "../cogs/structs/typed_resources.ts";
import { getDefaultRegistry } from "../core/intents/registration.ts";
import type { OperatorRegistry } from "../core/intents/registry.ts";
import { typedResourcesOf } from "../core/intents/typing.ts";

/** One CRD's resource: a typed resource alone, or a resource with several versions. */
export type CrdDefinition = TypedResource<unknown, unknown> | VersionedResource;

/**
 * The CRDs' definitions of a registry, once each (a version stands for its resource).
 *
 * @param registry The registry.
 * @returns The definitions, in registration order.
 * @throws {TypeError} When two different definitions are of one CRD.
 */
export function crdDefinitionsOf(registry: OperatorRegistry): CrdDefinition[] {
  const found: CrdDefinition[] = [];
  for (const r of typedResourcesOf(registry)) {
    const definition = r.versionOf ?? r;
    if (found.includes(definition)) continue;
    const name = `${definition.plural}.${definition.group}`;
    if (found.some((d) => `${d.plural}.${d.group}` === name)) {
      throw new TypeError(
        `two kopf.resource() definitions of the CRD ${name}: define all its versions in one, ` +
          `kopf.resource({ versions: { v1: {...}, v2: {...} }, storage })`,
      );
    }
    found.push(definition);
  }
  return found;
}

/**
 * The CRDs of the typed resources that a registry's handlers are registered on.
 *
 * @param registry The registry (default: the default registry).
 * @returns One CRD object per typed resource, in registration order (a resource with several
 *   versions once, with all its versions).
 * @throws {TypeError} When two different definitions are of one CRD.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * const Evc = kopf.resource({
 *   group: "kopf.dev", version: "v1", kind: "EphemeralVolumeClaim",
 *   plural: "ephemeralvolumeclaims", scope: "Namespaced",
 *   spec: kopf.Type.Object({ size: kopf.Type.String() }),
 * });
 * kopf.on.create(Evc, { registry }, ({ spec }) => ({ size: spec.size }));
 * assert.deepEqual(kopf.crds(registry).map((crd) => (crd.metadata as { name: string }).name), ["ephemeralvolumeclaims.kopf.dev"]);
 * ```
 */
export function crds(registry: OperatorRegistry = getDefaultRegistry()): Record<string, unknown>[] {
  return crdDefinitionsOf(registry).map((d) => d.crd());
}
