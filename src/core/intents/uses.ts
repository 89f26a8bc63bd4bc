/**
 * `kopf.uses(resource, verbs)`: what an operator's own code does through its
 * API client (`api`, `kopf.api()`), declared where the operator is defined, so
 * that `kopf rbac` can grant it. The framework's own requests (watching,
 * patching the handled objects, events, peering, leases, webhook
 * configurations) are derived from the handlers and settings; what a handler
 * creates, patches or deletes on other resources cannot be, and is declared.
 *
 * Why at the registry and not as a handler option: the client is reachable
 * from anywhere inside the operator (a startup handler's background task, a
 * helper module that calls `kopf.api()`), and a permission belongs to the
 * operator's account, not to one handler — two handlers that create the same
 * children need one rule. A declaration next to the handlers keeps the rule
 * in the code that needs it, and it is the same call for typed and untyped
 * resources, so the handlers' typed overloads are left alone.
 *
 * @module
 */

import { Selector } from "../../cogs/structs/selector.ts";
import type { SelectorSpec } from "../../cogs/structs/selector_specs.ts";
import { TypedResource } from "../../cogs/structs/typed_resources.ts";
import { getDefaultRegistry, RegistrationError } from "./registration.ts";
import type { OperatorRegistry } from "./registry.ts";

/** A Kubernetes API verb, as RBAC rules name them. */
export type KubeVerb =
  | "get"
  | "list"
  | "watch"
  | "create"
  | "update"
  | "patch"
  | "delete"
  | "deletecollection";

/**
 * What the operator's code does with a resource: a Kubernetes verb, or a method of the API
 * client that stands for the verbs it needs — `replace` (update), `apply` (server-side apply:
 * patch, and create for an object that does not exist yet), `watch` (the client lists first:
 * list and watch).
 */
export type ApiVerb = KubeVerb | "replace" | "apply";

/** The Kubernetes verbs of each {@link ApiVerb}. */
const VERBS: Readonly<Record<ApiVerb, readonly KubeVerb[]>> = {
  get: ["get"],
  list: ["list"],
  watch: ["list", "watch"],
  create: ["create"],
  update: ["update"],
  replace: ["update"],
  patch: ["patch"],
  apply: ["create", "patch"],
  delete: ["delete"],
  deletecollection: ["deletecollection"],
};

/** Options of {@link uses}. */
export interface UsesOptions {
  /** Declare in this registry instead of the default one. */
  registry?: OperatorRegistry;
  /** A subresource, e.g. `"status"` or `"scale"` (the verbs are granted on it only). */
  subresource?: string;
}

/** One declaration: the resource, the Kubernetes verbs, the subresource. */
export interface UsesDeclaration {
  /** The resource as declared (resolved later, as handlers' resources are). */
  readonly selector: Selector;
  /** The Kubernetes verbs. */
  readonly verbs: readonly KubeVerb[];
  /** The subresource, if any. */
  readonly subresource: string | undefined;
}

/** A resource as {@link uses} takes it: a name, a typed resource, or a resource object. */
export type UsesResource =
  | string
  | TypedResource<unknown, unknown>
  | { group?: string; version?: string; plural?: string; kind?: string };

const declared = new WeakMap<OperatorRegistry, UsesDeclaration[]>();

/**
 * Declares that the operator's code uses a resource through its API client (`api`,
 * `kopf.api()`) with these verbs: `kopf rbac` and `kopf manifests` grant them to the operator's
 * account (in the served namespaces for a namespaced resource, cluster-wide for a
 * cluster-scoped one). It changes nothing at run time.
 *
 * @param resource The resource, in any form handlers take: `"persistentvolumeclaims"`,
 *   `"deployments.apps"`, a typed resource, `{ group, plural }`.
 * @param verbs Kubernetes verbs or the client's methods (`replace`, `apply`, `watch`).
 * @param options The registry, a subresource.
 * @throws {RegistrationError} For an unknown verb or a resource that cannot be parsed.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.uses("persistentvolumeclaims", ["create", "patch"], { registry });
 * kopf.uses("configmaps", ["apply"], { registry }); // server-side apply: create and patch
 * kopf.on.create("kopfexamples", { registry }, async ({ api, body, namespace }) => {
 *   const pvc = { metadata: { name: "data" }, spec: {} };
 *   kopf.adopt(pvc, body);
 *   await api.create("persistentvolumeclaims", pvc, { namespace });
 * });
 * ```
 */
export function uses(
  resource: UsesResource,
  verbs: readonly ApiVerb[],
  options: UsesOptions = {},
): void {
  if (!Array.isArray(verbs) || !verbs.length) {
    throw new RegistrationError(
      'kopf.uses(resource, verbs): give the verbs as a list, e.g. ["create", "patch"]',
    );
  }
  const kube = new Set<KubeVerb>();
  for (const verb of verbs) {
    const mapped = Object.hasOwn(VERBS, verb) ? VERBS[verb as ApiVerb] : undefined;
    if (!mapped) {
      throw new RegistrationError(
        `kopf.uses(...): unknown verb ${JSON.stringify(verb)}: use ${
          Object.keys(VERBS).join(", ")
        }`,
      );
    }
    for (const v of mapped) kube.add(v);
  }
  const subresource = options.subresource;
  if (subresource !== undefined && !/^[a-z][a-z0-9-]*$/.test(subresource)) {
    throw new RegistrationError(
      `kopf.uses(...): the subresource ${JSON.stringify(subresource)} is not a name`,
    );
  }
  let selector: Selector;
  try {
    selector = resource instanceof TypedResource
      ? new Selector({ group: resource.group, version: resource.version, plural: resource.plural })
      : typeof resource === "string"
      ? new Selector(...([resource] as unknown as SelectorSpec))
      : new Selector(resource);
  } catch (e) {
    throw new RegistrationError(`kopf.uses(...): ${(e as Error).message}`);
  }
  const registry = options.registry ?? getDefaultRegistry();
  const list = declared.get(registry) ?? [];
  list.push(Object.freeze({ selector, verbs: [...kube], subresource }));
  declared.set(registry, list);
}

/**
 * The declarations of a registry, in the order they were made.
 *
 * @param registry The registry.
 * @returns The declarations.
 */
export function usesOf(registry: OperatorRegistry): readonly UsesDeclaration[] {
  return [...(declared.get(registry) ?? [])];
}
