/**
 * The served resource types: the built-ins plus every established CRD.
 *
 * A CRD's group/version/plural is added here synchronously in the same step
 * that stores the CRD, so discovery already lists it by the time the CRD's
 * watch event reaches a client (operators rescan discovery on that event).
 *
 * @module
 */

import { builtinResources } from "../builtins/builtins.ts";
import {
  ALL_VERBS,
  type PrinterColumn,
  type ResourceDef,
  storageKey,
} from "../shared/resources.ts";
import type { JsonSchema } from "../shared/types.ts";
import type { KObject } from "../shared/types.ts";

/** The parts of a CRD's spec this server reads. */
interface CrdSpec {
  group?: string;
  scope?: string;
  names?: {
    plural?: string;
    singular?: string;
    kind?: string;
    listKind?: string;
    shortNames?: string[];
    categories?: string[];
  };
  versions?: Array<{
    name?: string;
    served?: boolean;
    storage?: boolean;
    schema?: { openAPIV3Schema?: JsonSchema };
    subresources?: { status?: unknown; scale?: unknown };
    additionalPrinterColumns?: PrinterColumn[];
  }>;
}

/**
 * The table of served resources.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer();
 * const reg = api.server.registry;
 * assert.deepEqual(reg.find("apps", "v1", "deployments")?.kind, "Deployment");
 * ```
 */
export class ResourceRegistry {
  /** group → version → plural → def */
  #groups = new Map<string, Map<string, Map<string, ResourceDef>>>();
  /** CRD name → the defs it added */
  #byCrd = new Map<string, ResourceDef[]>();

  constructor() {
    for (const def of builtinResources()) this.#add(def);
  }

  /**
   * Finds a served resource.
   *
   * @param group The group ("" for core).
   * @param version The version.
   * @param plural The plural name.
   * @returns The definition, or undefined.
   */
  find(group: string, version: string, plural: string): ResourceDef | undefined {
    return this.#groups.get(group)?.get(version)?.get(plural);
  }

  /**
   * Whether a group-version is served at all.
   *
   * @param group The group.
   * @param version The version.
   * @returns True if it has resources.
   */
  hasGroupVersion(group: string, version: string): boolean {
    return (this.#groups.get(group)?.get(version)?.size ?? 0) > 0;
  }

  /**
   * The resources of one group-version, for `APIResourceList`.
   *
   * @param group The group.
   * @param version The version.
   * @returns The definitions.
   */
  resources(group: string, version: string): ResourceDef[] {
    return [...(this.#groups.get(group)?.get(version)?.values() ?? [])];
  }

  /**
   * All groups except core, with their versions by priority (the first is preferred).
   *
   * @returns Group names and version lists.
   */
  groups(): Array<{ name: string; versions: string[]; preferred: string }> {
    const out = [];
    for (const [name, versions] of this.#groups) {
      if (name === "" || versions.size === 0) continue;
      const list = [...versions.keys()].sort(compareVersions);
      out.push({ name, versions: list, preferred: list[0]! });
    }
    return out;
  }

  /**
   * Every served version of one stored resource (for multi-version CRDs).
   *
   * @param key The storage key.
   * @returns The definitions.
   */
  versionsOf(key: string): ResourceDef[] {
    const out: ResourceDef[] = [];
    for (const versions of this.#groups.values()) {
      for (const plurals of versions.values()) {
        for (const def of plurals.values()) if (storageKey(def) === key) out.push(def);
      }
    }
    return out;
  }

  /**
   * Serves (or re-serves) the resources of a CRD.
   *
   * @param crd The CRD object.
   * @returns An error message if the CRD's names clash with a served resource, or it is not
   * established (its names conflict with another CRD's: not served).
   */
  applyCrd(crd: KObject): string | undefined {
    const name = crd.metadata.name!;
    const spec = (crd.spec ?? {}) as CrdSpec;
    const group = spec.group ?? "";
    const names = spec.names ?? {};
    const plural = names.plural ?? "";
    for (const v of spec.versions ?? []) {
      const existing = this.find(group, v.name ?? "", plural);
      if (existing && existing.builtin) return `"${plural}" is already in use in group "${group}"`;
    }
    // A CRD whose names conflict with another's is not established, so not served (crd_names.ts).
    const conditions = (crd.status as { conditions?: Array<{ type?: string; status?: string }> })
      ?.conditions;
    const established = conditions?.find((c) => c.type === "Established");
    if (established && established.status !== "True") return `${name} is not established`;
    this.removeCrd(name);
    const defs: ResourceDef[] = [];
    for (const v of spec.versions ?? []) {
      if (v.served === false || !v.name) continue;
      const def: ResourceDef = {
        group,
        version: v.name,
        plural,
        singular: names.singular || (names.kind ?? "").toLowerCase(),
        kind: names.kind ?? "",
        namespaced: spec.scope !== "Cluster",
        shortNames: names.shortNames ?? [],
        categories: names.categories ?? [],
        verbs: [...ALL_VERBS],
        statusSubresource: v.subresources?.status !== undefined && v.subresources?.status !== null,
        builtin: false,
        storage: v.storage === true,
      };
      if (v.schema?.openAPIV3Schema) def.schema = v.schema.openAPIV3Schema;
      if (v.additionalPrinterColumns?.length) def.printerColumns = v.additionalPrinterColumns;
      defs.push(def);
      this.#add(def);
    }
    this.#byCrd.set(name, defs);
    return undefined;
  }

  /**
   * Stops serving the resources of a CRD.
   *
   * @param crdName The CRD's name (`plural.group`).
   * @returns The definitions that were removed.
   */
  removeCrd(crdName: string): ResourceDef[] {
    const defs = this.#byCrd.get(crdName) ?? [];
    for (const def of defs) {
      const versions = this.#groups.get(def.group);
      versions?.get(def.version)?.delete(def.plural);
      if (versions?.get(def.version)?.size === 0) versions.delete(def.version);
      if (versions?.size === 0) this.#groups.delete(def.group);
    }
    this.#byCrd.delete(crdName);
    return defs;
  }

  /**
   * Resolves a resource by kind within a group-version (for ownerReferences and SSA).
   *
   * @param apiVersion `group/version` or `version`.
   * @param kind The kind.
   * @returns The definition, or undefined.
   */
  findByKind(apiVersion: string, kind: string): ResourceDef | undefined {
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/", 2) : ["", apiVersion];
    for (const def of this.#groups.get(group!)?.get(version!)?.values() ?? []) {
      if (def.kind === kind) return def;
    }
    return undefined;
  }

  #add(def: ResourceDef): void {
    let versions = this.#groups.get(def.group);
    if (!versions) this.#groups.set(def.group, versions = new Map());
    let plurals = versions.get(def.version);
    if (!plurals) versions.set(def.version, plurals = new Map());
    plurals.set(def.plural, def);
  }
}

/**
 * Orders Kubernetes versions by priority: GA before beta before alpha, higher first.
 *
 * @param a A version like `v1`, `v2beta1`.
 * @param b Another version.
 * @returns Negative if `a` comes first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compareVersions } from "./registry.ts";
 * assert.deepEqual(["v1beta1", "v1", "v2", "v1alpha1"].sort(compareVersions), ["v2", "v1", "v1beta1", "v1alpha1"]);
 * ```
 */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [-1, 0, 0];
    const stage = m[2] === "alpha" ? 1 : m[2] === "beta" ? 2 : 3;
    return [stage, Number(m[1]), Number(m[3] ?? 0)];
  };
  const [sa, ma, na] = parse(a);
  const [sb, mb, nb] = parse(b);
  if (sa !== sb) return sb - sa;
  if (ma !== mb) return mb - ma;
  if (na !== nb) return nb - na;
  return a < b ? -1 : a > b ? 1 : 0;
}
