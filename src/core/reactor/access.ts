/**
 * What an operator asks of the Kubernetes API, as one table: for each kind of
 * request the framework makes — and where in the code it is made — the
 * resource, the verbs, the namespaces, and when. `kopf rbac` turns the table,
 * applied to a registry and its settings, into Roles and ClusterRoles; so the
 * rules an operator is given are the requests its code makes, and nothing
 * else.
 *
 * Why a table here and not a list of rules in the docs: a rule that is
 * missing is a 403 in production, a rule too many is a permission nobody
 * needs. Each row names the calls it stands for (the `calls` field), so a
 * change of those calls shows the row to change; and the proof is mechanical:
 * tests/cli/rbac_proof_test.ts runs operators in every mode with exactly the
 * generated rules on an API server that enforces RBAC, and checks both ways —
 * no request refused, and every row not marked `conditional` used.
 *
 * What is not here: discovery (`/api`, `/apis`, `/version`: every
 * authenticated user may read it through Kubernetes' `system:discovery`
 * ClusterRole), the handlers' own requests through `api` (declared with
 * `kopf.uses()`, rows "uses"), and `WebhookAutoServer`'s (and
 * `WebhookAutoTunnel`'s) optional listing of nodes to guess a development
 * cluster's host (without it, no guess).
 *
 * @module
 */

import { EVENTS_RESOURCE } from "../../cogs/clients/events.ts";
import { LEASES } from "../../cogs/clients/lease_records.ts";
import type { OperatorSettings } from "../../cogs/configs/settings.ts";
import {
  CLUSTER_PEERINGS,
  NAMESPACED_PEERINGS,
  type Resource,
  type Selector,
  selectSpecificNamespaces,
} from "../../cogs/structs/references.ts";
import type { OperatorRegistry } from "../intents/registry.ts";
import { type KubeVerb, usesOf } from "../intents/uses.ts";
import { leaseNameOf } from "./leader_election.ts";
import { shardNamespace } from "./sharding.ts";

/** Where a request goes. */
export type AccessScope =
  /** A cluster-scoped resource. */
  | { kind: "cluster" }
  /** A namespaced resource, in every namespace the operator serves (every one with `-A`). */
  | { kind: "served" }
  /** A namespaced resource, in one namespace. */
  | { kind: "namespace"; namespace: string };

/** One kind of request: a resource, verbs, where, and why. */
export interface AccessNeed {
  /** The API group (`""` for the core group). */
  group: string;
  /** The resource's plural, or `plural/subresource`. */
  resource: string;
  /** The verbs. */
  verbs: KubeVerb[];
  /** Where. */
  scope: AccessScope;
  /** Only these objects (RBAC's `resourceNames`), if the names are known. */
  names?: string[] | undefined;
  /** Why the operator makes these requests (a comment on the rule). */
  why: string;
  /** The table's row. */
  row: string;
  /**
   * Set when the requests are made only in some runs (a conflict, a stalled watch, a handler
   * that returns a result): why they may not be seen in a run that is otherwise complete.
   */
  conditional?: string | undefined;
  /** Verbs of an otherwise unconditional need that are used only in some runs, and why. */
  conditionalVerbs?: Partial<Record<KubeVerb, string>> | undefined;
}

/** What the table needs besides the registry and the settings. */
export interface AccessOptions {
  /** The served `-n` patterns; undefined for a cluster-wide operator (`-A`). */
  namespaces: string[] | undefined;
  /**
   * The namespace of the operator's pod (its service account's): the login's default namespace,
   * and `$POD_NAMESPACE` — where Leases go by default and the events of cluster-scoped objects.
   */
  accountNamespace: string;
  /**
   * The resources a selector stands for (typed resources, built-in kinds, CRDs known without a
   * cluster). A resource whose scope is not known has `namespaced: undefined`.
   *
   * @throws {Error} When the selector cannot be resolved without a cluster (one line saying what
   *   to do).
   */
  resolve(selector: Selector): Resource[];
}

/** A resource of a row: where, and the objects if they are known by name. */
interface Target {
  group: string;
  resource: string;
  scope: AccessScope;
  names?: string[];
}

/** What the rows are computed from, once per call. */
interface Facts {
  registry: OperatorRegistry;
  settings: OperatorSettings;
  options: AccessOptions;
  /** Every watched resource (handlers', indices', owned children's). */
  watched: Resource[];
  /** The watched resources the framework writes to (progress, diff-base, finalizers, results). */
  written: Resource[];
  /** Whether the operator serves namespaces by `-n`. */
  namespaced: boolean;
  /** The peering's kind and mode, or undefined when standalone. */
  peering: { resource: Selector; scope: AccessScope; name: string; mandatory: boolean } | undefined;
}

/** One row of the table. */
interface Row {
  /** A short name (shown in the proof's failures). */
  row: string;
  /** The calls it stands for: `module: function` (for the reader keeping the two in step). */
  calls: string;
  /** The verbs. */
  verbs: KubeVerb[];
  /** Why (the rule's comment). */
  why: string;
  /** The resources of the row in this operator (none: the row does not apply). */
  targets(facts: Facts): Target[];
  /** When the requests are made in some runs only. */
  conditional?: string;
}

const CRDS = { group: "apiextensions.k8s.io", resource: "customresourcedefinitions" };
const CLUSTER: AccessScope = { kind: "cluster" };
const SERVED: AccessScope = { kind: "served" };
const WEBHOOK_CONFIGURATIONS = ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"];

/** The table: every request the framework makes, in the order Roles list them. */
const ROWS: readonly Row[] = [
  {
    row: "watching",
    calls: "reactor/orchestration.ts: Orchestrator#watch (infiniteWatch: list, then watch)",
    verbs: ["list", "watch"],
    why: "Framework: watching the served resources (handlers, indices, owned children).",
    targets: (f) => f.watched.map((r) => target(r, r.plural, f)),
  },
  {
    row: "patching",
    calls: "actions/application.ts: applyPatch, addFinalizer, removeFinalizer (via patchObject)",
    verbs: ["patch"],
    why: "Framework: finalizers, progress and diff-base annotations, handlers' patches.",
    targets: (f) => f.written.map((r) => target(r, r.plural, f)),
  },
  {
    row: "rereading",
    calls: "reactor/orchestration.ts: the queues' refresh; actions/application.ts: editFinalizers",
    verbs: ["get"],
    why: "Framework: re-reading an object after a conflict or a watch that lags behind.",
    // With sharding, every queued resource: an object gained from another replica is read first.
    targets: (f) =>
      (f.settings.sharding.enabled ? f.watched : f.written).map((r) => target(r, r.plural, f)),
    conditional: "a finalizer patch that conflicts, a watch that stalls after our own write, " +
      "or (sharding) an object gained from another replica",
  },
  {
    row: "status",
    calls: "cogs/clients/patching.ts: patchObject (the status part of a merge patch)",
    verbs: ["patch"],
    why: "Framework: handlers' results and patch.status (the status subresource).",
    targets: (f) =>
      f.written.filter((r) => r.subresources.has("status")).map((r) =>
        target(r, `${r.plural}/status`, f)
      ),
    conditional: "handlers that return results or write patch.status",
  },
  {
    row: "events",
    calls: "engines/event_recorder.ts: apiEventWriter (postEvent: create; patchEvent: patch)",
    verbs: ["create", "patch"],
    why: "Framework: posting events about the handled objects (kubectl describe).",
    targets: (f) => {
      if (!f.settings.posting.enabled || !f.watched.length) return [];
      const out: Target[] = [];
      // Events of namespaced objects go to their namespaces; of cluster-scoped ones, to the
      // login's default namespace (the pod's): cogs/clients/events.ts.
      if (f.watched.some((r) => r.namespaced !== false)) out.push(events(SERVED));
      if (f.watched.some((r) => r.namespaced === false)) {
        out.push(events({ kind: "namespace", namespace: f.options.accountNamespace }));
      }
      return out;
    },
    conditional: "a handler that logs, or kopf.event() (with settings.posting.enabled)",
  },
  {
    row: "crds",
    calls: "reactor/observation.ts: followCrds (from the orchestrator, webhooking, peering)",
    verbs: ["list", "watch"],
    why: "Framework: following CRDs, so resources are served as they come and go.",
    targets: (f) => {
      const scanning = !f.settings.scanning.disabled;
      const orchestrator = scanning && f.watched.length > 0;
      const admission = scanning && managedAdmission(f.settings) !== undefined;
      const peering = f.peering?.mandatory === true; // waits for absent peering CRDs
      return orchestrator || admission || peering ? [{ ...CRDS, scope: CLUSTER }] : [];
    },
  },
  {
    row: "namespaces",
    calls: "reactor/observation.ts: followNamespaces (from the orchestrator and the peering)",
    verbs: ["list", "watch"],
    why: "Framework: following the namespaces that match -n as they come and go.",
    targets: (f) => {
      if (!f.namespaced || f.settings.scanning.disabled) return [];
      const served = f.watched.some((r) => r.namespaced !== false);
      const peering = f.peering?.scope.kind === "served";
      return served || peering ? [{ group: "", resource: "namespaces", scope: CLUSTER }] : [];
    },
  },
  {
    row: "peering",
    calls: "reactor/peering.ts: startPeering (infiniteWatch by name); engines/peering.ts: " +
      "touchPeering (patch); PeeringMonitor's clean (patch)",
    verbs: ["list", "watch", "patch"],
    why: "Framework: knowing which other operators are running (peering).",
    targets: (f) => f.peering ? [peeringTarget(f.peering)] : [],
    conditional: "the peering CRDs exist (and, in the automatic mode, the peering object)",
  },
  {
    row: "peering-lookup",
    calls: "reactor/peering.ts: startPeering (readObject: does the default peering exist?)",
    verbs: ["get"],
    why: "Framework: looking up the peering object (the automatic mode).",
    targets: (f) => f.peering && !f.peering.mandatory ? [peeringTarget(f.peering)] : [],
    conditional: "the peering CRDs exist",
  },
  {
    row: "leader-election",
    calls: "cogs/clients/leases.ts: LeaseLock (readLease: get; updateLease: update)",
    verbs: ["get", "update"],
    why: "Framework: leader election (its Lease).",
    targets: (f) => {
      if (!f.settings.leaderElection.enabled) return [];
      return [{ ...LEASE, scope: leaderLeaseScope(f), names: [leaseNameOf(f.settings)] }];
    },
  },
  {
    row: "leader-election-create",
    calls: "cogs/clients/leases.ts: LeaseLock (createObject when the Lease is absent)",
    verbs: ["create"],
    why: "Framework: leader election (creating its Lease; a create cannot be limited by name).",
    targets: (f) =>
      f.settings.leaderElection.enabled ? [{ ...LEASE, scope: leaderLeaseScope(f) }] : [],
  },
  {
    row: "sharding",
    calls: "engines/shard_leases.ts: MemberLease (get, create, update, delete); " +
      "reactor/sharding.ts: the observer (infiniteWatch by label; delete of expired members)",
    verbs: ["get", "list", "watch", "create", "update", "delete"],
    why: "Framework: sharding (the member Leases of the shard group).",
    targets: (f) => {
      const s = f.settings.sharding;
      if (!s.enabled) return [];
      const namespace = shardNamespace(
        s.namespace,
        f.options.namespaces,
        (name) => name === "POD_NAMESPACE" ? f.options.accountNamespace : undefined,
      );
      return [{ ...LEASE, scope: { kind: "namespace", namespace } }];
    },
  },
  {
    row: "webhook-configurations",
    calls: "reactor/webhooking.ts: patchConfiguration",
    verbs: ["patch"],
    why: "Framework: admission webhook configuration management (settings.admission.managed).",
    targets: (f) => {
      const managed = managedAdmission(f.settings);
      return managed === undefined ? [] : WEBHOOK_CONFIGURATIONS.map((resource) => ({
        group: "admissionregistration.k8s.io",
        resource,
        scope: CLUSTER,
        names: [managed],
      }));
    },
  },
  {
    row: "webhook-configurations-create",
    calls: "reactor/webhooking.ts: createConfiguration",
    verbs: ["create"],
    why: "Framework: creating the managed webhook configurations (not limited by name).",
    targets: (f) =>
      managedAdmission(f.settings) === undefined ? [] : WEBHOOK_CONFIGURATIONS.map((resource) => ({
        group: "admissionregistration.k8s.io",
        resource,
        scope: CLUSTER,
      })),
  },
  {
    row: "conversion",
    calls: "reactor/webhooking.ts: manageConversion (GET, then PATCH of spec.conversion)",
    verbs: ["get", "patch"],
    why: "Framework: the conversion webhook of the converters' CRDs (settings.admission.managed).",
    targets: (f) => {
      if (managedAdmission(f.settings) === undefined) return [];
      const names = new Set<string>();
      for (const h of f.registry.converterHandlers()) {
        for (const r of f.options.resolve(h.selector)) {
          if (r.group) names.add(`${r.plural}.${r.group}`);
        }
      }
      return names.size ? [{ ...CRDS, scope: CLUSTER, names: [...names].sort() }] : [];
    },
  },
];

const LEASE = { group: LEASES.group, resource: LEASES.plural };

function events(scope: AccessScope): Target {
  return { group: EVENTS_RESOURCE.group, resource: EVENTS_RESOURCE.plural, scope };
}

function target(r: Resource, resource: string, f: Facts): Target {
  if (r.namespaced === undefined && f.namespaced) {
    throw new Error(
      `The scope of ${r.plural}.${r.group} is not known, and -n needs it (Roles per namespace, ` +
        "or a ClusterRole): give its CRD with --crd FILE, or define it with kopf.resource()",
    );
  }
  return { group: r.group, resource, scope: r.namespaced === false ? CLUSTER : SERVED };
}

function peeringTarget(p: NonNullable<Facts["peering"]>): Target {
  return {
    group: p.resource.group ?? "kopf.dev",
    resource: p.resource.plural ?? String(p.resource.any),
    scope: p.scope,
    names: [p.name],
  };
}

/** The managed configurations' name, when the operator manages them. */
function managedAdmission(settings: OperatorSettings): string | undefined {
  return settings.admission.server !== null && settings.admission.managed
    ? settings.admission.managed
    : undefined;
}

/** reactor/leader_election.ts: leaseNamespaceOf, with the login's namespace being the pod's. */
function leaderLeaseScope(f: Facts): AccessScope {
  const configured = f.settings.leaderElection.namespace;
  if (configured) return { kind: "namespace", namespace: configured };
  const patterns = f.options.namespaces;
  const literal = patterns ? selectSpecificNamespaces(patterns) : [];
  if (patterns?.length === 1 && literal.length === 1) {
    return { kind: "namespace", namespace: literal[0]! };
  }
  return { kind: "namespace", namespace: f.options.accountNamespace };
}

/**
 * The requests an operator makes: the table applied to a registry, its settings (after the
 * startup handlers) and its scope, plus what its code declared with `kopf.uses()`.
 *
 * @param registry The handlers.
 * @param settings The settings, as the startup handlers left them.
 * @param options The served namespaces, the pod's namespace, and the resolution of selectors.
 * @returns The needs, in the table's order, then the declared uses.
 * @throws {Error} When a resource cannot be resolved without a cluster, or its scope is needed
 *   and unknown (one line saying what to do).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorRegistry, OperatorSettings, Resource } from "@kopf/kopf";
 * import * as kopf from "@kopf/kopf";
 * import { operatorAccess } from "./access.ts";
 * const registry = new OperatorRegistry();
 * kopf.on.event("pods", { registry }, () => {});
 * const settings = new OperatorSettings();
 * settings.peering.standalone = true;
 * const pods = new Resource({ group: "", version: "v1", plural: "pods", namespaced: true });
 * const needs = operatorAccess(registry, settings, {
 *   namespaces: undefined,
 *   accountNamespace: "default",
 *   resolve: () => [pods],
 * });
 * assert.deepEqual(needs.map((n) => `${n.resource}: ${n.verbs.join(",")}`), ["pods: list,watch", "events: create,patch", "customresourcedefinitions: list,watch"]);
 * ```
 */
export function operatorAccess(
  registry: OperatorRegistry,
  settings: OperatorSettings,
  options: AccessOptions,
): AccessNeed[] {
  const watched = new Map<string, Resource>();
  for (const selector of registry.selectors()) {
    for (const r of options.resolve(selector)) watched.set(`${r.plural}.${r.group}`, r);
  }
  const all = [...watched.values()];
  // Resources whose objects the framework writes: change handlers (progress, diff-base,
  // finalizers, results), daemons and timers (finalizers), reconcilers (results, patches).
  // Raw-event handlers, indices and owned children are only watched: a raw-event handler that
  // writes through its `patch` declares it with kopf.uses(resource, ["patch"]).
  const written = all.filter((r) =>
    registry.changingHandlers(r).length > 0 || registry.spawningHandlers(r).length > 0 ||
    registry.reconcilingHandlers(r).length > 0
  );
  const p = settings.peering;
  // reactor/sharding.ts: with sharding, the peering is standalone unless it is mandatory.
  const standalone = p.standalone || (settings.sharding.enabled && !p.mandatory);
  const clusterwidePeering = p.clusterwide || options.namespaces === undefined;
  const facts: Facts = {
    registry,
    settings,
    options,
    watched: all,
    written,
    namespaced: options.namespaces !== undefined,
    peering: standalone ? undefined : {
      resource: clusterwidePeering ? CLUSTER_PEERINGS : NAMESPACED_PEERINGS,
      scope: clusterwidePeering ? CLUSTER : SERVED,
      name: p.name,
      mandatory: p.mandatory,
    },
  };
  // Every watch (cogs/clients/watching.ts: infiniteWatch) reads the state first: streamed over
  // the watch itself (sendInitialEvents: authorized as a watch), or by a LIST — always with
  // streamingLists "never", when the server does not stream with "auto", never with "always".
  const streaming = settings.watching.streamingLists;
  const listing = (
    verbs: KubeVerb[],
  ): { verbs: KubeVerb[]; conditionalVerbs?: AccessNeed["conditionalVerbs"] } => {
    if (!verbs.includes("list") || !verbs.includes("watch") || streaming === "never") {
      return { verbs };
    }
    if (streaming === "always") return { verbs: verbs.filter((v) => v !== "list") };
    return {
      verbs,
      conditionalVerbs: {
        list:
          "an API server that does not stream lists over watches (WatchList): the watcher lists",
      },
    };
  };
  const needs: AccessNeed[] = [];
  for (const row of ROWS) {
    for (const t of row.targets(facts)) {
      needs.push({
        group: t.group,
        resource: t.resource,
        ...listing([...row.verbs]),
        scope: t.scope,
        ...(t.names ? { names: t.names } : {}),
        why: row.why,
        row: row.row,
        ...(row.conditional ? { conditional: row.conditional } : {}),
      });
    }
  }
  for (const use of usesOf(registry)) {
    for (const r of options.resolve(use.selector)) {
      const resource = use.subresource ? `${r.plural}/${use.subresource}` : r.plural;
      needs.push({
        group: r.group,
        resource,
        verbs: [...use.verbs],
        scope: target(r, resource, facts).scope,
        why: "Application: what the handlers do through the API client (kopf.uses).",
        row: "uses",
      });
    }
  }
  return needs;
}

/**
 * The rows of the table: name, calls, verbs, and when they may stay unused (for the proof and
 * for the curious).
 *
 * @returns The rows.
 */
export function accessRows(): { row: string; calls: string; verbs: KubeVerb[]; why: string }[] {
  return ROWS.map(({ row, calls, verbs, why }) => ({ row, calls, verbs: [...verbs], why }));
}
