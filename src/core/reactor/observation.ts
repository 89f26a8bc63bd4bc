/**
 * What the operator observes of the cluster besides the objects it serves:
 * which resources its selectors stand for (discovery), which namespaces match
 * its `-n` patterns, and when CRDs change (so that resources are served as
 * their CRDs come, go and come back). Each is a small function over the API
 * client that reports through callbacks; the orchestrator (orchestration.ts)
 * turns the reports into watchers.
 *
 * @module
 */

import type { ApiClient } from "../../cogs/clients/api.ts";
import { scanResources } from "../../cogs/clients/scanning.ts";
import { infiniteWatch } from "../../cogs/clients/watching.ts";
import {
  matchNamespace,
  type Resource,
  Resource as ResourceClass,
  type Selector,
} from "../../cogs/structs/references.ts";
import { OperatorError } from "./errors.ts";

const NAMESPACES = new ResourceClass({
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
});

const CRDS = new ResourceClass({
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition",
  namespaced: false,
});

/**
 * Resolves the registry's selectors against discovery; unknown or ambiguous specific names are
 * fatal when `strict` (at start), and skipped otherwise (rescans while running).
 *
 * @param api The client.
 * @param selectors The selectors.
 * @param signal Stops the scan.
 * @param strict Whether an unknown or ambiguous name is fatal.
 * @returns The resources to serve.
 * @throws {OperatorError} For an unknown or ambiguous name, when strict.
 */
export async function resolveResources(
  api: ApiClient,
  selectors: Selector[],
  signal: AbortSignal,
  strict = true,
): Promise<Resource[]> {
  if (!selectors.length) return [];
  const all = await scanResources(api, { signal });
  const out = new Map<string, Resource>();
  for (const selector of selectors) {
    if (selector.isSpecific) {
      let resource: Resource;
      try {
        resource = selector.selectOne(all);
      } catch (e) {
        if (!strict) continue;
        throw new OperatorError(`${(e as Error).message}`, { cause: e });
      }
      out.set(resource.toString(), resource);
    } else {
      for (const r of selector.select(all)) {
        if (r.verbs.size && !(r.verbs.has("list") && r.verbs.has("watch"))) continue;
        out.set(r.toString(), r);
      }
    }
  }
  return [...out.values()];
}

/** How an observer reports. */
export interface Observer {
  /** Stops the observation. */
  signal: AbortSignal;
  /** Something changed after the initial listing. */
  onChange: () => void;
  /** The observation failed for good. */
  onError: (e: unknown) => void;
}

/**
 * Follows the namespaces that match `-n` patterns: keeps `served` up to date and reports each
 * change after the initial listing.
 *
 * @param api The client.
 * @param patterns The `-n` patterns (globs, `!negations`).
 * @param served The served namespaces, updated in place.
 * @param observer Signal and callbacks.
 * @returns When the initial listing is in `served` (or the observation ended).
 */
export function followNamespaces(
  api: ApiClient,
  patterns: string[],
  served: Set<string>,
  observer: Observer,
): Promise<void> {
  return follow(api, NAMESPACES, observer, (event) => {
    const name = event.object.metadata?.name ?? "";
    if (!matchNamespace(patterns, name)) return false;
    if (event.type === "DELETED") served.delete(name);
    else served.add(name);
    return true;
  });
}

/**
 * Follows CRDs: reports every change after the initial listing (the caller re-resolves its
 * selectors, debounced).
 *
 * @param api The client.
 * @param observer Signal and callbacks (errors: without access to CRDs, nothing is followed).
 * @returns When the initial listing is seen (or the observation ended).
 */
export function followCrds(api: ApiClient, observer: Observer): Promise<void> {
  return follow(api, CRDS, observer, () => true);
}

function follow(
  api: ApiClient,
  resource: Resource,
  observer: Observer,
  take: (event: { type: string; object: { metadata?: { name?: string } } }) => boolean,
): Promise<void> {
  let listed!: () => void;
  const ready = new Promise<void>((resolve) => (listed = resolve));
  const run = async () => {
    let initial = true;
    for await (const event of infiniteWatch(api, resource, null, { signal: observer.signal })) {
      if (event.type === "LISTED") {
        initial = false;
        listed();
        continue;
      }
      if (take(event as never) && !initial) observer.onChange();
    }
  };
  run().catch(observer.onError).finally(() => listed());
  return ready;
}
