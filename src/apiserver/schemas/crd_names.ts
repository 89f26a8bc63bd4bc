/**
 * Which of a CRD's names it may have, as kube-apiserver's naming controller
 * decides: a plural, singular or short name already accepted by another CRD
 * of the same group, or a kind or list kind already taken there, is refused —
 * the CRD's `NamesAccepted` condition turns False (`PluralConflict`,
 * `SingularConflict`, `ShortNamesConflict`, `KindConflict`,
 * `ListKindConflict`: the last conflict found names the reason), it is not
 * established, and its resources are not served.
 *
 * Why: two CRDs claiming `kopfexamples` (or kind `KopfExample`) in one group
 * would otherwise both be served, the later one silently shadowing the first.
 *
 * Names a CRD has already been given stay its own (a name it keeps is never a
 * conflict); names are compared with the other CRDs' accepted names
 * (`status.acceptedNames`), not with what they ask for.
 *
 * @module
 */

import type { KObject } from "../shared/types.ts";

/** A CRD's names (`spec.names`, `status.acceptedNames`). */
export interface CrdNames {
  plural?: string;
  singular?: string;
  shortNames?: string[];
  kind?: string;
  listKind?: string;
  categories?: string[];
}

/** The `NamesAccepted` condition's verdict. */
export interface NamesVerdict {
  /** The names the CRD is given (the accepted ones of the previous status, the rest where free). */
  acceptedNames: CrdNames;
  /** `"True"` or `"False"`. */
  status: "True" | "False";
  /** `NoConflicts`, or the kind of the last conflict found. */
  reason: string;
  /** `no conflicts found`, or e.g. `"widgets" is already in use`. */
  message: string;
}

/**
 * Decides a CRD's names against the other CRDs.
 *
 * @param crd The CRD (its `spec.names`, defaulted; its `status.acceptedNames`, if any).
 * @param requested Its requested names (with singular and listKind defaulted).
 * @param others All CRDs (the CRD itself and other groups' are skipped).
 * @returns The accepted names and the condition.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { acceptNames } from "./crd_names.ts";
 * const first = {
 *   metadata: { name: "widgets.example.com" },
 *   spec: { group: "example.com" },
 *   status: { acceptedNames: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" } },
 * };
 * const second = { metadata: { name: "gadgets.example.com" }, spec: { group: "example.com" } };
 * const verdict = acceptNames(second, {
 *   plural: "gadgets", singular: "gadget", kind: "Widget", listKind: "WidgetList",
 * }, [first]);
 * assert.equal(verdict.status, "False");
 * assert.equal(verdict.reason, "ListKindConflict");
 * assert.equal(verdict.message, '"WidgetList" is already in use');
 * assert.equal(verdict.acceptedNames.plural, "gadgets");
 * ```
 */
export function acceptNames(
  crd: KObject,
  requested: CrdNames,
  others: Iterable<KObject>,
): NamesVerdict {
  const group = (crd.spec as { group?: string } | undefined)?.group;
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const other of others) {
    if (other.metadata.name === crd.metadata.name) continue;
    if ((other.spec as { group?: string } | undefined)?.group !== group) continue;
    const names = ((other.status as { acceptedNames?: CrdNames } | undefined)?.acceptedNames) ??
      {};
    for (const n of [names.plural, names.singular, ...(names.shortNames ?? [])]) {
      if (n) resources.add(n);
    }
    for (const n of [names.kind, names.listKind]) if (n) kinds.add(n);
  }
  const accepted: CrdNames =
    ((crd.status as { acceptedNames?: CrdNames } | undefined)?.acceptedNames) ?? {};
  const out: CrdNames = { ...accepted };
  let verdict: { reason: string; message: string } | undefined;
  const take = (
    key: "plural" | "singular" | "kind" | "listKind",
    used: Set<string>,
    reason: string,
  ) => {
    const error = inUse(requested[key], accepted[key], used);
    if (error) verdict = { reason, message: error };
    else if (requested[key] !== undefined) out[key] = requested[key];
    else delete out[key];
  };
  take("plural", resources, "PluralConflict");
  take("singular", resources, "SingularConflict");
  const wanted = requested.shortNames ?? [];
  if (JSON.stringify(wanted) !== JSON.stringify(accepted.shortNames ?? [])) {
    const mine = new Set(accepted.shortNames ?? []);
    const errors = wanted.filter((n) => !mine.has(n)).map((n) => inUse(n, "", resources))
      .filter((e): e is string => !!e);
    if (errors.length) {
      verdict = {
        reason: "ShortNamesConflict",
        message: errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`,
      };
    } else if (requested.shortNames !== undefined) out.shortNames = requested.shortNames;
    else delete out.shortNames;
  }
  take("kind", kinds, "KindConflict");
  take("listKind", kinds, "ListKindConflict");
  if (requested.categories !== undefined) out.categories = requested.categories;
  else delete out.categories;
  return verdict
    ? { acceptedNames: out, status: "False", ...verdict }
    : { acceptedNames: out, status: "True", reason: "NoConflicts", message: "no conflicts found" };
}

/** `equalToAcceptedOrFresh`: a name is fine when it is already this CRD's or nobody's. */
function inUse(
  requested: string | undefined,
  accepted: string | undefined,
  used: Set<string>,
): string | undefined {
  if (requested === accepted || requested === undefined || !used.has(requested)) return undefined;
  return `${JSON.stringify(requested)} is already in use`;
}
