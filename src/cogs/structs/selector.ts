/**
 * A {@link Selector}: a handler's resource specification, matched against the
 * resources the cluster serves — only the cluster knows which names, versions
 * and groups exist, so the match waits for discovery.
 *
 * @module
 */

import type { Resource } from "./resource.ts";
import {
  EVERYTHING,
  type Everything,
  parseSpec,
  type ResourceFilter,
  ResourceSelectorError,
  type SelectorSpec,
} from "./selector_specs.ts";

/**
 * A resource specification that matches discovered resources. It accepts
 * every notation of Kopf's "Resource specification":
 *
 * - `"kopfexamples"`, `"kopfexample"`, `"KopfExample"`, `"kex"`: any name;
 * - `"kopfexamples.kopf.dev"`, `"deployments.apps"`: kubectl's name.group;
 * - `"kopfexamples.v1.kopf.dev"`: name.version.group (conventional versions);
 * - `("kopf.dev", "kopfexamples")`: group + name (preferred version);
 * - `("kopf.dev/v1", "kopfexamples")`, `("kopf.dev", "v1", "kopfexamples")`;
 * - `("v1", "pods")`, `("", "v1", "pods")`: the core API;
 * - `{ group, version, kind | plural | singular | shortcut | category }`;
 * - a callable `(resource) => boolean`, or {@link EVERYTHING};
 * - {@link EVERYTHING} in the name's place, scoped to a group (and version):
 *   `("kopf.dev", EVERYTHING)`, `("kopf.dev/v1", EVERYTHING)`,
 *   `("kopf.dev", "v1", EVERYTHING)`, `{ group: "kopf.dev", plural: EVERYTHING }`.
 *
 * Without a version, only the preferred version of each resource matches (its
 * group's preferred version, or the group's first version that serves it). A
 * name (not a category, filter or EVERYTHING) that the core API serves hides
 * the same name in other groups: `"pods"` means `pods.v1`, not
 * `pods.v1beta1.metrics.k8s.io` — as in kubectl. EVERYTHING and filters never
 * match events (posting events about events would loop).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EVERYTHING, Resource, Selector } from "@kopf/kopf";
 *
 * const kex = new Resource({ group: "kopf.dev", version: "v1", plural: "kopfexamples", kind: "KopfExample", shortcuts: ["kex"] });
 * const pods = new Resource({ group: "", version: "v1", plural: "pods", kind: "Pod", singular: "pod" });
 * const metrics = new Resource({ group: "metrics.k8s.io", version: "v1beta1", plural: "pods", kind: "PodMetrics" });
 *
 * assert.deepEqual(new Selector("kex").select([kex, pods]), [kex]);
 * assert.deepEqual(new Selector("kopf.dev/v1", "kopfexamples").select([kex, pods]), [kex]);
 * assert.equal(new Selector("pods").selectOne([pods, metrics, kex]), pods);
 * assert.deepEqual(new Selector({ kind: "PodMetrics" }).select([pods, metrics]), [metrics]);
 * assert.deepEqual(new Selector("kopf.dev", "v1", EVERYTHING).select([kex, pods, metrics]), [kex]);
 * ```
 */
export class Selector {
  /** The API group, if restricted. */
  readonly group: string | undefined;
  /** The API version, if restricted. */
  readonly version: string | undefined;
  /** Match by kind. */
  readonly kind: string | undefined;
  /** Match by plural. */
  readonly plural: string | undefined;
  /** Match by singular. */
  readonly singular: string | undefined;
  /** Match by a short name. */
  readonly shortcut: string | undefined;
  /** Match by category. */
  readonly category: string | undefined;
  /** Match by any name, or EVERYTHING. */
  readonly any: string | Everything | undefined;
  /** Match by a callable filter. */
  readonly fn: ResourceFilter | undefined;

  /**
   * Parses a resource specification.
   *
   * @param spec One of the forms listed on the class.
   * @throws {ResourceSelectorError} For no name, several names, an empty
   *   name, or more than three positional arguments.
   */
  constructor(...spec: SelectorSpec) {
    const f = parseSpec(spec as unknown[]);
    this.group = f.group;
    this.version = f.version;
    this.kind = f.kind;
    this.plural = f.plural;
    this.singular = f.singular;
    this.shortcut = f.shortcut;
    this.category = f.category;
    this.any = f.any;
    this.fn = f.fn;
    Object.freeze(this);
  }

  /**
   * Whether the selector names one kind of thing (a name), rather than a
   * group of them (a category, a filter, EVERYTHING). Only specific
   * selectors are expected to resolve to one resource.
   */
  get isSpecific(): boolean {
    return this.kind !== undefined || this.plural !== undefined ||
      this.singular !== undefined || this.shortcut !== undefined ||
      typeof this.any === "string";
  }

  /**
   * Whether one resource matches, without the core-group precedence that
   * {@link Selector.select} applies across resources.
   *
   * @param resource A discovered resource.
   * @returns True if it matches.
   */
  check(resource: Resource): boolean {
    const r = resource;
    if (this.group !== undefined && this.group !== r.group) return false;
    if (this.version !== undefined ? this.version !== r.version : !r.preferred && !this.fn) {
      return false;
    }
    if (this.kind !== undefined && this.kind !== r.kind) return false;
    if (this.plural !== undefined && this.plural !== r.plural) return false;
    if (this.singular !== undefined && this.singular !== r.singular) return false;
    if (this.category !== undefined && !r.categories.has(this.category)) return false;
    if (this.shortcut !== undefined && !r.shortcuts.has(this.shortcut)) return false;
    if (this.any === EVERYTHING) {
      if (isEvents(r)) return false;
    } else if (this.any !== undefined) {
      const a = this.any;
      if (a !== r.kind && a !== r.plural && a !== r.singular && !r.shortcuts.has(a)) return false;
    }
    if (this.fn !== undefined && (!this.fn(r) || isEvents(r))) return false;
    return true;
  }

  /**
   * All matching resources, with the core group's precedence for names.
   *
   * @param resources The discovered resources.
   * @returns The matches, in the order given.
   */
  select(resources: Iterable<Resource>): Resource[] {
    const result = [...resources].filter((r) => this.check(r));
    if (this.isSpecific) {
      const core = result.filter((r) => r.group === "");
      if (core.length) return core;
    }
    return result;
  }

  /**
   * The one resource that this selector means.
   *
   * @param resources The discovered resources.
   * @returns The only match.
   * @throws {ResourceSelectorError} If nothing matches, or several resources
   *   do; the message names the candidates.
   */
  selectOne(resources: Iterable<Resource>): Resource {
    const found = this.select(resources);
    if (found.length === 1) return found[0]!;
    if (found.length === 0) {
      throw new ResourceSelectorError(
        `Resource "${this}" is not served by the cluster: create its CRD first, ` +
          `or check the name with "kubectl api-resources"`,
      );
    }
    const names = found.map(String).sort();
    const example = found[0]!;
    const hint = this.isSpecific
      ? `specify the API group, e.g. "${example.plural}.${example.group || "v1"}"`
      : `use a more specific selector`;
    throw new ResourceSelectorError(
      `Resource "${this}" is ambiguous: it matches ${names.join(", ")}; ${hint}`,
    );
  }

  /**
   * A kubectl-like rendering for messages: `kopfexamples.v1.kopf.dev`,
   * `pods`, `kind=KopfExample.kopf.dev`, `category=all`, `EVERYTHING`.
   *
   * @returns The text.
   */
  toString(): string {
    const name = this.any === EVERYTHING
      ? "EVERYTHING"
      : this.any ?? (this.kind !== undefined ? `kind=${this.kind}` : this.plural ?? this.singular ??
        (this.shortcut !== undefined
          ? `shortcut=${this.shortcut}`
          : this.category !== undefined
          ? `category=${this.category}`
          : "<filter>"));
    const group = this.group === "" ? (this.version === undefined ? "v1" : "") : this.group;
    return [name, this.version, group].filter((s) => s).join(".");
  }
}

function isEvents(r: Resource): boolean {
  return r.plural === "events" && (r.group === "" || r.group === "events.k8s.io");
}
