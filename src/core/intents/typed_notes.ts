/**
 * What a registry knows of typed resources: the ones its handlers were
 * registered on (for `kopf crd`), and the one version at which the handlers
 * that keep state on objects run. Apart from the typing helpers
 * (`typing.ts`), which are types only, so that registration can note a
 * resource without importing every kind's option types.
 *
 * @module
 */

import type { TypedResource, VersionedResource } from "../../cogs/structs/typed_resources.ts";
import type { OperatorRegistry } from "./registry.ts";

/** A typed resource of `kopf crd`: one version alone, or a resource with several versions. */
export type TypedDefinition = TypedResource<unknown, unknown> | VersionedResource;

const noted = new WeakMap<OperatorRegistry, Set<TypedDefinition>>();

/**
 * The kinds of handlers that keep state on the object: the finalizer, the last-handled
 * configuration (the diff-base), progress. Objects carry one of each, whatever the version
 * they are read at.
 */
const STATEFUL = new Set(["create", "update", "delete", "resume", "field", "daemon", "timer"]);
/** Per registry: the version the stateful handlers of each resource with versions are at. */
const statefulAt = new WeakMap<OperatorRegistry, Map<VersionedResource, string>>();

/**
 * Notes that a registry has handlers (or converters) of a typed resource (for `kopf crd`), and
 * checks that the handlers keeping state on objects are all at one version of a resource.
 *
 * Why one version: an object has one finalizer, one last-handled configuration and one set of
 * progress records. Processed at two versions, each version's processing would see the other's
 * essence as a change (an endless round of updates) or drop a finalizer the other needs.
 * Events, indices, admission and reconcilers keep no such state and may use any version.
 *
 * @param registry The registry.
 * @param resource The typed resource: one version, or a resource with several versions.
 * @param kind The kind of the handler registered on it, if a handler.
 * @returns Why the registration is refused (one line), or undefined when it is fine.
 */
export function noteTypedResource(
  registry: OperatorRegistry,
  resource: TypedDefinition,
  kind?: string,
): string | undefined {
  if (kind !== undefined && STATEFUL.has(kind) && !("versions" in resource)) {
    const family = resource.versionOf;
    if (family) {
      const at = statefulAt.get(registry) ?? new Map<VersionedResource, string>();
      statefulAt.set(registry, at);
      const other = at.get(family);
      if (other !== undefined && other !== resource.version) {
        return `${family.plural}.${family.group} has handlers keeping state on its objects ` +
          `(create/update/delete/resume/field, daemons, timers) at ${other} already: register ` +
          `them all at one version (objects have one finalizer and one last-handled state; ` +
          `at two versions, each would take the other's state for a change)`;
      }
      at.set(family, resource.version);
    }
  }
  const set = noted.get(registry) ?? new Set();
  set.add(resource);
  noted.set(registry, set);
  return undefined;
}

/**
 * The typed resources that a registry's handlers were registered on, in registration order:
 * each version used (`Evc.v1`), and every version of a resource with several versions that
 * converters were registered on (`kopf.on.convert(Evc, …)`); each once.
 * `TypedResource.versionOf` tells the resource with several versions a version belongs to.
 *
 * @param registry The registry.
 * @returns The typed resources (of one version each).
 */
export function typedResourcesOf(registry: OperatorRegistry): TypedResource<unknown, unknown>[] {
  const found = new Set<TypedResource<unknown, unknown>>();
  for (const r of noted.get(registry) ?? []) {
    if ("versions" in r) { for (const v of r.versions) found.add(v); }
    else found.add(r);
  }
  return [...found];
}
