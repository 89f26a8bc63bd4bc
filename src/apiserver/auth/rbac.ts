/**
 * Role-based access control, evaluated as kube-apiserver's RBAC authorizer
 * does, over the Roles, ClusterRoles, RoleBindings and ClusterRoleBindings in
 * the store — so a set of RBAC manifests (what `kopf rbac` prints) can be
 * proven enough, or shown short, on the embedded server.
 *
 * What it does, as Kubernetes does:
 * - Members of `system:masters` may do anything (kube-apiserver's privileged
 *   group authorizer, ahead of RBAC): the server's own kubeconfig is one.
 * - Otherwise a request is allowed when one rule allows it, from a
 *   ClusterRoleBinding (anywhere), or from a RoleBinding in the request's
 *   namespace (to a Role of that namespace, or to a ClusterRole: a namespaced
 *   grant). Nothing denies; no rule means 403.
 * - Subjects: `User` by name, `Group` by membership, `ServiceAccount` by
 *   `system:serviceaccount:<ns>:<name>` (a RoleBinding's subject without a
 *   namespace means the binding's namespace).
 * - A rule matches the verb (or `*`), the API group (or `*`), the resource,
 *   `<resource>/<subresource>`, `*` slash `<subresource>` (any resource's) or `*`, and, when it lists
 *   `resourceNames`, the request's name (so never a create, nor a list or watch
 *   without `fieldSelector=metadata.name=…`). Non-resource requests match
 *   `nonResourceURLs`: exact, `*`, or a prefix ending in `*`.
 * - A ClusterRole with an `aggregationRule` has the rules of the ClusterRoles
 *   its selectors pick (computed when asked, not written into the object as
 *   kube-controller-manager does: `kubectl get clusterrole` shows its own rules).
 * - A binding whose role is missing allows nothing and its error is appended to
 *   the refusal (`…: RBAC: role.rbac.authorization.k8s.io "x" not found`).
 *
 * The refusal is kube-apiserver's 403 Status word for word (see {@link forbidden}).
 * Writing Roles and bindings also passes escalation prevention (`rbac_escalation.ts`):
 * nobody grants what she does not hold, unless she may `escalate` or `bind`.
 *
 * @module
 */

import { labelSelectorFromObject, matchesLabels } from "../../cogs/structs/label_selector.ts";
import type { UserInfo } from "./authentication.ts";
import { ApiError } from "../shared/errors.ts";
import type { RequestAttributes } from "./request_attributes.ts";
import type { Store } from "../storage/store.ts";
import type { KObject } from "../shared/types.ts";

/** A rule of a Role or ClusterRole. */
export interface PolicyRule {
  /** The verbs, or `*`. */
  verbs: string[];
  /** The API groups ("" is core), or `*`. */
  apiGroups?: string[];
  /** The resources: `pods`, `pods/status`, `*` slash `scale` (any resource's scale), `*`. */
  resources?: string[];
  /** The names the rule is limited to. */
  resourceNames?: string[];
  /** The non-resource paths: `/healthz`, `/apis/*`, `*`. */
  nonResourceURLs?: string[];
}

/** A binding's subject. */
export interface Subject {
  /** `User`, `Group` or `ServiceAccount`. */
  kind: string;
  /** The name. */
  name: string;
  /** A service account's namespace. */
  namespace?: string;
  /** `rbac.authorization.k8s.io` for users and groups, "" for service accounts. */
  apiGroup?: string;
}

/** What the authorizer decided. */
export interface Decision {
  /** Whether the request is allowed. */
  allowed: boolean;
  /** Why: the binding that allowed it, or the errors met on the way to a refusal. */
  reason: string;
}

/** Called with every rule that applies to a user (or an error met); return false to stop. */
export type RuleVisitor = (source: string, rule: PolicyRule | undefined, error?: string) => boolean;

const RBAC = "rbac.authorization.k8s.io";
const ROLES = `roles.${RBAC}`;
const CLUSTER_ROLES = `clusterroles.${RBAC}`;
const ROLE_BINDINGS = `rolebindings.${RBAC}`;
const CLUSTER_ROLE_BINDINGS = `clusterrolebindings.${RBAC}`;

/** The group whose members may do anything. */
export const PRIVILEGED_GROUP = "system:masters";

/**
 * The RBAC authorizer over a store.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import type { RequestAttributes } from "@kopf/kopf/apiserver";
 * await using api = await startApiServer({ authorization: "rbac" });
 * const { store, authorizer } = api.server;
 * store.commit("ADDED", "roles.rbac.authorization.k8s.io", {
 *   metadata: { name: "cm-reader", namespace: "default" },
 *   rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }],
 * });
 * store.commit("ADDED", "rolebindings.rbac.authorization.k8s.io", {
 *   metadata: { name: "b", namespace: "default" },
 *   roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "cm-reader" },
 *   subjects: [{ kind: "User", name: "alice" }],
 * });
 * const alice = { username: "alice", groups: ["system:authenticated"] };
 * const listConfigMaps = (namespace: string): RequestAttributes => ({
 *   resourceRequest: true, verb: "list", path: `/api/v1/namespaces/${namespace}/configmaps`,
 *   apiGroup: "", apiVersion: "v1", namespace, resource: "configmaps", subresource: "", name: "",
 * });
 * assert.deepEqual(authorizer!.authorize(alice, listConfigMaps("default")).allowed, true);
 * assert.deepEqual(authorizer!.authorize(alice, listConfigMaps("other")).allowed, false);
 * ```
 */
export class RbacAuthorizer {
  readonly #store: Store;

  /**
   * Creates the authorizer; it reads the store on every decision, so new bindings count at once.
   *
   * @param store Where the roles and bindings are.
   */
  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * Decides a request.
   *
   * @param user Who asks.
   * @param attrs What is asked.
   * @returns Allowed or not, and why.
   */
  authorize(user: UserInfo, attrs: RequestAttributes): Decision {
    if (user.groups.includes(PRIVILEGED_GROUP)) return { allowed: true, reason: "" };
    let reason = "";
    const errors: string[] = [];
    this.visitRulesFor(user, attrs.namespace, (source, rule, error) => {
      if (rule && ruleAllows(attrs, rule)) {
        reason = `RBAC: allowed by ${source}`;
        return false;
      }
      if (error && !errors.includes(error)) errors.push(error);
      return true;
    });
    if (reason) return { allowed: true, reason };
    if (!errors.length) return { allowed: false, reason: "" };
    return {
      allowed: false,
      reason: `RBAC: ${errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`}`,
    };
  }

  /**
   * Checks a request, refusing it with kube-apiserver's 403 when no rule allows it.
   *
   * @param user Who asks.
   * @param attrs What is asked.
   * @throws {ApiError} 403 Forbidden, worded as kube-apiserver words it.
   */
  check(user: UserInfo, attrs: RequestAttributes): void {
    const decision = this.authorize(user, attrs);
    if (!decision.allowed) throw forbidden(user, attrs, decision.reason);
  }

  /**
   * All rules that apply to a user in a namespace (what a SelfSubjectRulesReview lists).
   *
   * @param user The user.
   * @param namespace The namespace ("" for cluster-wide rules only).
   * @returns The rules and the errors met (missing roles).
   */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    if (user.groups.includes(PRIVILEGED_GROUP)) {
      rules.push({ verbs: ["*"], apiGroups: ["*"], resources: ["*"] });
      rules.push({ verbs: ["*"], nonResourceURLs: ["*"] });
    }
    this.visitRulesFor(user, namespace, (_source, rule, error) => {
      if (rule) rules.push(rule);
      if (error && !errors.includes(error)) errors.push(error);
      return true;
    });
    return { rules, errors };
  }

  /**
   * Visits the rules that apply to a user: the cluster bindings', then (for a
   * namespace) the namespace's bindings'.
   *
   * @param user The user.
   * @param namespace The request's namespace ("" for none).
   * @param visit Called with each rule (or error); return false to stop.
   */
  visitRulesFor(user: UserInfo, namespace: string, visit: RuleVisitor): void {
    for (const binding of this.#store.list(CLUSTER_ROLE_BINDINGS)) {
      const subject = subjects(binding).find((s) => appliesTo(user, s, ""));
      if (!subject) continue;
      const ref = roleRef(binding);
      const { rules, error } = ref.kind === "ClusterRole"
        ? this.#clusterRoleRules(ref.name)
        : { rules: [], error: `unknown roleRef kind ${JSON.stringify(ref.kind)}` };
      const source = `ClusterRoleBinding ${quote(binding.metadata.name ?? "")} of ${ref.kind} ${
        quote(ref.name)
      } to ${describe(subject, "")}`;
      if (error && !visit(source, undefined, error)) return;
      for (const rule of rules) if (!visit(source, rule)) return;
    }
    if (!namespace) return;
    for (const binding of this.#store.list(ROLE_BINDINGS, namespace)) {
      const subject = subjects(binding).find((s) => appliesTo(user, s, namespace));
      if (!subject) continue;
      const ref = roleRef(binding);
      const { rules, error } = ref.kind === "ClusterRole"
        ? this.#clusterRoleRules(ref.name)
        : ref.kind === "Role"
        ? this.#roleRules(namespace, ref.name)
        : { rules: [], error: `unknown roleRef kind ${JSON.stringify(ref.kind)}` };
      const source = `RoleBinding ${
        quote(`${binding.metadata.name}/${namespace}`)
      } of ${ref.kind} ${quote(ref.name)} to ${describe(subject, namespace)}`;
      if (error && !visit(source, undefined, error)) return;
      for (const rule of rules) if (!visit(source, rule)) return;
    }
  }

  /**
   * The rules a binding's `roleRef` grants (kube-apiserver's `GetRoleReferenceRules`): a Role's
   * of the binding's namespace, or a ClusterRole's (aggregated ones with the rules they gather).
   *
   * @param kind `Role` or `ClusterRole`.
   * @param name The role's name.
   * @param namespace The binding's namespace ("" for a ClusterRoleBinding).
   * @returns The rules, or the error that the role is missing (worded as the registry's 404).
   */
  roleRefRules(
    kind: string,
    name: string,
    namespace: string,
  ): { rules: PolicyRule[]; error?: string } {
    if (kind === "ClusterRole") {
      const role = this.#store.get(CLUSTER_ROLES, "", name);
      if (!role) return { rules: [], error: `${CLUSTER_ROLES} ${quote(name)} not found` };
      return { rules: this.#effectiveRules(role, new Set([name])) };
    }
    if (kind === "Role") {
      const role = namespace ? this.#store.get(ROLES, namespace, name) : undefined;
      if (!role) return { rules: [], error: `${ROLES} ${quote(name)} not found` };
      return { rules: rulesOf(role) };
    }
    return { rules: [], error: `unknown roleRef kind ${JSON.stringify(kind)}` };
  }

  #roleRules(namespace: string, name: string): { rules: PolicyRule[]; error?: string } {
    const role = this.#store.get(ROLES, namespace, name);
    if (!role) return { rules: [], error: `role.${RBAC} ${quote(name)} not found` };
    return { rules: rulesOf(role) };
  }

  #clusterRoleRules(name: string): { rules: PolicyRule[]; error?: string } {
    const role = this.#store.get(CLUSTER_ROLES, "", name);
    if (!role) return { rules: [], error: `clusterrole.${RBAC} ${quote(name)} not found` };
    return { rules: this.#effectiveRules(role, new Set([name])) };
  }

  /** A ClusterRole's rules: its own, or with an aggregationRule those of the roles it selects. */
  #effectiveRules(role: KObject, seen: Set<string>): PolicyRule[] {
    const aggregation = role.aggregationRule as
      | { clusterRoleSelectors?: Array<Record<string, unknown>> }
      | undefined;
    const selectors = aggregation?.clusterRoleSelectors;
    if (!selectors) return rulesOf(role);
    const rules: PolicyRule[] = [];
    for (const other of this.#store.list(CLUSTER_ROLES)) {
      const name = other.metadata.name ?? "";
      if (seen.has(name)) continue;
      const picked = selectors.some((s) => {
        try {
          return matchesLabels(labelSelectorFromObject(s), other.metadata.labels);
        } catch {
          return false;
        }
      });
      if (!picked) continue;
      seen.add(name);
      rules.push(...this.#effectiveRules(other, seen));
    }
    return rules;
  }
}

/**
 * Whether one rule allows a request (kube-apiserver's `RuleAllows`).
 *
 * @param attrs The request.
 * @param rule The rule.
 * @returns True when it allows it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ruleAllows } from "./rbac.ts";
 * import { requestAttributes } from "./request_attributes.ts";
 * const patchStatus = requestAttributes("PATCH", new URL("http://x/apis/kopf.dev/v1/namespaces/ns/kopfexamples/k1/status"));
 * assert.deepEqual(ruleAllows(patchStatus, { verbs: ["patch"], apiGroups: ["kopf.dev"], resources: ["kopfexamples/status"] }), true);
 * assert.deepEqual(ruleAllows(patchStatus, { verbs: ["patch"], apiGroups: ["kopf.dev"], resources: ["kopfexamples"] }), false);
 * ```
 */
export function ruleAllows(attrs: RequestAttributes, rule: PolicyRule): boolean {
  if (!matchesAny(rule.verbs, attrs.verb)) return false;
  if (!attrs.resourceRequest) return nonResourceURLMatches(rule.nonResourceURLs ?? [], attrs.path);
  const combined = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  return matchesAny(rule.apiGroups ?? [], attrs.apiGroup) &&
    resourceMatches(rule.resources ?? [], combined, attrs.subresource) &&
    (!rule.resourceNames?.length || rule.resourceNames.includes(attrs.name));
}

/**
 * The 403 Status kube-apiserver sends when authorization refuses, word for word:
 * `pods "p1" is forbidden: User "u" cannot get resource "pods" in API group "" in the namespace "ns"`,
 * `… at the cluster scope` without a namespace, `forbidden: User "u" cannot get path "/x"`
 * for non-resource paths; `details` names the resource (`kind`), group and name.
 *
 * @param user Who asked.
 * @param attrs What was asked.
 * @param reason The authorizer's reason, appended after `: ` when not empty.
 * @returns The error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { forbidden } from "./rbac.ts";
 * import { requestAttributes } from "./request_attributes.ts";
 * const attrs = requestAttributes("GET", new URL("http://x/api/v1/namespaces/default/pods"));
 * assert.deepEqual(forbidden({ username: "system:serviceaccount:default:op", groups: [] }, attrs, "").message, "pods is forbidden: User \"system:serviceaccount:default:op\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"");
 * ```
 */
export function forbidden(user: UserInfo, attrs: RequestAttributes, reason: string): ApiError {
  let message: string;
  if (!attrs.resourceRequest) {
    message = `User ${quote(user.username)} cannot ${attrs.verb} path ${quote(attrs.path)}`;
  } else {
    const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
    const where = attrs.namespace
      ? `in the namespace ${quote(attrs.namespace)}`
      : "at the cluster scope";
    message = `User ${quote(user.username)} cannot ${attrs.verb} resource ${quote(resource)} ` +
      `in API group ${quote(attrs.apiGroup)} ${where}`;
  }
  if (reason) message = `${message}: ${reason}`;
  const qualified = attrs.apiGroup ? `${attrs.resource}.${attrs.apiGroup}` : attrs.resource;
  const details: Record<string, string> = {};
  if (attrs.name) details.name = attrs.name;
  if (attrs.apiGroup) details.group = attrs.apiGroup;
  if (attrs.resource) details.kind = attrs.resource;
  const full = !attrs.resourceRequest || !qualified
    ? `forbidden: ${message}`
    : attrs.name
    ? `${qualified} ${quote(attrs.name)} is forbidden: ${message}`
    : `${qualified} is forbidden: ${message}`;
  return new ApiError(403, "Forbidden", full, details);
}

function matchesAny(list: string[], value: string): boolean {
  return list.includes("*") || list.includes(value);
}

function resourceMatches(resources: string[], combined: string, subresource: string): boolean {
  for (const r of resources) {
    if (r === "*" || r === combined) return true;
    if (subresource && r === `*/${subresource}`) return true;
  }
  return false;
}

function nonResourceURLMatches(urls: string[], path: string): boolean {
  for (const u of urls) {
    if (u === "*" || u === path) return true;
    if (u.endsWith("*") && path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
}

function appliesTo(user: UserInfo, subject: Subject, namespace: string): boolean {
  switch (subject.kind) {
    case "User":
      return user.username === subject.name;
    case "Group":
      return user.groups.includes(subject.name);
    case "ServiceAccount": {
      const ns = subject.namespace || namespace;
      return !!ns && user.username === `system:serviceaccount:${ns}:${subject.name}`;
    }
  }
  return false;
}

function describe(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === "ServiceAccount") {
    return `${subject.kind} ${quote(`${subject.name}/${subject.namespace || bindingNamespace}`)}`;
  }
  return `${subject.kind} ${quote(subject.name)}`;
}

function subjects(binding: KObject): Subject[] {
  const list = binding.subjects;
  return Array.isArray(list) ? list.filter((s): s is Subject => !!s && typeof s === "object") : [];
}

function roleRef(binding: KObject): { kind: string; name: string } {
  const ref = (binding.roleRef ?? {}) as { kind?: unknown; name?: unknown };
  return { kind: String(ref.kind ?? ""), name: String(ref.name ?? "") };
}

function rulesOf(role: KObject): PolicyRule[] {
  const rules = role.rules;
  return Array.isArray(rules)
    ? rules.filter((r): r is PolicyRule => !!r && typeof r === "object" && Array.isArray(r.verbs))
    : [];
}

/** Go's `%q` for the strings that appear here (JSON quoting agrees for them). */
function quote(s: string): string {
  return JSON.stringify(s);
}
