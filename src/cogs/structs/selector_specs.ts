/**
 * What a developer may write to select resources — one to three positional
 * strings, one object of fields, a callable filter, or {@link EVERYTHING} — and
 * how each form is parsed into the fields a `Selector` (`selector.ts`) matches by, with
 * the {@link ResourceSelectorError} of a form that names nothing or too much.
 *
 * @module
 */

import type { Resource } from "./resource.ts";
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

/** A specification in fields, as a `Selector` keeps them. */
export interface ParsedSpec {
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

/** Parses any form of {@link SelectorSpec}; throws a {@link ResourceSelectorError} for one that is ambiguous or empty. */
export function parseSpec(args: unknown[]): ParsedSpec {
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
