/**
 * The built-in kinds the API server stores as plain data. Nothing runs them:
 * there is no scheduler, kubelet or controller-manager — a Deployment is a
 * record, a Pod never starts. Operators only need them to exist, be listed,
 * watched, patched and garbage-collected.
 *
 * @module
 */

import { reviewResources } from "./review_resources.ts";
import { ALL_VERBS, type ResourceDef } from "../shared/resources.ts";

type Row = [
  group: string,
  version: string,
  plural: string,
  kind: string,
  namespaced: boolean,
  shortNames?: string[],
  categories?: string[],
  status?: boolean,
];

const ROWS: Row[] = [
  ["", "v1", "namespaces", "Namespace", false, ["ns"], [], true],
  ["", "v1", "pods", "Pod", true, ["po"], ["all"], true],
  ["", "v1", "configmaps", "ConfigMap", true, ["cm"], [], false],
  ["", "v1", "secrets", "Secret", true, [], [], false],
  ["", "v1", "services", "Service", true, ["svc"], ["all"], true],
  ["", "v1", "serviceaccounts", "ServiceAccount", true, ["sa"], [], false],
  ["", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true, ["pvc"], [], true],
  ["", "v1", "persistentvolumes", "PersistentVolume", false, ["pv"], [], true],
  ["", "v1", "events", "Event", true, ["ev"], [], false],
  ["", "v1", "nodes", "Node", false, ["no"], [], true],
  ["", "v1", "endpoints", "Endpoints", true, ["ep"], [], false],
  ["", "v1", "resourcequotas", "ResourceQuota", true, ["quota"], [], true],
  ["", "v1", "limitranges", "LimitRange", true, ["limits"], [], false],
  ["", "v1", "replicationcontrollers", "ReplicationController", true, ["rc"], ["all"], true],
  ["", "v1", "podtemplates", "PodTemplate", true, [], [], false],
  ["discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true, [], [], false],
  ["events.k8s.io", "v1", "events", "Event", true, ["ev"], [], false],
  ["apps", "v1", "deployments", "Deployment", true, ["deploy"], ["all"], true],
  ["apps", "v1", "statefulsets", "StatefulSet", true, ["sts"], ["all"], true],
  ["apps", "v1", "replicasets", "ReplicaSet", true, ["rs"], ["all"], true],
  ["apps", "v1", "daemonsets", "DaemonSet", true, ["ds"], ["all"], true],
  ["apps", "v1", "controllerrevisions", "ControllerRevision", true, [], [], false],
  ["batch", "v1", "jobs", "Job", true, [], ["all"], true],
  ["batch", "v1", "cronjobs", "CronJob", true, ["cj"], ["all"], true],
  ["coordination.k8s.io", "v1", "leases", "Lease", true, [], [], false],
  ["autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, ["hpa"], [
    "all",
  ], true],
  ["networking.k8s.io", "v1", "ingresses", "Ingress", true, ["ing"], [], true],
  ["networking.k8s.io", "v1", "ingressclasses", "IngressClass", false, [], [], false],
  ["networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", true, ["netpol"], [], false],
  ["policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, ["pdb"], [], true],
  ["scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false, ["pc"], [], false],
  ["storage.k8s.io", "v1", "storageclasses", "StorageClass", false, ["sc"], [], false],
  ["rbac.authorization.k8s.io", "v1", "roles", "Role", true, [], [], false],
  ["rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false, [], [], false],
  ["rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true, [], [], false],
  [
    "rbac.authorization.k8s.io",
    "v1",
    "clusterrolebindings",
    "ClusterRoleBinding",
    false,
    [],
    [],
    false,
  ],
  [
    "apiextensions.k8s.io",
    "v1",
    "customresourcedefinitions",
    "CustomResourceDefinition",
    false,
    ["crd", "crds"],
    ["api-extensions"],
    true,
  ],
  [
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
    "ValidatingWebhookConfiguration",
    false,
    [],
    ["api-extensions"],
    false,
  ],
  [
    "admissionregistration.k8s.io",
    "v1",
    "mutatingwebhookconfigurations",
    "MutatingWebhookConfiguration",
    false,
    [],
    ["api-extensions"],
    false,
  ],
  [
    "apiregistration.k8s.io",
    "v1",
    "apiservices",
    "APIService",
    false,
    [],
    ["api-extensions"],
    true,
  ],
];

/**
 * The built-in resource definitions, fresh objects on every call.
 *
 * @returns One definition per built-in group-version-resource.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { builtinResources } from "./builtins.ts";
 * const pods = builtinResources().find((r) => r.plural === "pods");
 * assert.deepEqual([pods?.kind, pods?.namespaced], ["Pod", true]);
 * ```
 */
export function builtinResources(): ResourceDef[] {
  const stored = ROWS.map((
    [group, version, plural, kind, namespaced, shortNames, categories, status],
  ) => ({
    group,
    version,
    plural,
    kind,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: shortNames ?? [],
    categories: categories ?? [],
    verbs: plural === "namespaces"
      ? ALL_VERBS.filter((v) => v !== "deletecollection")
      : [...ALL_VERBS],
    statusSubresource: status ?? false,
    builtin: true,
    storage: true,
  }));
  // The review kinds (`kubectl auth can-i`, `whoami`): create only, answered, never stored.
  return [...stored, ...reviewResources()];
}
