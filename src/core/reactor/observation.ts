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
import { ForbiddenError } from "../../cogs/clients/errors.ts";
import { matchNamespace, selectSpecificNamespaces } from "../../cogs/structs/namespace_patterns.ts";
import { type Resource, Resource as ResourceClass } from "../../cogs/structs/resource.ts";
import type { Selector } from "../../cogs/structs/selector.ts";

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

/** What the selectors stand for now: the resources to serve and the selectors that cannot be. */
export interface Resolution {
  /** The resources to serve. */
  resources: Resource[];
  /**
   * One warning line per specific selector that is not served: a name the cluster does not
   * serve (yet: its CRD may come later), or an ambiguous one (several groups serve it, so
   * neither is served — as the docs say).
   */
  problems: string[];
}

/**
 * Resolves the registry's selectors against discovery. Unknown and ambiguous specific names are
 * not fatal: they come back as problems (one line each) and are served once a rescan resolves
 * them (their CRD appears, the ambiguity goes).
 *
 * @param api The client.
 * @param selectors The selectors.
 * @param signal Stops the scan.
 * @param following Whether CRDs are followed (the unknown names' lines say what happens next).
 * @returns The resources to serve and the problems.
 * @throws {ApiError} When discovery fails.
 */
export async function resolveResources(
  api: ApiClient,
  selectors: Selector[],
  signal: AbortSignal,
  following = true,
): Promise<Resolution> {
  if (!selectors.length) return { resources: [], problems: [] };
  const all = await scanResources(api, { signal });
  const out = new Map<string, Resource>();
  const problems: string[] = [];
  for (const selector of selectors) {
    if (selector.isSpecific) {
      let resource: Resource;
      try {
        resource = selector.selectOne(all);
      } catch (e) {
        const message = (e as Error).message;
        if (selector.select(all).length > 1) problems.push(`${message}; neither is served.`);
        else if (following) problems.push(`${message}; it is served once its CRD appears.`);
        else problems.push(`${message}; scanning is disabled: it is served after a restart.`);
        continue;
      }
      out.set(resource.toString(), resource);
    } else {
      for (const r of selector.select(all)) {
        if (r.verbs.size && !(r.verbs.has("list") && r.verbs.has("watch"))) continue;
        out.set(r.toString(), r);
      }
    }
  }
  return { resources: [...out.values()], problems };
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
 * change after the initial listing. Without the permission to list namespaces (403), it serves
 * the literal names among the patterns as they are (Kopf's documented fallback; patterns need
 * the list) and says so in one warning line; without the permission to watch them, it keeps
 * what it listed.
 *
 * @param api The client.
 * @param patterns The `-n` patterns (globs, `!negations`).
 * @param served The served namespaces, updated in place.
 * @param observer Signal, callbacks, and `warn` for the lines of the fallbacks.
 * @returns When the initial listing (or the fallback) is in `served` (or the observation ended).
 */
export function followNamespaces(
  api: ApiClient,
  patterns: string[],
  served: Set<string>,
  observer: Observer & { warn: (line: string) => void },
): Promise<void> {
  let listed = false;
  return follow(api, NAMESPACES, {
    ...observer,
    onListed: () => (listed = true),
    onError: (e) => {
      if (!(e instanceof ForbiddenError)) return observer.onError(e);
      if (listed) {
        observer.warn(
          "Not enough permissions to watch namespaces: namespaces created or deleted from now on " +
            "are noticed only after a restart. Grant list & watch on namespaces to follow them.",
        );
        return;
      }
      for (const name of selectSpecificNamespaces(patterns)) served.add(name);
      observer.warn(fallbackLine("Not enough permissions to list namespaces", patterns));
    },
  }, (event) => {
    const name = event.object.metadata?.name ?? "";
    if (!matchNamespace(patterns, name)) return false;
    if (event.type === "DELETED") served.delete(name);
    else served.add(name);
    return true;
  });
}

/**
 * The namespaces served without listing them (no permission, or `settings.scanning.disabled`):
 * the literal names among the patterns, as they are.
 *
 * @param patterns The `-n` patterns.
 * @param why Why they are not listed, for the warning.
 * @param warn Says which patterns are dropped, in one line (only if some are).
 * @returns The literal names.
 */
export function literalNamespaces(
  patterns: string[],
  why: string,
  warn: (line: string) => void,
): Set<string> {
  const names = selectSpecificNamespaces(patterns);
  if (names.length < patterns.length) warn(fallbackLine(why, patterns));
  return new Set(names);
}

function fallbackLine(why: string, patterns: string[]): string {
  const names = selectSpecificNamespaces(patterns);
  const dropped = patterns.filter((p) => !names.includes(p));
  const serving = names.length
    ? `serving the namespaces ${names.join(", ")} as they are`
    : "serving no namespaces";
  const ignoring = dropped.length
    ? `; the patterns ${dropped.join(", ")} need the list of namespaces and are ignored`
    : "";
  return `${why}: ${serving}${ignoring}.`;
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
  observer: Observer & { onListed?: () => void },
  take: (event: { type: string; object: { metadata?: { name?: string } } }) => boolean,
): Promise<void> {
  let listed!: () => void;
  const ready = new Promise<void>((resolve) => (listed = resolve));
  const run = async () => {
    let initial = true;
    for await (const event of infiniteWatch(api, resource, null, { signal: observer.signal })) {
      if (event.type === "LISTED") {
        initial = false;
        observer.onListed?.();
        listed();
        continue;
      }
      if (take(event as never) && !initial) observer.onChange();
    }
  };
  run().catch(observer.onError).finally(() => listed());
  return ready;
}
