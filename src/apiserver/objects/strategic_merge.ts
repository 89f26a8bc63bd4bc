/**
 * Kubernetes strategic merge patch (`application/strategic-merge-patch+json`)
 * for built-in kinds: the patch `kubectl apply`, `kubectl patch` and
 * `kubectl edit` send by default.
 *
 * Why it exists: a JSON merge patch replaces lists, so patching one container
 * of a Deployment would drop the others. A strategic merge patch merges the
 * lists that Kubernetes declares mergeable (containers by `name`, ports by
 * `containerPort`, finalizers as a set, ...) and understands the directives
 * kubectl puts in its patches. Real Kubernetes reads the merge keys from Go
 * struct tags; we have no types, so a table below lists them by kind and path.
 * Lists not in the table are replaced, as Kubernetes does for atomic lists.
 * Why ours: strategic merge is not a standard but Kubernetes' own rules — the
 * `$patch`/`$retainKeys`/`$setElementOrder` directives and the merge keys per
 * field live in its Go code (`apimachinery`'s `strategicpatch` and the API
 * types' struct tags), not in a spec a general library could follow; this
 * module ports them.
 *
 * Behaviour, as in Kubernetes:
 * - maps merge recursively; `null` deletes a key;
 * - merge-keyed lists merge item by item; `{"$patch": "delete", <key>: v}`
 *   deletes every item with that key; a `{"$patch": "replace"}` item makes
 *   the other items of the patch list replace the list;
 * - primitive merge lists (`metadata.finalizers`) merge as a set;
 * - `$patch: replace` on a map replaces it; `$patch: delete` empties it;
 * - `$retainKeys: [...]` clears the keys of the original map not listed;
 * - `$deleteFromPrimitiveList/<field>: [...]` removes values from a list;
 * - `$setElementOrder/<field>: [...]` orders the merged list; it and all other
 *   directives are removed from the result.
 *
 * Ordering without `$setElementOrder` (Kubernetes' rule, which surprises):
 * items named in the patch come in the patch's order, and each item only on
 * the server stays in front of the patch items that followed it there. A new
 * item at the head of the patch therefore lands *before* the server's items:
 * patching `[a, b]` with `[c]` gives `[c, a, b]`.
 *
 * Differences we chose: a value added where the original had none is merged
 * into an empty value, so nested directives and `null`s never reach storage;
 * `$patch: replace` on a map builds the map the same way. Neither input is
 * mutated; untouched subtrees of the original are shared with the result.
 *
 * @module
 */

import { isObject, type JsonObject, setOwn } from "../../cogs/structs/_json.ts";

/**
 * A strategic merge patch that is malformed: a bad directive, a list item
 * without its merge key, or a `$setElementOrder` that contradicts the patch.
 * The API server answers it with 422 Unprocessable Entity.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyStrategicMergePatch, StrategicMergeError } from "./strategic_merge.ts";
 *
 * assert.throws(
 *   () => applyStrategicMergePatch({}, { spec: { $patch: "explode" } }, "Deployment"),
 *   StrategicMergeError,
 * );
 * ```
 */
export class StrategicMergeError extends Error {
  /**
   * Creates the error.
   *
   * @param message What is malformed in the patch, and where.
   * @param options The usual error options, e.g. a `cause`.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StrategicMergeError";
  }
}

/** For each mergeable list (by dotted path of field names): its merge key, or null for a set of primitives. */
type Rules = ReadonlyMap<string, string | null>;

function podSpecRules(prefix: string): [string, string | null][] {
  const rules: [string, string | null][] = [
    [`${prefix}volumes`, "name"],
    [`${prefix}imagePullSecrets`, "name"],
    [`${prefix}hostAliases`, "ip"],
    [`${prefix}topologySpreadConstraints`, "topologyKey"],
    [`${prefix}schedulingGates`, "name"],
    [`${prefix}resourceClaims`, "name"],
  ];
  for (const list of ["containers", "initContainers", "ephemeralContainers"]) {
    rules.push(
      [`${prefix}${list}`, "name"],
      [`${prefix}${list}.ports`, "containerPort"],
      [`${prefix}${list}.env`, "name"],
      [`${prefix}${list}.volumeMounts`, "mountPath"],
      [`${prefix}${list}.volumeDevices`, "devicePath"],
    );
  }
  return rules;
}

const COMMON_RULES: [string, string | null][] = [
  ["metadata.ownerReferences", "uid"],
  ["metadata.finalizers", null],
  ["status.conditions", "type"],
];

function rules(...specific: [string, string | null][][]): Rules {
  return new Map([...COMMON_RULES, ...specific.flat()]);
}

const WORKLOAD_RULES = rules(podSpecRules("spec.template.spec."));

/** Merge rules by lowercase kind; plurals are found by dropping the final "s". */
const RULES_BY_KIND: ReadonlyMap<string, Rules> = new Map([
  ["pod", rules(podSpecRules("spec."), [["status.podIPs", "ip"], ["status.hostIPs", "ip"]])],
  ["podtemplate", rules(podSpecRules("template.spec."))],
  ["deployment", WORKLOAD_RULES],
  ["statefulset", WORKLOAD_RULES],
  ["replicaset", WORKLOAD_RULES],
  ["daemonset", WORKLOAD_RULES],
  ["job", WORKLOAD_RULES],
  ["replicationcontroller", WORKLOAD_RULES],
  ["cronjob", rules(podSpecRules("spec.jobTemplate.spec.template.spec."))],
  ["service", rules([["spec.ports", "port"]])],
  ["serviceaccount", rules([["secrets", "name"]])],
  ["node", rules([["status.addresses", "type"]])],
]);

const DEFAULT_RULES = rules();

function rulesFor(kind: string): Rules {
  const lower = kind.toLowerCase();
  return RULES_BY_KIND.get(lower) ??
    (lower.endsWith("s") ? RULES_BY_KIND.get(lower.slice(0, -1)) : undefined) ??
    DEFAULT_RULES;
}

const PATCH = "$patch";
const RETAIN_KEYS = "$retainKeys";
const SET_ORDER = "$setElementOrder/";
const DELETE_FROM = "$deleteFromPrimitiveList/";

function isPrimitive(value: unknown): value is string | number | boolean {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

function isDirective(key: string): boolean {
  return key === PATCH || key === RETAIN_KEYS || key.startsWith(SET_ORDER) ||
    key.startsWith(DELETE_FROM);
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function where(path: string): string {
  return path === "" ? "the patch" : `"${path}"`;
}

function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

/** Merges a patch map into an original map (or into nothing). */
function mergeMap(
  original: JsonObject | undefined,
  patch: JsonObject,
  path: string,
  rules: Rules,
): JsonObject {
  if (Object.hasOwn(patch, PATCH)) {
    const directive = patch[PATCH];
    if (directive === "delete") return {};
    if (directive === "replace") {
      const rest = { ...patch };
      delete rest[PATCH];
      return mergeMap(undefined, rest, path, rules);
    }
    throw new StrategicMergeError(
      `${where(path)} has an unknown $patch directive ${show(directive)} for a map ` +
        `(use "replace" or "delete")`,
    );
  }
  const result: JsonObject = original === undefined ? {} : { ...original };

  if (Object.hasOwn(patch, RETAIN_KEYS)) retainKeys(result, patch, path);

  const orders = new Map<string, unknown[]>();
  for (const key of Object.keys(patch)) {
    if (key.startsWith(SET_ORDER)) {
      const field = key.slice(SET_ORDER.length);
      const order = patch[key];
      if (field === "" || !Array.isArray(order)) {
        throw new StrategicMergeError(
          `${where(path)} has a malformed ${show(key)}: it must name a field and hold a list`,
        );
      }
      orders.set(field, order);
    } else if (key.startsWith(DELETE_FROM)) {
      const field = key.slice(DELETE_FROM.length);
      const toDelete = patch[key];
      if (field === "" || !Array.isArray(toDelete) || !toDelete.every(isPrimitive)) {
        const why = "it must name a field and hold a list of primitives";
        throw new StrategicMergeError(`${where(path)} has a malformed ${show(key)}: ${why}`);
      }
      const current = result[field];
      if (Array.isArray(current) && Object.hasOwn(result, field)) {
        setOwn(result, field, current.filter((item) => !toDelete.includes(item)));
      }
    }
  }

  for (const key of Object.keys(patch)) {
    if (isDirective(key)) continue;
    const value = patch[key];
    const fieldPath = join(path, key);
    if (value === null) {
      delete result[key];
      continue;
    }
    const current = Object.hasOwn(result, key) ? result[key] : undefined;
    if (isObject(value)) {
      setOwn(
        result,
        key,
        mergeMap(isObject(current) ? current : undefined, value, fieldPath, rules),
      );
    } else if (Array.isArray(value) && rules.has(fieldPath)) {
      const base = Array.isArray(current) ? current : [];
      setOwn(
        result,
        key,
        mergeList(base, value, rules.get(fieldPath) ?? null, fieldPath, orders.get(key), rules),
      );
    } else {
      setOwn(result, key, value);
    }
  }

  // Orders for lists the patch did not change: reorder what is there.
  for (const [field, order] of orders) {
    if (Object.hasOwn(patch, field)) continue;
    const current = Object.hasOwn(result, field) ? result[field] : undefined;
    const fieldPath = join(path, field);
    if (!Array.isArray(current) || !rules.has(fieldPath)) continue;
    setOwn(
      result,
      field,
      mergeList(current, [], rules.get(fieldPath) ?? null, fieldPath, order, rules),
    );
  }
  return result;
}

function retainKeys(result: JsonObject, patch: JsonObject, path: string): void {
  const keep = patch[RETAIN_KEYS];
  if (!Array.isArray(keep) || !keep.every((k) => typeof k === "string")) {
    throw new StrategicMergeError(
      `${where(path)} has a malformed $retainKeys: it must be a list of field names`,
    );
  }
  for (const key of Object.keys(patch)) {
    if (isDirective(key) || patch[key] === null) continue;
    if (!keep.includes(key)) {
      const field = show(key);
      throw new StrategicMergeError(
        `${where(path)} sets ${field}, which its $retainKeys does not list; ` +
          "list every field the patch sets",
      );
    }
  }
  for (const key of Object.keys(result)) if (!keep.includes(key)) delete result[key];
}

/** The identity of a list item: its merge key's value, or the primitive itself. */
type Identity = unknown;

/** Merges a patch list into an original list by the field's rule, then orders it. */
function mergeList(
  original: unknown[],
  patch: unknown[],
  mergeKey: string | null,
  path: string,
  order: unknown[] | undefined,
  rules: Rules,
): unknown[] {
  if (mergeKey === null) {
    for (const item of [...patch, ...(order ?? [])]) {
      if (!isPrimitive(item)) {
        throw new StrategicMergeError(
          `${where(path)} is a list of primitives, but the patch has ${show(item)}`,
        );
      }
    }
    const merged: unknown[] = [];
    for (const item of [...original, ...patch]) if (!merged.includes(item)) merged.push(item);
    if (order !== undefined) checkOrder(patch, order, (item) => item, path);
    return arrange(merged, original, order ?? patch, (item) => item);
  }

  const identity = (item: unknown, what: string): Identity => {
    if (!isObject(item)) {
      throw new StrategicMergeError(`${where(path)} must hold maps, but ${what} has ${show(item)}`);
    }
    if (!Object.hasOwn(item, mergeKey)) {
      throw new StrategicMergeError(
        `${what} item ${show(item)} of ${where(path)} does not contain its merge key "${mergeKey}"`,
      );
    }
    return item[mergeKey];
  };
  const identityOf = (item: unknown): Identity =>
    isObject(item) && Object.hasOwn(item, mergeKey) ? item[mergeKey] : undefined;

  let base = original;
  let replace = false;
  const items: JsonObject[] = [];
  for (const item of patch) {
    if (!isObject(item)) {
      throw new StrategicMergeError(
        `${where(path)} must hold maps, but the patch has ${show(item)}`,
      );
    }
    if (!Object.hasOwn(item, PATCH)) {
      identity(item, "the patch");
      items.push(item);
      continue;
    }
    const directive = item[PATCH];
    if (directive === "delete") {
      const key = identity(item, "the $patch: delete");
      base = base.filter((entry) => identityOf(entry) !== key);
    } else if (directive === "replace") {
      replace = true;
    } else {
      throw new StrategicMergeError(
        `${where(path)} has an unknown $patch directive ${show(directive)} in a list item ` +
          `(use "delete" with the merge key "${mergeKey}", or "replace")`,
      );
    }
  }
  if (order !== undefined) {
    for (const entry of order) identity(entry, "the $setElementOrder");
    checkOrder(items, order, identityOf, path);
  }

  if (replace) {
    const fresh = items.map((item) => mergeMap(undefined, item, path, rules));
    return order === undefined ? fresh : arrange(fresh, fresh, order, identityOf);
  }
  const merged = base.slice();
  for (const item of items) {
    const key = identityOf(item);
    const at = merged.findIndex((entry) => identityOf(entry) === key);
    if (at >= 0) merged[at] = mergeMap(merged[at] as JsonObject, item, path, rules);
    else merged.push(mergeMap(undefined, item, path, rules));
  }
  return arrange(merged, base, order ?? items, identityOf);
}

/** Fails when the patch list's items are not a subsequence of the `$setElementOrder` list. */
function checkOrder(
  items: unknown[],
  order: unknown[],
  identityOf: (item: unknown) => Identity,
  path: string,
): void {
  let at = 0;
  for (const item of items) {
    const key = identityOf(item);
    while (at < order.length && identityOf(order[at]) !== key) at++;
    if (at === order.length) {
      throw new StrategicMergeError(
        `the order of the items in ${where(path)} does not match its $setElementOrder list ` +
          `(every patched item must be listed there, in the same order)`,
      );
    }
    at++;
  }
}

/**
 * Orders a merged list as Kubernetes does: items named in `order` by their
 * place there; the rest by their place on the server, each kept in front of
 * the first ordered item that followed it on the server.
 */
function arrange(
  merged: unknown[],
  server: unknown[],
  order: unknown[],
  identityOf: (item: unknown) => Identity,
): unknown[] {
  const rank = new Map<Identity, number>();
  order.forEach((item, i) => {
    const key = identityOf(item);
    if (!rank.has(key)) rank.set(key, i);
  });
  const serverRank = new Map<Identity, number>();
  server.forEach((item, i) => {
    const key = identityOf(item);
    if (!serverRank.has(key)) serverRank.set(key, i);
  });
  const ordered: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const item of merged) (rank.has(identityOf(item)) ? ordered : serverOnly).push(item);
  ordered.sort((a, b) => (rank.get(identityOf(a)) ?? 0) - (rank.get(identityOf(b)) ?? 0));

  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < ordered.length) {
    if (j >= ordered.length) out.push(serverOnly[i++]);
    else if (i >= serverOnly.length) out.push(ordered[j++]);
    else {
      const left = serverRank.get(identityOf(serverOnly[i]));
      const right = serverRank.get(identityOf(ordered[j]));
      if (left !== undefined && right !== undefined && left < right) out.push(serverOnly[i++]);
      else out.push(ordered[j++]);
    }
  }
  return out;
}

/**
 * Applies a Kubernetes strategic merge patch to an object of a built-in kind.
 *
 * @param original The stored object; never mutated.
 * @param patch The strategic merge patch, as kubectl sends it; never mutated.
 * @param kind The object's kind, e.g. `Deployment` (or its plural resource
 * name, e.g. `deployments`; case is ignored). Unknown kinds get only the
 * rules common to all objects: `metadata.ownerReferences` by `uid`,
 * `metadata.finalizers` as a set, `status.conditions` by `type`.
 * @returns The patched object, with all directives removed.
 * @throws {StrategicMergeError} When the patch or a directive in it is
 * malformed, or a merge-list item lacks its merge key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyStrategicMergePatch } from "./strategic_merge.ts";
 *
 * const pod = {
 *   metadata: { name: "web", finalizers: ["a"] },
 *   spec: {
 *     containers: [
 *       { name: "app", image: "app:1" },
 *       { name: "proxy", image: "envoy:1" },
 *     ],
 *   },
 * };
 * const patched = applyStrategicMergePatch(pod, {
 *   metadata: { finalizers: ["a", "b"] },
 *   spec: { containers: [{ name: "app", image: "app:2" }, { name: "proxy", $patch: "delete" }] },
 * }, "Pod");
 * assert.deepEqual(patched, {
 *   metadata: { name: "web", finalizers: ["a", "b"] },
 *   spec: { containers: [{ name: "app", image: "app:2" }] },
 * });
 * ```
 */
export function applyStrategicMergePatch(
  original: Record<string, unknown>,
  patch: Record<string, unknown>,
  kind: string,
): Record<string, unknown> {
  if (!isObject(original)) {
    throw new StrategicMergeError(
      `the original object must be a JSON object, got ${show(original)}`,
    );
  }
  if (!isObject(patch)) {
    throw new StrategicMergeError(
      `a strategic merge patch must be a JSON object, got ${show(patch)}`,
    );
  }
  return mergeMap(original, patch, "", rulesFor(kind));
}

/**
 * The merge key of a list field of a built-in kind, as strategic merge and
 * server-side apply treat it: a key for lists merged item by item, `null`
 * for lists merged as sets of primitives, `undefined` for atomic lists.
 *
 * @param kind The kind (or plural), any case.
 * @param path The field names from the object's root to the list.
 * @returns The merge key, null for a set, or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mergeKeyFor } from "./strategic_merge.ts";
 * assert.deepEqual(mergeKeyFor("Deployment", ["spec", "template", "spec", "containers"]), "name");
 * ```
 */
export function mergeKeyFor(kind: string, path: readonly string[]): string | null | undefined {
  const rule = rulesFor(kind).get(path.join("."));
  return rule;
}
