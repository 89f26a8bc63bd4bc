/**
 * The discovery documents (`/api`, `/api/v1`, `/apis`, `/apis/<g>`,
 * `/apis/<g>/<v>`) and `/version`, built from the served resources on every
 * request, so a new CRD shows up the moment it is stored.
 *
 * Only the classic (unaggregated) documents are served: kubectl asks for
 * aggregated discovery first and falls back to these when it gets a plain
 * `APIGroupList`, as observed with kubectl 1.27 and 1.33.
 *
 * @module
 */

import type { ResourceRegistry } from "../objects/registry.ts";
import type { ResourceDef } from "../shared/resources.ts";

/**
 * The `/version` document.
 *
 * @param minor The Kubernetes minor version to report.
 * @returns The version info.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { versionInfo } from "./discovery.ts";
 * assert.deepEqual(versionInfo(33).gitVersion, "v1.33.0");
 * ```
 */
export function versionInfo(minor: number): Record<string, string> {
  return {
    major: "1",
    minor: String(minor),
    gitVersion: `v1.${minor}.0`,
    gitCommit: "0000000000000000000000000000000000000000",
    gitTreeState: "clean",
    buildDate: "2026-01-01T00:00:00Z",
    goVersion: "go1.24.0",
    compiler: "gc",
    platform: "linux/amd64",
  };
}

/**
 * The `APIResourceList` of one group-version.
 *
 * @param registry The served resources.
 * @param group The group ("" for core).
 * @param version The version.
 * @returns The list, or undefined if nothing is served there.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resourceList } from "./discovery.ts";
 * import { ResourceRegistry } from "../objects/registry.ts";
 * const list = resourceList(new ResourceRegistry(), "apps", "v1")!;
 * assert.deepEqual((list.resources as { name: string }[]).some((r) => r.name === "deployments/status"), true);
 * ```
 */
export function resourceList(
  registry: ResourceRegistry,
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  if (!registry.hasGroupVersion(group, version)) return undefined;
  const resources = [];
  for (
    const def of registry.resources(group, version).sort((a, b) => a.plural.localeCompare(b.plural))
  ) {
    resources.push(entry(def));
    if (def.statusSubresource) {
      resources.push({
        name: `${def.plural}/status`,
        singularName: "",
        namespaced: def.namespaced,
        kind: def.kind,
        verbs: ["get", "patch", "update"],
      });
    }
    if (def.plural === "serviceaccounts" && def.group === "") {
      resources.push({
        name: "serviceaccounts/token",
        singularName: "",
        namespaced: true,
        group: "authentication.k8s.io",
        version: "v1",
        kind: "TokenRequest",
        verbs: ["create"],
      });
    }
    if (def.plural === "namespaces" && def.group === "") {
      resources.push({
        name: "namespaces/finalize",
        singularName: "",
        namespaced: false,
        kind: "Namespace",
        verbs: ["update"],
      });
    }
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}

function entry(def: ResourceDef): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: def.plural,
    singularName: def.singular,
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: def.verbs,
  };
  if (def.shortNames.length) out.shortNames = def.shortNames;
  if (def.categories.length) out.categories = def.categories;
  return out;
}

/**
 * The `/api` document.
 *
 * @param serverAddress host:port clients reached us at.
 * @returns The APIVersions.
 */
export function coreVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

/**
 * The `/apis` document.
 *
 * @param registry The served resources.
 * @returns The APIGroupList.
 */
export function groupList(registry: ResourceRegistry): Record<string, unknown> {
  return { kind: "APIGroupList", apiVersion: "v1", groups: registry.groups().map(groupDoc) };
}

/**
 * The `/apis/<group>` document.
 *
 * @param registry The served resources.
 * @param group The group.
 * @returns The APIGroup, or undefined if it is not served.
 */
export function groupInfo(
  registry: ResourceRegistry,
  group: string,
): Record<string, unknown> | undefined {
  const g = registry.groups().find((x) => x.name === group);
  return g ? { kind: "APIGroup", apiVersion: "v1", ...groupDoc(g) } : undefined;
}

function groupDoc(
  g: { name: string; versions: string[]; preferred: string },
): Record<string, unknown> {
  return {
    name: g.name,
    versions: g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${g.name}/${g.preferred}`, version: g.preferred },
  };
}

/**
 * The `/` document: every path the server answers at its top levels, sorted, as
 * kube-apiserver's index lists its registered paths (`metav1.RootPaths`).
 *
 * @param registry The served resources.
 * @param extra Other paths served (health checks, `/metrics`, `/version`…).
 * @returns The RootPaths object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rootPaths } from "./discovery.ts";
 * import { ResourceRegistry } from "../objects/registry.ts";
 * const paths = rootPaths(new ResourceRegistry(), ["/version"]).paths;
 * assert.ok(paths.includes("/apis/apps/v1") && paths.includes("/version"));
 * ```
 */
export function rootPaths(registry: ResourceRegistry, extra: string[]): { paths: string[] } {
  const paths = ["/api", "/api/v1", "/apis", "/apis/", ...extra];
  for (const g of registry.groups()) {
    paths.push(`/apis/${g.name}`, ...g.versions.map((v) => `/apis/${g.name}/${v}`));
  }
  return { paths: paths.sort() };
}
