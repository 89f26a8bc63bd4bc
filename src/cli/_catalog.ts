/**
 * The resources that `kopf rbac` and `kopf manifests` know without a cluster:
 * the typed resources the handlers are registered on (`kopf.resource`), the
 * built-in kinds (the embedded API server's table of them), and the CRDs of
 * YAML files given with `--crd`. A handler's resource is resolved against
 * them as discovery would resolve it (the same selectors, the same rules of
 * precedence); a name with its group that is none of them is taken as it is,
 * with its scope unknown.
 *
 * Why not ask a cluster: the manifests are made before there is one (in CI,
 * for an image), and the rules must not depend on which CRDs happen to be
 * installed where the command runs.
 *
 * @module
 */

import { loadAll } from "npm:js-yaml@^5";
import { builtinResources } from "../apiserver/builtins/builtins.ts";
import { Resource, type Selector } from "../cogs/structs/references.ts";
import type { OperatorRegistry } from "../core/intents/registry.ts";
import { typedResourcesOf } from "../core/intents/typing.ts";

/** A problem with the resources (one line; exit code 1). */
export class CatalogError extends Error {
  override name = "CatalogError";
}

/**
 * The resolution of selectors against what is known without a cluster.
 *
 * @param registry The registry (its typed resources).
 * @param crdFiles YAML files with CRDs (`--crd`).
 * @returns A function from a selector to the resources it stands for.
 * @throws {CatalogError} For a file that cannot be read or has no CRD.
 */
export async function resolver(
  registry: OperatorRegistry,
  crdFiles: string[],
): Promise<(selector: Selector) => Resource[]> {
  const known: Resource[] = [];
  for (const t of typedResourcesOf(registry)) {
    known.push(
      new Resource({
        group: t.group,
        version: t.version,
        plural: t.plural,
        kind: t.kind,
        singular: t.singular,
        shortcuts: t.shortNames,
        categories: t.categories,
        namespaced: t.scope === "Namespaced",
        subresources: t.statusSchema ? ["status"] : [],
      }),
    );
  }
  for (const path of crdFiles) known.push(...await crdResources(path));
  for (const def of builtinResources()) {
    if (!def.verbs.includes("list")) continue; // the review kinds: create-only, never watched
    known.push(
      new Resource({
        group: def.group,
        version: def.version,
        plural: def.plural,
        kind: def.kind,
        singular: def.singular,
        shortcuts: def.shortNames,
        categories: def.categories,
        namespaced: def.namespaced,
        subresources: def.statusSubresource ? ["status"] : [],
      }),
    );
  }
  return (selector) => {
    if (!selector.isSpecific) {
      throw new CatalogError(
        `${selector} stands for resources that only a cluster can list ` +
          "(EVERYTHING, a category, a filter): kopf rbac cannot grant them; name the resources",
      );
    }
    const found = selector.select(known);
    // One resource per group and plural: the versions of one resource are one RBAC resource.
    const unique = new Map<string, Resource>();
    for (const r of found) {
      if (!unique.has(`${r.plural}.${r.group}`)) unique.set(`${r.plural}.${r.group}`, r);
    }
    if (unique.size > 1) {
      throw new CatalogError(
        `${selector} is ambiguous: ${[...unique.keys()].join(", ")}; name it with its group`,
      );
    }
    if (unique.size === 1) return [...unique.values()];
    const plural = selector.plural ?? (typeof selector.any === "string" ? selector.any : undefined);
    if (selector.group !== undefined && plural && /^[a-z0-9][a-z0-9-]*$/.test(plural)) {
      // Taken as it is: the scope is unknown (fine with -A), the status subresource assumed.
      return [
        new Resource({
          group: selector.group,
          version: selector.version ?? "v1",
          plural,
          subresources: ["status"],
        }),
      ];
    }
    throw new CatalogError(
      `Cannot tell which resource ${selector} is without a cluster: give its CRD with ` +
        "--crd FILE, name it with its group (e.g. kopfexamples.kopf.dev), or define it with " +
        "kopf.resource()",
    );
  };
}

async function crdResources(path: string): Promise<Resource[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    throw new CatalogError(`Cannot read the CRD file ${path}: ${(e as Error).message}`);
  }
  let docs: unknown[];
  try {
    docs = loadAll(text);
  } catch (e) {
    const reason = (e as Error).message.split("\n")[0];
    throw new CatalogError(`The CRD file ${path} is not valid YAML: ${reason}`);
  }
  const out: Resource[] = [];
  for (const doc of docs) {
    // deno-lint-ignore no-explicit-any
    const crd = doc as any;
    if (crd?.kind !== "CustomResourceDefinition") continue;
    const spec = crd.spec ?? {};
    const names = spec.names ?? {};
    for (const v of spec.versions ?? []) {
      if (v?.served === false) continue;
      out.push(
        new Resource({
          group: spec.group,
          version: v.name,
          plural: names.plural,
          kind: names.kind,
          singular: names.singular,
          shortcuts: names.shortNames ?? [],
          categories: names.categories ?? [],
          namespaced: spec.scope !== "Cluster",
          subresources: v.subresources?.status ? ["status"] : [],
        }),
      );
    }
  }
  if (!out.length) throw new CatalogError(`The file ${path} has no CustomResourceDefinition`);
  return out;
}
