/**
 * Pod specs defaulted (and validated) once per distinct spec, not once per write.
 *
 * Why: every Pod and every workload's pod template is defaulted (`pod_defaults.ts`: a few dozen
 * objects copied and filled in) and validated (`pod_validation.ts`) on each write, and that was
 * most of what a create of those kinds costs. Yet the specs written repeat: every replica's Pod
 * has its template's spec, a Deployment's patches keep its template, a test creates the same
 * Pod a thousand times. So a defaulted spec is kept by the JSON text of the spec it was made
 * from, and a write that sends the same text gets the very same object; the causes of a kept
 * spec's validation are kept with it, by the path they name.
 *
 * Guarantees:
 * - The same answers. Defaulting is a function of the spec's value (and, for a created Pod, of
 *   the stored PriorityClasses: its entry is kept with their revision and made again when they
 *   change). A spec is kept only when it is plain JSON — strings, finite numbers (not -0),
 *   booleans, null, arrays without holes and plain objects, what a JSON body decodes to — so
 *   two specs of one text are one value. (YAML's timestamps or `.nan` are not: those specs are
 *   defaulted each time.) A spec that fails to default (a quantity that is none, the Priority
 *   plugin's 403) is not kept.
 * - A kept spec is made from a copy of its own (parsed from the text), not from the request's
 *   objects, and is shared by every object stored with it: stored objects are never mutated
 *   (`storage/store.ts`), the same rule that lets a patched object share what it did not change
 *   with the version before. (Kept specs are not frozen: V8 encodes frozen objects to JSON
 *   several times slower, and every write and watch event encodes them.)
 *
 * Memory: at most {@link MEMO_SIZE} specs of each kind (templates, created Pods); a full table
 * starts over. Validation causes live as long as their spec (a `WeakMap`).
 *
 * @module
 */

import type { StatusCause } from "../shared/errors.ts";
import { keepJson } from "../storage/known_json.ts";
import { admitPodSpec, defaultedPodSpec } from "./pod_defaults.ts";
import type { PriorityClasses } from "./priority_admission.ts";

type Obj = Record<string, unknown>;

/** How many specs each table keeps before it starts over. */
export const MEMO_SIZE = 256;

/** Templates' specs, defaulted, by the text of the spec sent. */
const TEMPLATES = new Map<string, Obj>();
/** Created Pods' specs, defaulted and admitted, by the text sent, with the classes' revision. */
const PODS = new Map<string, { revision: number; spec: Obj }>();
/** Every spec kept here, and whether it is a template's (defaulting it again is a no-op). */
const KEPT = new WeakMap<object, "template" | "pod">();
/** The validation causes of kept specs, by the path they were validated at. */
const CAUSES = new WeakMap<object, Map<string, readonly StatusCause[]>>();

/**
 * A pod template's spec with kube's defaults ({@linkcode defaultedPodSpec} for a template), the
 * same object for every spec of the same text.
 *
 * @param spec The spec as sent; never mutated.
 * @returns The defaulted spec (shared when kept: never change it), or the value itself when it is
 *   not an object.
 * @throws {QuantityError} When a request or limit is not a quantity.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultedTemplateSpec } from "./pod_spec_memo.ts";
 * const a = defaultedTemplateSpec({ containers: [{ name: "c", image: "nginx" }] });
 * const b = defaultedTemplateSpec({ containers: [{ name: "c", image: "nginx" }] });
 * assert.equal(a, b);
 * assert.equal((a as { dnsPolicy: string }).dnsPolicy, "ClusterFirst");
 * ```
 */
export function defaultedTemplateSpec(spec: unknown): unknown {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) {
    return defaultedPodSpec(spec, false);
  }
  // A template spec kept here is defaulted already: its defaults are itself.
  if (KEPT.get(spec) === "template") return spec;
  const key = specKey(spec);
  if (key === undefined) return defaultedPodSpec(spec, false);
  const kept = TEMPLATES.get(key);
  if (kept) return kept;
  const out = defaultedPodSpec(JSON.parse(key), false) as Obj;
  keep(TEMPLATES, key, out, "template");
  return out;
}

/**
 * A created Pod's spec with kube's defaults and as the admission plugins leave it
 * ({@linkcode defaultedPodSpec} and {@linkcode admitPodSpec}), the same object for every spec of
 * the same text while the PriorityClasses stay as they are.
 *
 * @param spec The spec as sent (an object); never mutated.
 * @param podName The pod's name (or `generateName`), for the Priority plugin's 403.
 * @param classes The stored PriorityClasses.
 * @param revision Their revision (`Store.revisionOf`); none: the spec is not kept.
 * @returns The spec to store (shared when kept: never change it).
 * @throws {QuantityError} When a request or limit is not a quantity.
 * @throws {ApiError} 403 from the Priority plugin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { admittedPodSpec } from "./pod_spec_memo.ts";
 * const a = admittedPodSpec({ containers: [{ name: "c", image: "nginx" }] }, "p", undefined, 0);
 * const b = admittedPodSpec({ containers: [{ name: "c", image: "nginx" }] }, "q", undefined, 0);
 * assert.equal(a, b);
 * assert.deepEqual([a.priority, a.enableServiceLinks], [0, true]);
 * ```
 */
export function admittedPodSpec(
  spec: Obj,
  podName: string,
  classes: PriorityClasses | undefined,
  revision: number | undefined,
): Obj {
  const key = revision === undefined ? undefined : specKey(spec);
  const kept = key === undefined ? undefined : PODS.get(key);
  if (kept && kept.revision === revision) return kept.spec;
  const out = defaultedPodSpec(key === undefined ? spec : JSON.parse(key), true) as Obj;
  admitPodSpec(out, undefined, podName, classes);
  if (key !== undefined) keep(PODS, key, { revision: revision!, spec: out }, "pod", out);
  return out;
}

/**
 * The validation causes of a pod spec, computed once for a spec kept here (at each path it is
 * validated at) and each time for any other.
 *
 * @param spec The spec, defaulted.
 * @param path Where it is (`spec`, `spec.template.spec`, …).
 * @param validate The validation.
 * @returns The causes (shared when kept: do not change them).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultedTemplateSpec, keptCauses } from "./pod_spec_memo.ts";
 * const spec = defaultedTemplateSpec({ containers: [] });
 * let runs = 0;
 * const validate = () => (runs++, [{ reason: "FieldValueRequired", message: "Required value", field: "spec.containers" }]);
 * keptCauses(spec, "spec", validate);
 * assert.equal(keptCauses(spec, "spec", validate).length, 1);
 * assert.equal(runs, 1);
 * ```
 */
export function keptCauses(
  spec: unknown,
  path: string,
  validate: () => StatusCause[],
): readonly StatusCause[] {
  if (spec === null || typeof spec !== "object" || !KEPT.has(spec)) return validate();
  let byPath = CAUSES.get(spec);
  if (!byPath) CAUSES.set(spec, byPath = new Map());
  let causes = byPath.get(path);
  if (!causes) {
    causes = validate();
    byPath.set(path, causes);
  }
  return causes;
}

/**
 * Whether a spec is one kept here: shared by the objects stored with it, so never changed, and
 * what is made from it alone may be kept with it (a created Pod's status: `pod_strategy.ts`).
 *
 * @param spec A pod spec.
 * @returns True for a kept spec.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultedTemplateSpec, isKeptSpec } from "./pod_spec_memo.ts";
 * const sent = { containers: [{ name: "c", image: "nginx" }] };
 * assert.equal(isKeptSpec(defaultedTemplateSpec(sent)), true);
 * assert.equal(isKeptSpec(sent), false);
 * ```
 */
export function isKeptSpec(spec: unknown): boolean {
  return spec !== null && typeof spec === "object" && KEPT.has(spec);
}

function keep<V>(
  table: Map<string, V>,
  key: string,
  value: V,
  kind: "template" | "pod",
  spec: Obj = value as Obj,
): void {
  KEPT.set(spec, kind);
  // Its text too: every object stored with it copies it when encoded (storage/known_json.ts).
  keepJson(spec);
  if (table.size >= MEMO_SIZE) table.clear();
  table.set(key, value);
}

/**
 * The text found during one write (`oneWrite`): its prune walk and its defaults both ask for its
 * spec's (a write has one pod spec). Only within a write — an object can change between writes
 * (one made in-process and sent again), its text with it.
 */
let writing = false;
let lastSpec: object | undefined;
let lastKey: string | undefined;

/**
 * Runs one write's built-in steps (prune, defaults, validation) remembering its spec's text
 * ({@linkcode specKey}) for their length.
 *
 * @param run The steps.
 * @returns What they return.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { oneWrite, specKey } from "./pod_spec_memo.ts";
 * const spec = { containers: [{ name: "c" }] };
 * assert.equal(oneWrite(() => specKey(spec) === specKey(spec)), true);
 * ```
 */
export function oneWrite<T>(run: () => T): T {
  const outer = writing;
  writing = true;
  lastSpec = lastKey = undefined;
  try {
    return run();
  } finally {
    writing = outer;
    lastSpec = lastKey = undefined;
  }
}

/**
 * The JSON text of a spec that is plain JSON (see the module doc): two specs of one text are one
 * value. Within {@linkcode oneWrite}, found once for the write's spec.
 *
 * @param spec The spec.
 * @returns The text, or undefined when the spec is not plain JSON (or not an object).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { specKey } from "./pod_spec_memo.ts";
 * assert.equal(specKey({ containers: [{ name: "c" }] }), '{"containers":[{"name":"c"}]}');
 * assert.equal(specKey({ containers: [], when: new Date(0) }), undefined);
 * assert.equal(specKey({ terminationGracePeriodSeconds: NaN }), undefined);
 * ```
 */
export function specKey(spec: unknown): string | undefined {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) return undefined;
  if (writing && spec === lastSpec) return lastKey;
  const key = plainJson(spec) ? JSON.stringify(spec) : undefined;
  if (writing) {
    lastSpec = spec;
    lastKey = key;
  }
  return key;
}

function plainJson(v: unknown): boolean {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(v) && !(v === 0 && 1 / v < 0);
    case "object": {
      if (v === null) return true;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!(i in v) || !plainJson(v[i])) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const k in v) {
        if (!Object.hasOwn(v, k) || !plainJson((v as Obj)[k])) return false;
      }
      return true;
    }
  }
  return false; // undefined, bigint, symbol, function
}
