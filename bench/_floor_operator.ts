/**
 * The floor of the operator benchmark (`operator_bench.ts`, phase `floor`): a
 * process that makes exactly the operator's API calls for the benchmark's
 * objects, through the same public client (`kopf.KubeClient`: the same HTTP
 * client, JSON parsing, watch stream and patch splitting), with none of the
 * framework around them — no queues, no causes, no diff-base comparison, no
 * handler protocol, no progress. What it costs per object is what any operator
 * written on this client costs at the least; the operator's CPU per object
 * beyond it is the framework's.
 *
 * Per object, the same writes as the operator with the benchmark's create
 * handler (`_bench_operator.ts`):
 * 1. the finalizer, as a JSON patch guarded by the resourceVersion;
 * 2. the create handler's result in `status` and the diff-base annotation, as
 *    one merge patch (split by the client into the main endpoint and
 *    `/status`, as the operator's is);
 * 3. when the object is being deleted, the finalizer's removal;
 * 4. with `events` (the options' JSON), after the create handler's result, the
 *    two Events the operator as shipped posts about it (`Handler 'create_fn'
 *    succeeded.`, `All handlers succeeded for creation.`), one POST each, as
 *    the operator's default settings post its info lines.
 * Every watch event is parsed (by the client) and looked at; an object whose
 * write is in flight is skipped, as the operator's queue skips the echoes of
 * its own writes.
 *
 * It speaks the line protocol of `_bench_operator.ts` on stdout (`ready`,
 * `report`, `stopped`), so that `_operator_process.ts` drives it the same way.
 *
 * Usage: `deno run -A bench/_floor_operator.ts <kubeconfig> [options as JSON]`
 * (options: `{"events": true}`, `{"namespace": "ns"}` to watch one namespace only, or none).
 *
 * @module
 */

import * as kopf from "../mod.ts";
import { answerReports, type ChildOptions, type ChildReport } from "./_bench_operator.ts";

/** The operator's finalizer and diff-base annotation (Kopf's names). */
export const FINALIZER = "kopf.zalando.org/KopfFinalizerMarker";
/** The operator's diff-base annotation (Kopf's name). */
export const LAST_HANDLED = "kopf.zalando.org/last-handled-configuration";

/**
 * The JSON patch that adds the finalizer, guarded by the resourceVersion.
 *
 * @param resourceVersion The object's, as seen.
 * @returns The patch.
 */
export function finalizerPatch(resourceVersion: string | undefined): unknown[] {
  return [
    { op: "test", path: "/metadata/resourceVersion", value: resourceVersion },
    { op: "add", path: "/metadata/finalizers", value: [FINALIZER] },
  ];
}

/**
 * The JSON patch that removes the finalizer, guarded by the resourceVersion.
 *
 * @param resourceVersion The object's, as seen.
 * @param finalizers The object's finalizers, as seen.
 * @returns The patch.
 */
export function releasePatch(resourceVersion: string | undefined, finalizers: string[]): unknown[] {
  return [
    { op: "test", path: "/metadata/resourceVersion", value: resourceVersion },
    { op: "remove", path: `/metadata/finalizers/${finalizers.indexOf(FINALIZER)}` },
  ];
}

/**
 * What the floor does about a watch event: the creation's writes for a new object (no finalizer
 * and no result yet), the finalizer's removal for one being deleted, or nothing.
 *
 * @param type The event's type.
 * @param object The object.
 * @returns What to do, if anything.
 */
export function floorAction(
  type: string,
  object: kopf.KubeObject,
): "create" | "release" | undefined {
  if (type === "DELETED" || type === "BOOKMARK") return undefined;
  const finalizers = object.metadata.finalizers ?? [];
  if (object.metadata.deletionTimestamp) {
    return finalizers.includes(FINALIZER) ? "release" : undefined;
  }
  return !finalizers.includes(FINALIZER) && !object.status?.create_fn ? "create" : undefined;
}

/**
 * The reference of an object's Events.
 *
 * @param object The object.
 * @returns Its reference.
 */
export function floorRef(object: kopf.KubeObject): Record<string, unknown> {
  const { name, namespace, uid } = object.metadata;
  return { apiVersion: object.apiVersion, kind: object.kind, name, uid, namespace };
}

/**
 * A report line of a floor (no cycles, messages, starts or metrics: only its failures and memory).
 *
 * @param event `report` or `stopped`.
 * @param failures How many of its writes failed.
 * @returns The line.
 */
export function floorReport(event: ChildReport["event"], failures: number): ChildReport {
  return {
    event,
    cycles: 0,
    messages: failures ? { failures } : {},
    starts: {},
    occurrences: 0,
    metrics: "",
    memory: Deno.memoryUsage(),
  };
}

/**
 * An Event as the operator posts it (`cogs/clients/events.ts`), about `ref`, now.
 *
 * @param ref The object's reference.
 * @param message The message.
 * @returns The Event's body.
 */
export function floorEvent(ref: Record<string, unknown>, message: string): Record<string, unknown> {
  const time = new Date().toISOString();
  return {
    metadata: { namespace: ref.namespace, generateName: "kopf-event-" },
    action: "Action?",
    type: "Normal",
    reason: "Logging",
    message,
    reportingComponent: "kopf",
    reportingInstance: "dev",
    source: { component: "kopf" },
    involvedObject: ref,
    firstTimestamp: time,
    lastTimestamp: time,
    eventTime: `${time.slice(0, -1)}000Z`,
  };
}

if (import.meta.main) {
  const [kubeconfig, json = "{}"] = Deno.args;
  if (!kubeconfig) throw new Error("usage: _floor_operator.ts <kubeconfig> [options as JSON]");
  const options = JSON.parse(json) as ChildOptions;
  const posting = !!options.events;
  const encoder = new TextEncoder();
  const out = (line: Record<string, unknown>) =>
    Deno.stdout.writeSync(encoder.encode(JSON.stringify(line) + "\n"));

  const login = await kopf.loginWithKubeconfig({ path: kubeconfig });
  if (!login) throw new Error(`no credentials in ${kubeconfig}`);
  using vault = new kopf.Vault({ login });
  const api = kopf.KubeClient.fromVault(vault);
  const resource = await api.resolve("kopfexamples.v1.kopf.dev");
  const events = posting ? await api.resolve("events.v1") : undefined;
  const stop = new AbortController();
  Deno.addSignalListener("SIGTERM", () => stop.abort());
  const signal = stop.signal;

  /** The objects (by uid) with a write in flight: their events meanwhile are echoes. */
  const busy = new Set<string>();
  let failures = 0;

  const create = async (object: kopf.KubeObject) => {
    const { name, namespace, resourceVersion } = object.metadata;
    const finalized = await api.patch(resource, name!, finalizerPatch(resourceVersion), {
      namespace,
      type: "json",
      signal,
    });
    const essence = JSON.stringify({ spec: finalized.spec }) + "\n";
    await api.patch(resource, name!, {
      status: { create_fn: { message: "created" } },
      metadata: { annotations: { [LAST_HANDLED]: essence } },
    }, { namespace, signal });
    if (events) {
      const ref = floorRef(object);
      await Promise.all([
        post(events, ref, "Handler 'create_fn' succeeded."),
        post(events, ref, "All handlers succeeded for creation."),
      ]);
    }
  };
  const post = async (events: kopf.Resource, ref: Record<string, unknown>, message: string) => {
    await api.create(events, floorEvent(ref, message), {
      namespace: ref.namespace as string,
      signal,
    });
  };
  const release = async (object: kopf.KubeObject) => {
    const { name, namespace, resourceVersion, finalizers = [] } = object.metadata;
    await api.patch(resource, name!, releasePatch(resourceVersion, finalizers), {
      namespace,
      type: "json",
      signal,
    });
  };
  const run = (uid: string, work: Promise<void>) => {
    busy.add(uid);
    work.catch((e) => {
      if (!signal.aborted && !(e instanceof kopf.NotFoundError)) {
        failures++;
        console.error(`the floor's write failed: ${e}`);
      }
    }).finally(() => busy.delete(uid));
  };

  answerReports(() => out({ ...floorReport("report", failures) }));

  out({ event: "ready" });
  try {
    for await (
      const { type, object } of api.watch(resource, { namespace: options.namespace, signal })
    ) {
      const uid = object.metadata.uid!;
      if (busy.has(uid)) continue;
      const action = floorAction(type, object);
      if (action) run(uid, action === "create" ? create(object) : release(object));
    }
  } catch (e) {
    if (!signal.aborted) throw e;
  }
  out({ ...floorReport("stopped", failures) });
  Deno.exit(0);
}
