/**
 * `kopf crd handlers.ts`: prints the CustomResourceDefinitions of the typed
 * resources (`kopf.resource`) that the files' handlers are registered on, as
 * YAML documents that `kubectl apply -f -` takes. One definition in the code
 * is then the only place a CRD's schema is written: the CRD cannot drift
 * from the types the handlers were checked against.
 *
 * @module
 */

import { stringify } from "yaml";
import { getDefaultRegistry } from "../core/intents/registration.ts";
import type { OperatorRegistry } from "../core/intents/registry.ts";
import { typedResourcesOf } from "../core/intents/typing.ts";
import { loadHandlers } from "./run.ts";

/**
 * The CRDs of the typed resources that a registry's handlers are registered on.
 *
 * @param registry The registry (default: the default registry).
 * @returns One CRD object per typed resource, in registration order.
 *
 * @example
 * ```ts
 * import * as kopf from "../../mod.ts";
 * const registry = new kopf.OperatorRegistry();
 * const Evc = kopf.resource({
 *   group: "kopf.dev", version: "v1", kind: "EphemeralVolumeClaim",
 *   plural: "ephemeralvolumeclaims", scope: "Namespaced",
 *   spec: kopf.Type.Object({ size: kopf.Type.String() }),
 * });
 * kopf.on.create(Evc, { registry }, ({ spec }) => ({ size: spec.size }));
 * console.log(kopf.crds(registry).map((crd) => (crd.metadata as { name: string }).name));
 * // ["ephemeralvolumeclaims.kopf.dev"]
 * ```
 */
export function crds(registry: OperatorRegistry = getDefaultRegistry()): Record<string, unknown>[] {
  return typedResourcesOf(registry).map((r) => r.crd());
}

/**
 * CRD objects as a YAML stream (documents separated by `---`), as kubectl applies it.
 *
 * @param objects The CRDs.
 * @returns The YAML text.
 */
export function toYamlStream(objects: Record<string, unknown>[]): string {
  return objects.map((o) => stringify(o, { lineWidth: 0 })).join("---\n");
}

/**
 * Runs `kopf crd`: loads the files and modules, prints the CRDs of their typed resources.
 *
 * @param paths Handler files.
 * @param modules Handler modules (`-m`).
 * @param write Where the YAML goes (default stdout).
 * @returns The exit code: 0, or 1 when the files register no typed resource.
 * @throws {LoadingError} For a file that cannot be loaded.
 */
export async function runCrd(
  paths: string[],
  modules: string[],
  write: (text: string) => void = (t) => Deno.stdout.writeSync(new TextEncoder().encode(t)),
): Promise<number> {
  const registry = await loadHandlers(paths, modules);
  const found = crds(registry);
  if (!found.length) {
    console.error(
      "kopf: no typed resources: register handlers on a kopf.resource({...}) to get its CRD",
    );
    return 1;
  }
  write(toYamlStream(found));
  return 0;
}
