/**
 * The ClusterRoles and ClusterRoleBindings kube-apiserver creates at start
 * when RBAC is on, so that the same things work here as in a cluster with no
 * grant of one's own: every authenticated user may read discovery, `/version`
 * and the health endpoints (`system:discovery`, `system:public-info-viewer`)
 * and ask what it may do (`system:basic-user`: `kubectl auth can-i`,
 * `kubectl auth whoami`); `cluster-admin` exists to be bound, and is bound to
 * `system:masters`.
 *
 * Created only when missing (a data directory keeps edits), with
 * kube-apiserver's label and auto-update annotation. Not created: the roles of
 * Kubernetes' own components (no kubelet or controller-manager runs here) and
 * the aggregated `admin`, `edit` and `view` (write them if you need them: the
 * authorizer evaluates aggregation rules).
 *
 * @module
 */

import type { Objects } from "../objects/objects.ts";
import { type PolicyRule, RbacAuthorizer, type Subject } from "./rbac.ts";
import { escalationCheck } from "./rbac_escalation.ts";

const RBAC = "rbac.authorization.k8s.io";
const METADATA = {
  labels: { "kubernetes.io/bootstrapping": "rbac-defaults" },
  annotations: { "rbac.authorization.kubernetes.io/autoupdate": "true" },
};

const CLUSTER_ROLES: Record<string, PolicyRule[]> = {
  "cluster-admin": [
    { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
    { verbs: ["*"], nonResourceURLs: ["*"] },
  ],
  "system:discovery": [{
    verbs: ["get"],
    nonResourceURLs: [
      "/api",
      "/api/*",
      "/apis",
      "/apis/*",
      "/healthz",
      "/livez",
      "/openapi",
      "/openapi/*",
      "/readyz",
      "/version",
      "/version/",
    ],
  }],
  "system:basic-user": [
    {
      verbs: ["create"],
      apiGroups: ["authorization.k8s.io"],
      resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    },
    { verbs: ["create"], apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"] },
  ],
  "system:public-info-viewer": [{
    verbs: ["get"],
    nonResourceURLs: ["/healthz", "/livez", "/readyz", "/version", "/version/"],
  }],
};

const group = (name: string): Subject => ({ kind: "Group", apiGroup: RBAC, name });

const CLUSTER_ROLE_BINDINGS: Record<string, Subject[]> = {
  "cluster-admin": [group("system:masters")],
  "system:discovery": [group("system:authenticated")],
  "system:basic-user": [group("system:authenticated")],
  "system:public-info-viewer": [group("system:authenticated"), group("system:unauthenticated")],
};

/**
 * Creates the bootstrap ClusterRoles and ClusterRoleBindings that are missing,
 * and turns on RBAC escalation prevention on the write path
 * ({@linkcode Objects.rbacGuard}; see `rbac_escalation.ts`).
 *
 * @param objects The write path of the server.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Objects } from "../objects/objects.ts";
 * import { bootstrapRbac } from "./rbac_bootstrap.ts";
 * import { ResourceRegistry } from "../objects/registry.ts";
 * import { Store } from "../storage/store.ts";
 * const store = new Store();
 * bootstrapRbac(new Objects(store, new ResourceRegistry()));
 * assert.deepEqual(store.get("clusterroles.rbac.authorization.k8s.io", "", "system:discovery") !== undefined, true);
 * ```
 */
export function bootstrapRbac(objects: Objects): void {
  // Escalation prevention comes with RBAC, as in kube-apiserver (see rbac_escalation.ts).
  objects.rbacGuard = escalationCheck(new RbacAuthorizer(objects.store));
  const roles = objects.registry.find(RBAC, "v1", "clusterroles")!;
  const bindings = objects.registry.find(RBAC, "v1", "clusterrolebindings")!;
  for (const [name, rules] of Object.entries(CLUSTER_ROLES)) {
    if (objects.store.get(`clusterroles.${RBAC}`, "", name)) continue;
    objects.create(roles, "", {
      apiVersion: `${RBAC}/v1`,
      kind: "ClusterRole",
      metadata: { name, ...structuredClone(METADATA) },
      rules,
    });
  }
  for (const [name, subjects] of Object.entries(CLUSTER_ROLE_BINDINGS)) {
    if (objects.store.get(`clusterrolebindings.${RBAC}`, "", name)) continue;
    objects.create(bindings, "", {
      apiVersion: `${RBAC}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name, ...structuredClone(METADATA) },
      roleRef: { apiGroup: RBAC, kind: "ClusterRole", name },
      subjects,
    });
  }
}
