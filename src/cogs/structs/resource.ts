/**
 * One concrete API endpoint as cluster discovery finds it: a {@link Resource}
 * (group, version, plural, and what discovery says of it — kind, names,
 * scope, verbs), and the URLs of its objects.
 *
 * @module
 */

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
    if (namespace !== undefined && namespace !== "") path += `/namespaces/${encoded(namespace)}`;
    if (this.plural) path += `/${this.plural}`;
    if (name) path += `/${encoded(name)}`;
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

/** What `encodeURIComponent` leaves as it is (every Kubernetes name is): nothing to encode. */
const UNRESERVED = /^[\w.!~*'()-]*$/;

/** `encodeURIComponent(text)`, without a new string when nothing needs encoding. */
function encoded(text: string): string {
  return UNRESERVED.test(text) ? text : encodeURIComponent(text);
}
