/**
 * `kopf rbac handlers.ts`: prints the Roles, ClusterRoles and their bindings
 * that exactly the operator's handlers and settings need, for its service
 * account — the rows of the access table (core/reactor/access.ts) for this
 * operator, one rule per row and API group, each with a comment saying why.
 *
 * Where the rules go: a cluster-wide operator (`-A`) gets one ClusterRole for
 * everything but its Leases (a Role in the Lease's namespace); a namespaced
 * one (`-n a -n b`) gets a Role in each served namespace and a ClusterRole
 * for what is cluster-scoped (CRDs, namespaces, cluster-scoped resources,
 * webhook configurations) — as Kopf's docs lay it out. Namespace patterns
 * (globs, negations) cannot be Roles: their namespaced rules go to the
 * ClusterRole, and the command says so on stderr.
 *
 * @module
 */

import { type AccessNeed, operatorAccess } from "../core/reactor/access.ts";
import { selectSpecificNamespaces } from "../cogs/structs/references.ts";
import { resolver } from "./_catalog.ts";
import { loadOperator, type OperatorFlags } from "./_operator_flags.ts";
import { yamlDocument } from "./_yaml.ts";

/** A Kubernetes object as printed. */
export type ManifestObject = Record<string, unknown>;

const RBAC_API = "rbac.authorization.k8s.io/v1";
const VERB_ORDER = [
  "get",
  "list",
  "watch",
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
];

/** Where the RBAC objects go and whom they bind. */
export interface RbacLayout {
  /** The name of the service account, the roles and the bindings. */
  name: string;
  /** The service account's namespace. */
  accountNamespace: string;
  /** The served `-n` patterns; undefined for cluster-wide. */
  namespaces: string[] | undefined;
}

/** A rule with its comment. */
interface Rule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
  why: string;
}

/**
 * The Roles, ClusterRoles and bindings for the needs of an operator.
 *
 * @param needs The needs (from the access table).
 * @param layout The names, the account's namespace and the served namespaces.
 * @returns The objects (ClusterRole and its binding first, then a Role and a binding per
 *   namespace) and notes for stderr (e.g. patterns granted cluster-wide).
 */
export function rbacObjects(
  needs: AccessNeed[],
  layout: RbacLayout,
): { objects: ManifestObject[]; notes: string[] } {
  const notes: string[] = [];
  const patterns = layout.namespaces;
  const literal = patterns ? selectSpecificNamespaces(patterns) : [];
  const patterned = patterns !== undefined && literal.length < patterns.length;
  if (patterned && needs.some((n) => n.scope.kind === "served")) {
    notes.push(
      `-n ${patterns.filter((p) => !literal.includes(p)).join(", ")}: a pattern is not a ` +
        "namespace, so the rules of the served namespaces are granted cluster-wide (ClusterRole)",
    );
  }
  // Where each need goes: null for the ClusterRole, else a namespace's Role.
  const byPlace = new Map<string | null, AccessNeed[]>();
  const put = (place: string | null, need: AccessNeed) => {
    byPlace.set(place, [...(byPlace.get(place) ?? []), need]);
  };
  for (const need of needs) {
    const scope = need.scope;
    if (scope.kind === "cluster") put(null, need);
    else if (scope.kind === "namespace") put(scope.namespace, need);
    else if (patterns === undefined || patterned) put(null, need);
    else for (const ns of literal) put(ns, need);
  }
  const labels = { "app.kubernetes.io/name": layout.name };
  const subjects = [{
    kind: "ServiceAccount",
    name: layout.name,
    namespace: layout.accountNamespace,
  }];
  const objects: ManifestObject[] = [];
  const cluster = byPlace.get(null);
  if (cluster) {
    objects.push({
      apiVersion: RBAC_API,
      kind: "ClusterRole",
      metadata: { name: layout.name, labels },
      rules: rulesOf(cluster),
    }, {
      apiVersion: RBAC_API,
      kind: "ClusterRoleBinding",
      metadata: { name: layout.name, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: layout.name },
      subjects,
    });
  }
  const namespaces = [...byPlace.keys()].filter((k): k is string => k !== null);
  for (const namespace of namespaces) {
    objects.push({
      apiVersion: RBAC_API,
      kind: "Role",
      metadata: { name: layout.name, namespace, labels },
      rules: rulesOf(byPlace.get(namespace)!),
    }, {
      apiVersion: RBAC_API,
      kind: "RoleBinding",
      metadata: { name: layout.name, namespace, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: layout.name },
      subjects,
    });
  }
  return { objects, notes };
}

/**
 * One rule per row of the table and API group (and names): a row's resources of one group share
 * a rule; the same row's rule is not repeated.
 */
function rulesOf(needs: AccessNeed[]): Rule[] {
  const rules = new Map<string, Rule>();
  for (const n of needs) {
    const names = n.names ? [...n.names].sort() : undefined;
    const key = JSON.stringify([n.row, n.group, n.verbs, names]);
    const rule = rules.get(key);
    if (rule) {
      if (!rule.resources.includes(n.resource)) rule.resources.push(n.resource);
      continue;
    }
    rules.set(key, {
      apiGroups: [n.group],
      resources: [n.resource],
      ...(names ? { resourceNames: names } : {}),
      verbs: [...new Set(n.verbs)].sort((a, b) => VERB_ORDER.indexOf(a) - VERB_ORDER.indexOf(b)),
      why: n.why,
    });
  }
  return [...rules.values()];
}

/**
 * Objects as a YAML stream, as `kubectl apply -f -` takes it: rules with their comments, short
 * lists in flow style.
 *
 * @param objects The objects.
 * @param header A comment on top (without `#`), if any.
 * @returns The YAML text.
 */
export function manifestYaml(objects: ManifestObject[], header?: string): string {
  const docs = objects.map((object, i) => {
    const rules = Array.isArray(object.rules) ? object.rules as Rule[] : undefined;
    const plain = rules
      ? { ...object, rules: rules.map(({ why: _why, ...rule }) => rule) }
      : object;
    return yamlDocument(plain, {
      comments: i === 0 && header ? [...header.split("\n").map((l) => `# ${l}`), ""] : [],
      itemComments: rules ? { rules: rules.map((rule) => ` ${rule.why}`) } : {},
      flowKeys: { rules: ["apiGroups", "resources", "resourceNames", "verbs"] },
    });
  });
  return docs.map((d, i) => (i === 0 ? d : `---\n${d}`)).join("");
}

/**
 * The needs of an operator loaded from its files and flags.
 *
 * @param flags The flags, as `kopf run` takes them, and the layout's.
 * @returns The needs and the served namespaces.
 * @throws {LoadingError} For a file that cannot be loaded.
 * @throws {CatalogError} For a resource that cannot be resolved without a cluster.
 * @throws {OperatorError} For failed startup handlers.
 */
export async function operatorNeeds(
  flags: OperatorFlags,
): Promise<{ needs: AccessNeed[]; namespaces: string[] | undefined }> {
  const loaded = await loadOperator(flags);
  const resolve = await resolver(loaded.registry, flags.crdFiles);
  const needs = operatorAccess(loaded.registry, loaded.settings, {
    namespaces: loaded.namespaces,
    accountNamespace: flags.accountNamespace,
    resolve,
  });
  return { needs, namespaces: loaded.namespaces };
}

/**
 * Runs `kopf rbac`: prints the RBAC objects of the operator.
 *
 * @param flags The flags.
 * @param write Where the YAML goes (default stdout).
 * @returns The exit code: 0.
 * @throws {LoadingError | CatalogError | OperatorError} As {@link operatorNeeds}.
 */
export async function runRbac(
  flags: OperatorFlags,
  write: (text: string) => void = (t) => Deno.stdout.writeSync(new TextEncoder().encode(t)),
): Promise<number> {
  const { needs, namespaces } = await operatorNeeds(flags);
  const { objects, notes } = rbacObjects(needs, {
    name: flags.name,
    accountNamespace: flags.accountNamespace,
    namespaces,
  });
  for (const note of notes) console.error(`kopf: ${note}`);
  write(manifestYaml(
    objects,
    `The RBAC of the operator's service account ${flags.accountNamespace}/${flags.name}: ` +
      "what its handlers and settings need (kopf rbac).",
  ));
  return 0;
}
