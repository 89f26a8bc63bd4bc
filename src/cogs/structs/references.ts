/**
 * References to Kubernetes resources and the operator's scopes: a
 * {@link Resource} is one concrete API endpoint (group, version, plural) as
 * found by cluster discovery; a {@link Selector} is what a developer writes in
 * a handler (`"kopfexamples"`, `"kopf.dev/v1", "kopfexamples"`, an object, or
 * {@link EVERYTHING}) and is matched against the discovered resources later,
 * because only the cluster knows which names, versions and groups exist.
 * Namespace patterns (`-n 'ns-*'`, `-n '!kube-*'`) are matched here too.
 *
 * Why selectors are not resources: one selector can match many resources
 * (every preferred version of "deployments" in several groups, a category, a
 * callable filter), and the same selector can match different resources in
 * different clusters. The framework keeps selectors in its registry and
 * resolves them every time the cluster's discovery changes.
 *
 * @module
 */

import { SelectorError } from "./selector_error.ts";

/**
 * A resource selector that cannot be built or resolved: an ambiguous or empty
 * specification, a name that the cluster does not serve, or a name served by
 * several API groups. It is a {@link SelectorError} (the error of label and
 * field selectors), so one `catch` covers every selector a developer wrote.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Resource, ResourceSelectorError, Selector } from "@kopf/kopf";
 *
 * const pods = new Resource({ group: "", version: "v1", plural: "pods", kind: "Pod" });
 * assert.throws(() => new Selector("kopfexamples").selectOne([pods]), ResourceSelectorError);
 * ```
 */
export class ResourceSelectorError extends SelectorError {
  /**
   * Creates the error.
   *
   * @param message What is wrong and what to do, on one line.
   * @param options The usual error options, e.g. a `cause`.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ResourceSelectorError";
  }
}

/** The fields of a {@link Resource}; everything but group, version and plural is optional. */
export interface ResourceInit {
  /** The API group, e.g. `"kopf.dev"`, `"apps"`; `""` for the core API (`v1`). */
  group: string;
  /** The API version, e.g. `"v1"`, `"v1beta1"`. */
  version: string;
  /** The plural name used in URLs, e.g. `"pods"`, `"kopfexamples"`. */
  plural: string;
  /** The kind, e.g. `"Pod"`, `"KopfExample"`. */
  kind?: string | undefined;
  /** The singular name, e.g. `"pod"`. */
  singular?: string | undefined;
  /** Short names, e.g. `["po"]`, `["kex", "kexes"]`. */
  shortcuts?: Iterable<string> | undefined;
  /** Categories, e.g. `["all"]`. */
  categories?: Iterable<string> | undefined;
  /** Subresources, e.g. `["status", "scale"]`. */
  subresources?: Iterable<string> | undefined;
  /** Namespaced (`true`) or cluster-scoped (`false`); unknown when undefined. */
  namespaced?: boolean | undefined;
  /** Whether a name without a version means this version (default `true`; see {@link Resource.preferred}). */
  preferred?: boolean | undefined;
  /** The verbs the API serves for it, e.g. `["list", "watch", "patch"]`. */
  verbs?: Iterable<string> | undefined;
}

/** Query parameters for {@link Resource.getUrl}; `undefined` and `null` values are left out. */
export type QueryParams = Record<string, string | number | boolean | undefined | null>;

/**
 * One concrete resource kind as the API serves it, e.g. `pods.v1` or
 * `kopfexamples.v1.kopf.dev`. Two resources are equal when group, version and
 * plural are equal; the other fields are for matching selectors, logging and
 * information.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Resource } from "@kopf/kopf";
 *
 * const kex = new Resource({
 *   group: "kopf.dev", version: "v1", plural: "kopfexamples", kind: "KopfExample", namespaced: true,
 * });
 * assert.equal(kex.apiVersion, "kopf.dev/v1");
 * assert.equal(String(kex), "kopfexamples.v1.kopf.dev");
 * assert.equal(
 *   kex.getUrl({ namespace: "default", name: "kex1", subresource: "status" }),
 *   "/apis/kopf.dev/v1/namespaces/default/kopfexamples/kex1/status",
 * );
 * ```
 */
export class Resource {
  /** The API group; `""` for the core API. */
  readonly group: string;
  /** The API version. */
  readonly version: string;
  /** The plural name, as used in URLs. */
  readonly plural: string;
  /** The kind. */
  readonly kind: string | undefined;
  /** The singular name. */
  readonly singular: string | undefined;
  /** Short names. */
  readonly shortcuts: ReadonlySet<string>;
  /** Categories. */
  readonly categories: ReadonlySet<string>;
  /** Subresources, e.g. `status`. */
  readonly subresources: ReadonlySet<string>;
  /** Namespaced or cluster-scoped; undefined when unknown. */
  readonly namespaced: boolean | undefined;
  /**
   * Whether this is the version that a selector without a version means: its group's preferred
   * version, or — when that version does not serve this resource — the group's first version
   * that does (as kubectl resolves names). Discovery sets it; default `true`.
   */
  readonly preferred: boolean;
  /** The verbs the API serves. */
  readonly verbs: ReadonlySet<string>;
  /** `plural.version.group`, built once (it is a map key on every event). */
  readonly #name: string;
  /** The path up to the version: `/apis/group/version` or `/api/v1`. */
  readonly #root: string;

  /**
   * Creates a resource reference.
   *
   * @param init The fields, or the group when called Kopf-style as
   *   `new Resource("kopf.dev", "v1", "kopfexamples")`.
   * @param version The version (positional form only).
   * @param plural The plural (positional form only).
   * @throws {TypeError} If the positional form lacks the version or the plural.
   */
  constructor(init: ResourceInit | string, version?: string, plural?: string) {
    if (typeof init === "string") {
      if (version === undefined || plural === undefined) {
        throw new TypeError("new Resource(group, version, plural) needs all three strings");
      }
      init = { group: init, version, plural };
    }
    this.group = init.group;
    this.version = init.version;
    this.plural = init.plural;
    this.kind = init.kind;
    this.singular = init.singular;
    this.shortcuts = new Set(init.shortcuts ?? []);
    this.categories = new Set(init.categories ?? []);
    this.subresources = new Set(init.subresources ?? []);
    this.namespaced = init.namespaced;
    this.preferred = init.preferred ?? true;
    this.verbs = new Set(init.verbs ?? []);
    this.#name = [this.plural, this.version, this.group].filter((s) => s).join(".");
    this.#root = this.group === "" && this.version === "v1"
      ? "/api/v1"
      : ["/apis", this.group, this.version].filter((s) => s).join("/");
    Object.freeze(this);
  }

  /** The `apiVersion` of objects of this resource: `group/version`, or `version` for the core API. */
  get apiVersion(): string {
    return this.group ? `${this.group}/${this.version}` : this.version;
  }

  /**
   * Whether another resource is the same endpoint (group, version, plural).
   *
   * @param other Another resource.
   * @returns True if equal.
   */
  equals(other: Resource): boolean {
    return this.group === other.group && this.version === other.version &&
      this.plural === other.plural;
  }

  /**
   * The name as Kopf logs it: `plural.version.group`, e.g. `pods.v1`,
   * `kopfexamples.v1.kopf.dev`. Unique per endpoint, so usable as a map key.
   *
   * @returns The name.
   */
  toString(): string {
    return this.#name;
  }

  /**
   * Builds the REST path of the resource's collection, one object, or one
   * object's subresource. A namespace given for a cluster-scoped resource is
   * an error, as is a named namespaced object without a namespace; without a
   * namespace, a namespaced resource's path is the cluster-wide collection.
   *
   * @param options The namespace, name, subresource, query parameters, and
   *   an optional server URL to prefix.
   * @returns The path (with the query), or the full URL when `server` is given.
   * @throws {TypeError} On an inconsistent combination (see above).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Resource } from "@kopf/kopf";
   *
   * const pods = new Resource({ group: "", version: "v1", plural: "pods", namespaced: true });
   * assert.equal(pods.getUrl(), "/api/v1/pods");
   * assert.equal(pods.getUrl({ namespace: "ns1", params: { watch: true } }), "/api/v1/namespaces/ns1/pods?watch=true");
   * ```
   */
  getUrl(
    options: {
      server?: string | undefined;
      namespace?: string | null | undefined;
      name?: string | undefined;
      subresource?: string | undefined;
      params?: QueryParams | undefined;
    } = {},
  ): string {
    const { server, name, subresource, params } = options;
    const namespace = options.namespace ?? undefined;
    if (subresource !== undefined && name === undefined) {
      throw new TypeError(`the subresource "${subresource}" of ${this} needs an object name`);
    }
    if (!this.namespaced && namespace !== undefined) {
      throw new TypeError(`${this} is cluster-scoped: do not give it a namespace ("${namespace}")`);
    }
    if (this.namespaced && namespace === undefined && name !== undefined) {
      throw new TypeError(`${this} is namespaced: give the namespace of the object "${name}"`);
    }
    let path = this.#root;
    if (namespace !== undefined && namespace !== "") {
      path += `/namespaces/${encodeURIComponent(namespace)}`;
    }
    if (this.plural) path += `/${this.plural}`;
    if (name) path += `/${encodeURIComponent(name)}`;
    if (subresource) path += `/${subresource}`;
    let qs = "";
    if (params) {
      let query: URLSearchParams | undefined; // only when some value is given
      for (const k in params) {
        const v = params[k];
        if (v !== undefined && v !== null && Object.hasOwn(params, k)) {
          (query ??= new URLSearchParams()).set(k, String(v));
        }
      }
      if (query) qs = query.toString();
    }
    const url = qs ? `${path}?${qs}` : path;
    return server === undefined ? url : `${server.replace(/\/+$/, "")}${url}`;
  }
}

/** The marker that selects every resource, built-in and custom (except events). */
export const EVERYTHING: unique symbol = Symbol.for("kopf.EVERYTHING");

/** The type of {@link EVERYTHING}. */
export type Everything = typeof EVERYTHING;

/** A callable filter: selects the resources for which it returns true. */
export type ResourceFilter = (resource: Resource) => boolean;

/** The object form of a selector (Kopf's keyword arguments). */
export interface SelectorFields {
  /** The API group (`""` for core). */
  group?: string | undefined;
  /** The API version; when absent, only preferred versions match. */
  version?: string | undefined;
  /** `group/version` in one string, e.g. `"kopf.dev/v1"` or `"v1"`. */
  apiVersion?: string | undefined;
  /** Match by kind only. */
  kind?: string | undefined;
  /** Match by plural only; EVERYTHING: every resource of the group (and version). */
  plural?: string | Everything | undefined;
  /** Match by singular only. */
  singular?: string | undefined;
  /** Match by one short name. */
  shortcut?: string | undefined;
  /** Match every resource of a category, e.g. `"all"`. */
  category?: string | undefined;
  /** Match by any of the names (plural, singular, kind, short names), or EVERYTHING. */
  any?: string | Everything | undefined;
}

/**
 * Every form a developer may write: one to three positional strings (Kopf's
 * "Resource specification"), one object, a callable filter, or EVERYTHING.
 */
export type SelectorSpec =
  | [name: string | Everything | ResourceFilter | SelectorFields]
  | [groupOrApiVersion: string, name: string | Everything]
  | [group: string, version: string, name: string | Everything];

// Conventional API versions (v1, v2beta3, …) in "name.version.group" strings.
const GROUP_VERSION_PATTERN = /^[^.]*\.v\d+(?:(?:alpha|beta)\d+)?(?:\..*)?$/;

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

interface ParsedSpec {
  group?: string | undefined;
  version?: string | undefined;
  kind?: string | undefined;
  plural?: string | undefined;
  singular?: string | undefined;
  shortcut?: string | undefined;
  category?: string | undefined;
  any?: string | Everything | undefined;
  fn?: ResourceFilter | undefined;
}

function parseSpec(args: unknown[]): ParsedSpec {
  const [a1, a2, a3] = args;
  let f: ParsedSpec;
  const last = args.length - 1;
  if (
    args.length > 1 && args.length <= 3 && args[last] === EVERYTHING &&
    args.slice(0, last).every((a) => typeof a === "string")
  ) {
    // EVERYTHING in the name's place: every resource of that group (and version).
    return { ...parseSpec([...args.slice(0, last), "*"]), any: EVERYTHING };
  }
  if (args.length > 3) {
    throw new ResourceSelectorError(
      `Too many positional arguments for a resource (${args.length}): give at most group, version, name`,
    );
  } else if (args.length === 0) {
    f = {};
  } else if (args.length === 1 && typeof a1 === "function") {
    f = { fn: a1 as ResourceFilter };
  } else if (args.length === 1 && a1 === EVERYTHING) {
    f = { any: EVERYTHING };
  } else if (args.length === 1 && typeof a1 === "object" && a1 !== null) {
    f = fromFields(a1 as SelectorFields);
  } else if (!args.every((a) => typeof a === "string")) {
    throw new ResourceSelectorError(
      `A resource is given by strings, one object, a function, or EVERYTHING; got ${
        args.map((a) => typeof a).join(", ")
      }`,
    );
  } else if (args.length === 1) {
    const s = a1 as string;
    if (GROUP_VERSION_PATTERN.test(s)) {
      const parts = s.split(".");
      f = {
        any: parts[0],
        version: parts[1],
        group: parts.length >= 3 ? parts.slice(2).join(".") : undefined,
      };
    } else if (s.includes(".")) {
      const dot = s.indexOf(".");
      f = { any: s.slice(0, dot), group: s.slice(dot + 1) };
    } else {
      f = { any: s };
    }
  } else if (args.length === 2) {
    const [s1, s2] = [a1 as string, a2 as string];
    if (s1.includes("/")) {
      const slash = s1.lastIndexOf("/");
      f = { group: s1.slice(0, slash), version: s1.slice(slash + 1), any: s2 };
    } else if (s1 === "v1") {
      f = { group: "", version: "v1", any: s2 };
    } else {
      f = { group: s1, any: s2 };
    }
  } else {
    f = { group: a1 as string, version: a2 as string, any: a3 as string };
  }

  const names = [f.kind, f.plural, f.singular, f.shortcut, f.category, f.any, f.fn]
    .filter((n) => n !== undefined);
  if (names.length > 1) {
    throw new ResourceSelectorError(
      `Ambiguous resource specification: give only one of kind, plural, singular, shortcut, category, or a name`,
    );
  }
  if (names.length < 1) {
    throw new ResourceSelectorError(
      `A resource needs a name: e.g. "kopfexamples", ("kopf.dev", "v1", "kopfexamples"), or { kind: "KopfExample" }`,
    );
  }
  if (names.some((n) => n === "")) {
    throw new ResourceSelectorError(
      `Resource names must not be empty strings: leave the field out instead`,
    );
  }
  if (f.version === "") {
    throw new ResourceSelectorError(`A resource version must not be empty: leave it out instead`);
  }
  return f;
}

function fromFields(o: SelectorFields): ParsedSpec {
  const known = new Set([
    "group",
    "version",
    "apiVersion",
    "kind",
    "plural",
    "singular",
    "shortcut",
    "category",
    "any",
  ]);
  const unknown = Object.keys(o).filter((k) => !known.has(k));
  if (unknown.length) {
    throw new ResourceSelectorError(
      `Unknown resource selector field(s) ${unknown.join(", ")}: use ${[...known].join(", ")}`,
    );
  }
  let { group, version } = o;
  if (o.apiVersion !== undefined) {
    if (group !== undefined || version !== undefined) {
      throw new ResourceSelectorError(
        `Give either apiVersion or group/version for a resource, not both`,
      );
    }
    const slash = o.apiVersion.lastIndexOf("/");
    group = slash < 0 ? "" : o.apiVersion.slice(0, slash);
    version = slash < 0 ? o.apiVersion : o.apiVersion.slice(slash + 1);
  }
  // EVERYTHING given as the plural: every resource of the group (and version), as `any` means.
  if (o.plural === EVERYTHING) {
    if (o.any !== undefined) {
      throw new ResourceSelectorError(
        `Ambiguous resource specification: give only one of kind, plural, singular, shortcut, category, or a name`,
      );
    }
    return { ...fromFields({ ...o, plural: undefined }), any: EVERYTHING };
  }
  return {
    group,
    version,
    kind: o.kind,
    plural: o.plural,
    singular: o.singular,
    shortcut: o.shortcut,
    category: o.category,
    any: o.any,
  };
}

function isEvents(r: Resource): boolean {
  return r.plural === "events" && (r.group === "" || r.group === "events.k8s.io");
}

/** Custom resource definitions (any served version). */
export const CRDS: Selector = new Selector("apiextensions.k8s.io", "customresourcedefinitions");
/** Core v1 events. */
export const EVENTS: Selector = new Selector("v1", "events");
/** Core v1 namespaces. */
export const NAMESPACES: Selector = new Selector("v1", "namespaces");
/** Kopf's cluster-scoped peering objects. */
export const CLUSTER_PEERINGS: Selector = new Selector("kopf.dev/v1", "clusterkopfpeerings");
/** Kopf's namespaced peering objects. */
export const NAMESPACED_PEERINGS: Selector = new Selector("kopf.dev/v1", "kopfpeerings");
/** Kopf's cluster-scoped peering objects of the legacy group (kopf<1.29). */
export const CLUSTER_PEERINGS_LEGACY: Selector = new Selector(
  "zalando.org/v1",
  "clusterkopfpeerings",
);
/** Kopf's namespaced peering objects of the legacy group (kopf<1.29). */
export const NAMESPACED_PEERINGS_LEGACY: Selector = new Selector("zalando.org/v1", "kopfpeerings");
/** Mutating admission webhook configurations. */
export const MUTATING_WEBHOOK: Selector = new Selector(
  "admissionregistration.k8s.io",
  "mutatingwebhookconfigurations",
);
/** Validating admission webhook configurations. */
export const VALIDATING_WEBHOOK: Selector = new Selector(
  "admissionregistration.k8s.io",
  "validatingwebhookconfigurations",
);

/** A namespace pattern of `-n`: comma-separated globs and `!negations`, or a RegExp. */
export type NamespacePattern = string | RegExp;

/**
 * Whether a namespace matches one pattern or any of several (as several `-n`
 * options do). One pattern is comma-separated globs (`*`, `?`, `[abc]`,
 * `[!abc]`); a glob starting with `!` excludes. If the first glob is a
 * negation, a leading `*` is implied. The first glob is decisive: a namespace
 * it does not match never matches; later inclusive globs only re-include
 * namespaces that a negation excluded. A RegExp must match the whole name.
 *
 * @param patterns One pattern or several; several match if any matches.
 * @param name The namespace name.
 * @returns True if the namespace is served.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { matchNamespace } from "./references.ts";
 *
 * assert.ok(matchNamespace("ns-*", "ns-1"));
 * assert.ok(!matchNamespace("!kube-*", "kube-system"));
 * assert.ok(matchNamespace(["a", "b"], "b"));
 * const p = "myapp-*,!*-pr-*,*-pr-123";
 * assert.deepEqual(
 *   ["myapp-live", "myapp-pr-456", "myapp-pr-123", "otherapp-pr-123"].map((n) => matchNamespace(p, n)),
 *   [true, false, true, false],
 * );
 * ```
 */
export function matchNamespace(
  patterns: NamespacePattern | Iterable<NamespacePattern>,
  name: string,
): boolean {
  const list = typeof patterns === "string" || patterns instanceof RegExp
    ? [patterns]
    : [...patterns];
  return list.some((pattern) => matchOne(pattern, name));
}

function matchOne(pattern: NamespacePattern, name: string): boolean {
  if (pattern instanceof RegExp) {
    const m = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, "")).exec(name);
    return m !== null && m.index === 0 && m[0].length === name.length;
  }
  const globs = pattern.split(",").map((g) => g.trim());
  if (!globs.length || globs[0]!.startsWith("!")) globs.unshift("*");
  const first = globToRegExp(globs[0]!).test(name);
  let matches = first;
  for (const glob of globs.slice(1)) {
    if (glob.startsWith("!")) {
      matches = matches && !globToRegExp(glob.replace(/^!+/, "")).test(name);
    } else {
      matches = matches || (first && globToRegExp(glob).test(name));
    }
  }
  return matches;
}

/**
 * The patterns that are plain namespace names (no globs, negations, commas,
 * or regexps): what an operator can still serve "as is" when it may not
 * list namespaces.
 *
 * @param patterns The `-n` patterns.
 * @returns The plain names among them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { selectSpecificNamespaces } from "./references.ts";
 * assert.deepEqual(selectSpecificNamespaces(["ns1", "ns-*", "!x", /re/]), ["ns1"]);
 * ```
 */
export function selectSpecificNamespaces(patterns: Iterable<NamespacePattern>): string[] {
  const out = new Set<string>();
  for (const p of patterns) {
    if (typeof p === "string" && !/[!*?,[]/.test(p)) out.add(p);
  }
  return [...out];
}

// fnmatch-style glob → anchored RegExp: * ? [seq] [!seq]; everything else literal.
function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") re += ".*";
    else if (c === "?") re += ".";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end < 0) {
        re += "\\[";
        continue;
      }
      let body = glob.slice(i + 1, end);
      if (body.startsWith("!")) body = "^" + body.slice(1);
      else if (body.startsWith("^")) body = "\\" + body;
      re += `[${body.replace(/\\/g, "\\\\")}]`;
      i = end;
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "s");
}
