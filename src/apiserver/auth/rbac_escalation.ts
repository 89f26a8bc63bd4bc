/**
 * RBAC escalation prevention, as kube-apiserver's RBAC registry does it: a
 * user may grant through RBAC only what she already holds. Without it, anyone
 * allowed to `create rolebindings` could bind herself to `cluster-admin`.
 *
 * The rules (k8s.io/kubernetes/pkg/registry/rbac), checked on every create
 * and update of the four RBAC kinds when RBAC authorization is on:
 * - Members of `system:masters` are never refused (`EscalationAllowed`).
 * - A Role or ClusterRole is written when its author holds every permission
 *   it grants (`ConfirmNoEscalation`: for a Role, with the rules that apply in
 *   its namespace; for a ClusterRole, the cluster-wide ones), or has the
 *   `escalate` verb on `roles`/`clusterroles` there (`RoleEscalationAuthorized`).
 *   An `aggregationRule` (it gathers anything) needs `*` on everything.
 * - A RoleBinding or ClusterRoleBinding is written when its author has `bind`
 *   on the referenced role (`resourceNames` may name it) in the binding's
 *   namespace (`BindingAuthorized`), or holds every permission of that role
 *   (in the binding's namespace for a RoleBinding).
 * - An update that only changes ownerReferences or finalizers (what the
 *   garbage collector writes) is not checked (`IsOnlyMutatingGCFields`).
 *
 * "Holds" is rule coverage (`Covers`): each granted rule is broken down to one
 * verb × group × resource (× name) or one verb × URL, and each piece must be
 * covered by one rule held, with `*` matching any verb, group or resource,
 * `*` slash `<sub>` any resource's subresource, a rule without resourceNames
 * any name, and a URL ending in `*` its prefix.
 *
 * The refusal is kube-apiserver's 403, word for word:
 * `rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "alice"
 * (groups=["system:authenticated"]) is attempting to grant RBAC permissions not
 * currently held:` and one line per missing permission, compacted and sorted.
 *
 * @module
 */

import { deepEqual } from "../../cogs/structs/deep_equal.ts";
import { ApiError } from "../shared/errors.ts";
import { type PolicyRule, PRIVILEGED_GROUP, type RbacAuthorizer } from "./rbac.ts";
import type { RequestAttributes } from "./request_attributes.ts";
import type { KObject } from "../shared/types.ts";

const RBAC = "rbac.authorization.k8s.io";
const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
  { verbs: ["*"], nonResourceURLs: ["*"] },
];

/** Who writes: the request's user, as authentication and admission know it. */
export interface Writer {
  /** The user name. */
  username: string;
  /** The groups. */
  groups: string[];
}

/**
 * Whether the rules held cover the rules granted (kube-apiserver's `Covers`),
 * and the pieces that are not covered.
 *
 * @param owner The rules held.
 * @param servant The rules to grant.
 * @returns `covered`, and `missing`: the uncovered pieces (one verb each).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { covers } from "./rbac_escalation.ts";
 * const held = [{ verbs: ["get", "list"], apiGroups: [""], resources: ["pods", "*\/status"] }];
 * assert.equal(covers(held, [{ verbs: ["get"], apiGroups: [""], resources: ["pods/status"] }]).covered, true);
 * const { missing } = covers(held, [{ verbs: ["get", "delete"], apiGroups: [""], resources: ["pods"] }]);
 * assert.deepEqual(missing, [{ verbs: ["delete"], apiGroups: [""], resources: ["pods"] }]);
 * ```
 */
export function covers(
  owner: readonly PolicyRule[],
  servant: readonly PolicyRule[],
): { covered: boolean; missing: PolicyRule[] } {
  const missing: PolicyRule[] = [];
  for (const rule of servant) {
    for (const piece of breakdown(rule)) {
      if (!owner.some((o) => ruleCovers(o, piece))) missing.push(piece);
    }
  }
  return { covered: missing.length === 0, missing };
}

/**
 * kube-apiserver's compact form of a rule in escalation messages (`CompactString`).
 *
 * @param r The rule.
 * @returns E.g. `{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compactString } from "./rbac_escalation.ts";
 * assert.equal(
 *   compactString({ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] }),
 *   '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
 * );
 * ```
 */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${goQuote(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${goQuote(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goQuote(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${goQuote(r.resourceNames)}`);
  if (r.verbs?.length) parts.push(`Verbs:${goQuote(r.verbs)}`);
  return `{${parts.join(", ")}}`;
}

/**
 * The escalation check of one write, given the RBAC authorizer: throws
 * kube-apiserver's 403 when the writer would grant more than she holds.
 *
 * @param authorizer The RBAC authorizer over the server's store.
 * @returns The check: `resource` is the plural (`roles`, `clusterroles`,
 * `rolebindings`, `clusterrolebindings`; others pass), `draft` the object to
 * store, `current` the stored one on update.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RbacAuthorizer } from "./rbac.ts";
 * import { escalationCheck } from "./rbac_escalation.ts";
 * import { Store } from "../storage/store.ts";
 * const check = escalationCheck(new RbacAuthorizer(new Store()));
 * const alice = { username: "alice", groups: ["system:authenticated"] };
 * const role = {
 *   metadata: { name: "reader", namespace: "default" },
 *   rules: [{ verbs: ["get"], apiGroups: [""], resources: ["secrets"] }],
 * };
 * assert.throws(() => check("roles", role, undefined, alice), (e: Error) =>
 *   e.message === 'roles.rbac.authorization.k8s.io "reader" is forbidden: user "alice" ' +
 *     '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
 *     '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}');
 * check("roles", role, undefined, { username: "root", groups: ["system:masters"] }); // allowed
 * ```
 */
export function escalationCheck(
  authorizer: RbacAuthorizer,
): (resource: string, draft: KObject, current: KObject | undefined, user: Writer) => void {
  return (resource, draft, current, user) => {
    if (user.groups.includes(PRIVILEGED_GROUP)) return;
    if (current && onlyGcFields(draft, current)) return;
    const name = draft.metadata.name ?? "";
    const namespace = draft.metadata.namespace ?? "";
    const refuse = (detail: string) =>
      new ApiError(403, "Forbidden", `${resource}.${RBAC} ${quote(name)} is forbidden: ${detail}`, {
        name,
        group: RBAC,
        kind: resource,
      });
    const confirm = (rules: PolicyRule[]) => {
      const detail = escalationError(authorizer, user, namespace, rules);
      if (detail) throw refuse(detail);
    };
    switch (resource) {
      case "roles":
      case "clusterroles": {
        // kube-apiserver asks with the request's name: none on create.
        const escalate = attributes("escalate", RBAC, resource, namespace, current ? name : "");
        if (authorizer.authorize(user, escalate).allowed) return;
        confirm(rulesOf(draft));
        if (
          resource === "clusterroles" && (aggregates(draft) || (current && aggregates(current)))
        ) {
          if (escalationError(authorizer, user, "", FULL_AUTHORITY)) {
            throw refuse("must have cluster-admin privileges to use the aggregationRule");
          }
        }
        return;
      }
      case "rolebindings":
      case "clusterrolebindings": {
        const ref = (draft.roleRef ?? {}) as { apiGroup?: unknown; kind?: unknown; name?: unknown };
        const kind = String(ref.kind ?? "");
        const refName = String(ref.name ?? "");
        const plural = kind === "ClusterRole" ? "clusterroles" : kind === "Role" ? "roles" : "";
        if (plural) {
          const bind = attributes("bind", String(ref.apiGroup ?? ""), plural, namespace, refName);
          if (authorizer.authorize(user, bind).allowed) return;
        }
        const { rules, error } = authorizer.roleRefRules(kind, refName, namespace);
        if (error) throw refuse(error);
        confirm(rules);
        return;
      }
    }
  };
}

/** `ConfirmNoEscalation`: the refusal's text, or "" when the user holds every rule. */
function escalationError(
  authorizer: RbacAuthorizer,
  user: Writer,
  namespace: string,
  rules: PolicyRule[],
): string {
  const held = authorizer.rulesFor({ username: user.username, groups: user.groups }, namespace);
  const { covered, missing } = covers(held.rules, rules);
  if (covered) return "";
  const lines = [...new Set(compact(missing).map(compactString))].sort();
  let msg = `user ${quote(user.username)} (groups=${
    goQuote(user.groups)
  }) is attempting to grant RBAC permissions not currently held:\n${lines.join("\n")}`;
  if (held.errors.length) msg += `; resolution errors: [${held.errors.join(" ")}]`;
  return msg;
}

/** `BreakdownRule`: one piece per group × resource × verb (× name), and per URL × verb. */
function breakdown(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  const verbs = strings(rule.verbs);
  const names = strings(rule.resourceNames);
  for (const group of strings(rule.apiGroups)) {
    for (const resource of strings(rule.resources)) {
      for (const verb of verbs) {
        if (names.length) {
          for (const n of names) {
            out.push({
              apiGroups: [group],
              resources: [resource],
              verbs: [verb],
              resourceNames: [n],
            });
          }
        } else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of strings(rule.nonResourceURLs)) {
    for (const verb of verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return out;
}

/** `ruleCovers`: whether one held rule covers one piece. */
function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = strings(owner.verbs);
  const groups = strings(owner.apiGroups);
  const ownerNames = strings(owner.resourceNames);
  const subNames = strings(sub.resourceNames);
  const verbOk = verbs.includes("*") || hasAll(verbs, strings(sub.verbs));
  const groupOk = groups.includes("*") || hasAll(groups, strings(sub.apiGroups));
  const resourceOk = resourcesCover(strings(owner.resources), strings(sub.resources));
  const urlOk = strings(sub.nonResourceURLs).every((path) =>
    strings(owner.nonResourceURLs).some((o) =>
      o === path || (o.endsWith("*") && path.startsWith(o.replace(/\*+$/, "")))
    )
  );
  const namesOk = subNames.length === 0
    ? ownerNames.length === 0
    : ownerNames.length === 0 || hasAll(ownerNames, subNames);
  return verbOk && groupOk && resourceOk && namesOk && urlOk;
}

function resourcesCover(owner: string[], sub: string[]): boolean {
  if (owner.includes("*") || hasAll(owner, sub)) return true;
  return sub.every((path) => {
    if (owner.includes(path)) return true;
    const slash = path.indexOf("/");
    return slash >= 0 && owner.includes(`*/${path.slice(slash + 1)}`);
  });
}

/** `CompactRules`: pieces of one group and resource (and name) merged into one rule. */
function compact(rules: PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const names = strings(r.resourceNames);
    const isSimple = names.length <= 1 && !strings(r.nonResourceURLs).length &&
      strings(r.apiGroups).length === 1 && strings(r.resources).length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups, r.resources, names]);
    const existing = simple.get(key);
    if (existing) existing.verbs = [...existing.verbs, ...strings(r.verbs)];
    else simple.set(key, { ...r, verbs: [...strings(r.verbs)] });
  }
  return [...out, ...simple.values()];
}

/** Whether an update only changes what the garbage collector changes. */
function onlyGcFields(draft: KObject, current: KObject): boolean {
  const keep = ["ownerReferences", "finalizers", "managedFields", "resourceVersion"] as const;
  const meta: Record<string, unknown> = { ...draft.metadata };
  for (const k of keep) {
    const old = (current.metadata as Record<string, unknown>)[k];
    if (old === undefined) delete meta[k];
    else meta[k] = old;
  }
  return deepEqual({ ...draft, metadata: meta }, current);
}

function aggregates(role: KObject): boolean {
  const rule = role.aggregationRule as { clusterRoleSelectors?: unknown[] } | undefined | null;
  return Array.isArray(rule?.clusterRoleSelectors) && rule.clusterRoleSelectors.length > 0;
}

function rulesOf(role: KObject): PolicyRule[] {
  const rules = role.rules;
  return Array.isArray(rules)
    ? rules.filter((r): r is PolicyRule => !!r && typeof r === "object")
    : [];
}

function attributes(
  verb: string,
  apiGroup: string,
  resource: string,
  namespace: string,
  name: string,
): RequestAttributes {
  return {
    resourceRequest: true,
    verb,
    path: "",
    apiGroup,
    apiVersion: "*",
    namespace,
    resource,
    subresource: "",
    name,
  };
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

function hasAll(set: string[], wanted: string[]): boolean {
  return wanted.every((w) => set.includes(w));
}

function quote(s: string): string {
  return JSON.stringify(s);
}

/** Go's `%q` of a `[]string`: `["a" "b"]`. */
function goQuote(list: readonly string[]): string {
  return `[${list.map(quote).join(" ")}]`;
}
