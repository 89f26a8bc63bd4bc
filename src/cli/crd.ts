/**
 * `kopf crd handlers.ts`: prints the CustomResourceDefinitions of the typed
 * resources (`kopf.resource`) that the files' handlers are registered on, as
 * YAML documents that `kubectl apply -f -` takes. One definition in the code
 * is then the only place a CRD's schema is written: the CRD cannot drift
 * from the types the handlers were checked against.
 *
 * A resource with several versions (`kopf.resource({ versions })`) is one CRD
 * with all of them, whichever versions the handlers use. Its `spec.conversion`
 * is not printed: an operator with converters (`kopf.on.convert`) and
 * `settings.admission.managed` sets it to its own webhook when it runs (and
 * only it knows the webhook's address and CA); a comment above the CRD says
 * so, and that `kubectl apply` keeps what the operator set.
 *
 * @module
 */

import { Resource } from "../cogs/structs/references.ts";
import { TypedResource } from "../cogs/structs/typed_resources.ts";
import type { OperatorRegistry } from "../core/intents/registry.ts";
import { type CrdDefinition as Definition, crdDefinitionsOf } from "../kits/crds.ts";
import { FlagsError } from "./_flags_error.ts";
import { loadHandlers } from "./run.ts";
import { yamlDocument } from "./_yaml.ts";

/**
 * What to know before applying a CRD with several versions: who sets its conversion, or that
 * nothing converts between its versions but their `apiVersion`.
 *
 * @param registry The registry.
 * @param definition The CRD's resource.
 * @returns Comment lines (with `# `), or none for a resource with one version and no converters.
 */
function notes(registry: OperatorRegistry, definition: Definition): string[] {
  const versions = definition instanceof TypedResource
    ? [definition]
    : [...definition.versions] as TypedResource<unknown, unknown>[];
  const resources = versions.map((v) =>
    new Resource({
      group: v.group,
      version: v.version,
      plural: v.plural,
      kind: v.kind,
      singular: v.singular,
      shortcuts: v.shortNames,
      categories: v.categories,
      namespaced: v.scope === "Namespaced",
    })
  );
  const steps = registry.converterHandlers()
    .filter((h) => resources.some((r) => h.selector.check(r)))
    .map((h) => `${h.from}→${h.to}`);
  const name = `${definition.plural}.${definition.group}`;
  if (steps.length) {
    return [
      `# ${name}: converted by the operator (kopf.on.convert: ${steps.join(", ")}).`,
      `# spec.conversion is not here: the operator sets it to its webhook when it runs with`,
      `# settings.admission.server and settings.admission.managed. Re-applying this file with`,
      `# kubectl apply keeps it; kubectl replace or create would drop it (then restart the`,
      `# operator). Until it is set, the API server changes only the apiVersion (strategy None).`,
    ];
  }
  if (versions.length > 1) {
    return [
      `# ${name}: no converters (kopf.on.convert) are registered: the API server converts`,
      `# between ${versions.map((v) => v.version).join(", ")} by changing only the apiVersion ` +
      `(strategy None).`,
    ];
  }
  return [];
}

/**
 * CRD objects as a YAML stream (documents separated by `---`), as kubectl applies it.
 *
 * @param objects The CRDs.
 * @param comments Comment lines to put above each document (by index), if any.
 * @returns The YAML text.
 */
export function toYamlStream(
  objects: Record<string, unknown>[],
  comments: string[][] = [],
): string {
  return objects
    .map((o, i) => yamlDocument(o, { comments: comments[i] }))
    .join("---\n");
}

/**
 * Runs `kopf crd`: loads the files and modules, prints the CRDs of their typed resources.
 *
 * @param paths Handler files.
 * @param modules Handler modules (`-m`).
 * @param write Where the YAML goes (default stdout).
 * @returns The exit code: 0, or 1 when the files register no typed resource, or two
 *   definitions of one CRD.
 * @throws {LoadingError} For a file that cannot be loaded.
 * @throws {FlagsError} For no files and no modules (a usage error).
 */
export async function runCrd(
  paths: string[],
  modules: string[],
  write: (text: string) => void = (t) => Deno.stdout.writeSync(new TextEncoder().encode(t)),
): Promise<number> {
  if (!paths.length && !modules.length) {
    throw new FlagsError(
      "no handlers file: kopf crd prints the CRDs of the typed resources (kopf.resource) " +
        "that handler files or modules define: give one, e.g. kopf crd handlers.ts " +
        "(usage: kopf crd [-m module] [paths...])",
    );
  }
  const registry = await loadHandlers(paths, modules);
  let definitions: Definition[];
  try {
    definitions = crdDefinitionsOf(registry);
  } catch (e) {
    console.error(`kopf: ${(e as Error).message}`);
    return 1;
  }
  if (!definitions.length) {
    console.error(
      "kopf: no typed resources: register handlers on a kopf.resource({...}) to get its CRD",
    );
    return 1;
  }
  write(toYamlStream(definitions.map((d) => d.crd()), definitions.map((d) => notes(registry, d))));
  return 0;
}
