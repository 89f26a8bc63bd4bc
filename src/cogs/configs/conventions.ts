/**
 * How storages name their annotations, and how they recognise what Kopf-based
 * operators (this one or others) wrote — the rules Python Kopf follows, so
 * that both ports read and write the same keys on the same objects.
 *
 * Annotation keys are `prefix/name`; Kubernetes limits the name to 63
 * characters of `[A-Za-z0-9._-]`. Handler ids are sanitised (`/` → `.`,
 * `<` and `>` → `_`), and ids that are too long are cut and suffixed with a
 * hash of the id: `-` plus the base64 (alphabet `+/` → `-.`) of a 4-byte
 * BLAKE2b digest, with trailing `=`, `-`, `.` stripped. The hash is our own
 * (`_blake2b.ts`; Web Crypto has no BLAKE2, and a package for it cost an idle
 * operator ≈1 MiB): it takes the digest size as a parameter of the hash, as
 * CPython's `hashlib.blake2b(..., digest_size=4)` does, so the keys match
 * Kopf's bytes.
 *
 * There are two key forms, and by default both are written and read:
 * - **v2** (current): only the name counts towards 63 characters; an id over
 *   63 characters is cut to `63 - len(suffix)` and suffixed with the hash of
 *   the *original* id.
 * - **v1** (legacy): the whole key, prefix included, counts towards 63; when
 *   the sanitised id does not fit, it is cut and suffixed with the hash of
 *   the *sanitised* id.
 *
 * Other Kopf-based operators' annotations are recognised so that one
 * operator's bookkeeping never looks like an essential change to another
 * (which would make them ping-pong forever): a prefix counts as Kopf's when it
 * is `kopf.zalando.org` or ends with `.kopf.zalando.org`, or when any key under
 * it is `<prefix>/kopf-managed` — the marker storages with a custom prefix add.
 *
 * @module
 */

import { isObject, type JsonObject } from "../structs/_json.ts";
import { blake2b } from "./_blake2b.ts";
import { annotationsOf, type Body, metaOf } from "../structs/bodies.ts";
import type { Patch } from "../structs/patches.ts";

/**
 * The annotation kubectl keeps the last applied configuration in; never part of an essence.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KUBECTL_LAST_APPLIED } from "./conventions.ts";
 * assert.deepEqual(KUBECTL_LAST_APPLIED, "kubectl.kubernetes.io/last-applied-configuration");
 * ```
 */
export const KUBECTL_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * The marker name that brands a custom prefix as a Kopf-based operator's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KOPF_MANAGED_MARKER } from "./conventions.ts";
 * assert.deepEqual(`my-op.example.com/${KOPF_MANAGED_MARKER}`, "my-op.example.com/kopf-managed");
 * ```
 */
export const KOPF_MANAGED_MARKER = "kopf-managed";

/**
 * Prefixes known to belong to Kopf-based operators.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KNOWN_PREFIXES } from "./conventions.ts";
 * assert.deepEqual(KNOWN_PREFIXES, ["kopf.zalando.org"]);
 * ```
 */
export const KNOWN_PREFIXES: readonly string[] = Object.freeze(["kopf.zalando.org"]);

/**
 * Kubernetes' limit on the name part of an annotation key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MAX_NAME_LENGTH } from "./conventions.ts";
 * assert.deepEqual(MAX_NAME_LENGTH, 63);
 * ```
 */
export const MAX_NAME_LENGTH = 63;

/**
 * Kubernetes' limit on a whole annotation key (prefix, `/`, name).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MAX_KEY_LENGTH } from "./conventions.ts";
 * assert.deepEqual(MAX_KEY_LENGTH, 253);
 * ```
 */
export const MAX_KEY_LENGTH = 253;

/** Splits into code points, as Python counts and slices strings. */
function chars(s: string): string[] {
  return Array.from(s);
}

/** Python's `s[:n]`, including its negative-index meaning. */
function head(s: string, n: number): string {
  const cs = chars(s);
  return cs.slice(0, n < 0 ? Math.max(0, cs.length + n) : n).join("");
}

/**
 * Replaces the characters Kubernetes forbids in annotation names:
 * `/` → `.`, `<` → `_`, `>` → `_`.
 *
 * @param key A handler id or another record key.
 * @returns The sanitised key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { makeSafeKey } from "./conventions.ts";
 * assert.deepEqual(makeSafeKey("create_fn/sub<1>"), "create_fn.sub_1_");
 * ```
 */
export function makeSafeKey(key: string): string {
  return key.replaceAll("/", ".").replaceAll("<", "_").replaceAll(">", "_");
}

/**
 * The hash suffix for a key: `"-"` + base64 (with `-` and `.` instead of `+`
 * and `/`) of the 4-byte BLAKE2b digest of the key's UTF-8 bytes, with the
 * trailing `=`, `-` and `.` stripped.
 *
 * @param key The key to hash.
 * @returns The suffix, at most 7 characters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { makeSuffix } from "./conventions.ts";
 * assert.deepEqual(makeSuffix("abc"), "-Y5BiSA"); // BLAKE2b-32 of "abc" is 63 90 62 48
 * ```
 */
export function makeSuffix(key: string): string {
  const digest = blake2b(new TextEncoder().encode(key), 4);
  const b64 = btoa(String.fromCharCode(...digest)).replaceAll("+", "-").replaceAll("/", ".");
  return `-${b64}`.replace(/[=.-]+$/, "");
}

/**
 * Appends `-ofDRS` to keys stored on a ReplicaSet owned by a Deployment:
 * Kubernetes copies a Deployment's annotations down to its ReplicaSets, which
 * would otherwise overwrite the ReplicaSet's own Kopf state.
 *
 * @param key The key.
 * @param body The object the key is for.
 * @returns The key, marked if needed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { markKey } from "./conventions.ts";
 * const rs = { kind: "ReplicaSet", metadata: { ownerReferences: [{ kind: "Deployment" }] } };
 * assert.deepEqual(markKey("last-handled-configuration", rs), "last-handled-configuration-ofDRS");
 * ```
 */
export function markKey(key: string, body: Body): string {
  // The kind first: only ReplicaSets have their owners looked at (this runs on every event).
  if (body.kind !== "ReplicaSet") return key;
  const owners = metaOf(body).ownerReferences;
  const ownedByDeployment = Array.isArray(owners) &&
    owners.some((owner) => isObject(owner) && owner.kind === "Deployment");
  return ownedByDeployment ? `${key}-ofDRS` : key;
}

/** Options of {@link AnnotationKeys}. */
export interface AnnotationKeysOptions {
  /** The annotations' prefix (the part before `/`); must not be empty. */
  prefix: string;
  /** Whether to also write and read the legacy v1 keys. */
  v1: boolean;
}

/**
 * Forms annotation keys for a storage with a given prefix: the current v2
 * key first, then the legacy v1 key when enabled and different.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AnnotationKeys } from "./conventions.ts";
 * const keys = new AnnotationKeys({ prefix: "kopf.zalando.org", v1: true });
 * assert.deepEqual(keys.makeKeys("create_fn/sub1"), ["kopf.zalando.org/create_fn.sub1"]);
 * ```
 */
export class AnnotationKeys {
  /** The prefix (without the `/`). */
  readonly prefix: string;
  /** Whether legacy v1 keys are written and read too. */
  readonly v1: boolean;

  /**
   * @param options The prefix and the v1 mode.
   * @throws {TypeError} When the prefix is empty.
   */
  constructor(options: AnnotationKeysOptions) {
    if (typeof options.prefix !== "string" || options.prefix === "") {
      throw new TypeError("Annotation storages need a non-empty prefix (e.g. 'kopf.zalando.org').");
    }
    this.prefix = options.prefix;
    this.v1 = options.v1;
    if (chars(this.prefix).length > MAX_KEY_LENGTH - MAX_NAME_LENGTH - 1) {
      console.warn(
        `The annotations prefix ${JSON.stringify(this.prefix)} is over ${
          MAX_KEY_LENGTH - MAX_NAME_LENGTH - 1
        } characters; patches with long handler ids may be rejected.`,
      );
    }
  }

  /**
   * All keys to write (and to read, in this order) for a record key.
   *
   * @param key The record key (a handler id, `touch-dummy`, …).
   * @param body The object, if known (for the Deployment/ReplicaSet marking).
   * @returns The v2 key, then the v1 key if enabled and different.
   */
  makeKeys(key: string, body?: Body): string[] {
    return [...this.keysOf(key, body)];
  }

  /**
   * The same keys as {@link AnnotationKeys.makeKeys}, without a copy: one frozen array per
   * record key, shared by every caller (the storages read them on every processed event).
   *
   * @param key The record key (a handler id, `touch-dummy`, …).
   * @param body The object, if known (for the Deployment/ReplicaSet marking).
   * @returns The v2 key, then the v1 key if enabled and different (read-only).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { AnnotationKeys } from "./conventions.ts";
   * const keys = new AnnotationKeys({ prefix: "kopf.zalando.org", v1: true });
   * assert.deepEqual(keys.keysOf("fn") === keys.keysOf("fn"), true);
   * ```
   */
  keysOf(key: string, body?: Body): readonly string[] {
    const marked = body === undefined ? key : markKey(key, body);
    // Every cycle asks for the same few keys; hashing them each time is waste.
    let keys = this.#made.get(marked);
    if (!keys) {
      const v2 = this.makeV2Key(marked);
      const v1 = this.v1 ? this.makeV1Key(marked) : v2;
      keys = Object.freeze(v1 === v2 ? [v2] : [v2, v1]);
      if (this.#made.size >= 1000) this.#made.clear();
      this.#made.set(marked, keys);
    }
    return keys;
  }

  #made = new Map<string, readonly string[]>();

  /**
   * The legacy key: the whole key, prefix included, fits in `maxLength`.
   *
   * @param key The record key.
   * @param maxLength The limit (63).
   * @returns The full annotation key.
   */
  makeV1Key(key: string, maxLength: number = MAX_NAME_LENGTH): string {
    const safeKey = makeSafeKey(key);
    const prefix = `${this.prefix}/`;
    const prefixLength = chars(prefix).length;
    const suffix = chars(safeKey).length <= maxLength - prefixLength ? "" : makeSuffix(safeKey);
    return `${prefix}${head(safeKey, maxLength - prefixLength - chars(suffix).length)}${suffix}`;
  }

  /**
   * The current key: the name part alone fits in `maxLength`.
   *
   * @param key The record key.
   * @param maxLength The limit (63).
   * @returns The full annotation key.
   */
  makeV2Key(key: string, maxLength: number = MAX_NAME_LENGTH): string {
    const suffix = chars(key).length > maxLength ? makeSuffix(key) : "";
    const limit = Math.max(0, maxLength - chars(suffix).length);
    return `${this.prefix}/${head(makeSafeKey(key), limit)}${suffix}`;
  }
}

/**
 * The annotation prefixes that belong to Kopf-based operators, judged from a
 * set of annotation keys (see the module's notes).
 *
 * @param keys Annotation keys.
 * @returns The prefixes (without `/`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { detectMarkedPrefixes } from "./conventions.ts";
 * const found = detectMarkedPrefixes([
 *   "kopf.zalando.org/x", "my-op.example.com/kopf-managed", "my-op.example.com/fn",
 *   "team.kopf.zalando.org/y", "example.com/other",
 * ]);
 * assert.deepEqual([...found].sort(), ["kopf.zalando.org", "my-op.example.com", "team.kopf.zalando.org"]);
 * ```
 */
export function detectMarkedPrefixes(keys: Iterable<string>): Set<string> {
  // Run on every essence built (every processed event): no strings cut but the prefixes found.
  const prefixes = new Set<string>();
  for (const key of keys) {
    const slash = key.indexOf("/");
    if (slash >= 0 && isMarked(key, slash)) prefixes.add(key.slice(0, slash));
  }
  return prefixes;
}

/**
 * Whether an annotation key marks its prefix (before its first `/`) as a Kopf-based
 * operator's: {@link detectMarkedPrefixes} for one key, without cutting the prefix out.
 *
 * @param key An annotation key.
 * @returns True when the key's prefix is one that {@link detectMarkedPrefixes} would find.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isMarkedKey } from "./conventions.ts";
 * assert.equal(isMarkedKey("team.kopf.zalando.org/y"), true);
 * assert.equal(isMarkedKey("my-op.example.com/kopf-managed"), true);
 * assert.equal(isMarkedKey("my-op.example.com/fn"), false); // marked by the other key only
 * assert.equal(isMarkedKey("kopf.zalando.org"), false); // no prefix
 * ```
 */
export function isMarkedKey(key: string): boolean {
  const slash = key.indexOf("/");
  return slash >= 0 && isMarked(key, slash);
}

/**
 * Whether an annotation key (its first `/` at `slash`) is the marker, or its prefix is a known
 * one or a subdomain of one — compared in place.
 */
function isMarked(key: string, slash: number): boolean {
  const marker = KOPF_MANAGED_MARKER;
  if (key.length - slash - 1 === marker.length && key.startsWith(marker, slash + 1)) return true;
  for (const known of KNOWN_PREFIXES) {
    const start = slash - known.length;
    if (start < 0 || !key.startsWith(known, start)) continue;
    if (start === 0 || key.charCodeAt(start - 1) === 46 /* . */) return true;
  }
  return false;
}

/**
 * Brands a custom prefix as a Kopf-based operator's by adding
 * `<prefix>/kopf-managed: "yes"` to the patch, unless the prefix starts with
 * `kopf.` (already known) or the marker is on the object or in the patch.
 *
 * @param prefix The storage's prefix.
 * @param patch The patch to add the marker to.
 * @param body The object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { storeMarker } from "./conventions.ts";
 * import { Patch } from "@kopf/kopf";
 * const patch = new Patch();
 * storeMarker("my-op.example.com", patch, {});
 * assert.deepEqual(JSON.parse(JSON.stringify(patch)), {"metadata":{"annotations":{"my-op.example.com/kopf-managed":"yes"}}});
 * ```
 */
export function storeMarker(prefix: string, patch: Patch, body: Body): void {
  if (!prefix || prefix.startsWith("kopf.")) return;
  const marker = `${prefix}/${KOPF_MANAGED_MARKER}`;
  if (Object.hasOwn(annotationsOf(body), marker)) return;
  if (patch.has(["metadata", "annotations", marker])) return;
  patch.metadata.annotations[marker] = "yes";
}

/**
 * Removes the given annotations from an essence, in place.
 *
 * @param essence The essence (or any body-like object).
 * @param keys The annotation keys to remove.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { removeAnnotations } from "./conventions.ts";
 * const essence = { metadata: { annotations: { a: "1", b: "2" } } };
 * removeAnnotations(essence, ["a"]);
 * assert.deepEqual(JSON.parse(JSON.stringify(essence)), {"metadata":{"annotations":{"b":"2"}}});
 * ```
 */
export function removeAnnotations(essence: JsonObject, keys: Iterable<string>): void {
  const meta = essence.metadata;
  if (!isObject(meta) || !isObject(meta.annotations)) return;
  const annotations = meta.annotations;
  for (const key of keys) delete annotations[key];
}

/**
 * Removes, in place, the stanzas that are empty: `metadata.annotations`,
 * `metadata.labels`, then `metadata`, and `status` — but never `spec`.
 *
 * @param essence The essence.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { removeEmptyStanzas } from "./conventions.ts";
 * const essence = { spec: {}, metadata: { labels: {}, annotations: {} }, status: {} };
 * removeEmptyStanzas(essence);
 * assert.deepEqual(JSON.parse(JSON.stringify(essence)), {"spec":{}});
 * ```
 */
export function removeEmptyStanzas(essence: JsonObject): void {
  const meta = essence.metadata;
  if (isObject(meta)) {
    if (Object.hasOwn(meta, "annotations") && isEmptyStanza(meta.annotations)) {
      delete meta.annotations;
    }
    if (Object.hasOwn(meta, "labels") && isEmptyStanza(meta.labels)) delete meta.labels;
  }
  if (Object.hasOwn(essence, "metadata") && isEmptyStanza(essence.metadata)) {
    delete essence.metadata;
  }
  if (Object.hasOwn(essence, "status") && isEmptyStanza(essence.status)) delete essence.status;
}

/** Whether a stanza is empty: a falsy scalar, an object without keys, an empty array. */
function isEmptyStanza(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === "" || value === 0) {
    return true;
  }
  if (Array.isArray(value)) return value.length === 0;
  if (!isObject(value)) return false;
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}
