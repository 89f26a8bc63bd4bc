/**
 * The span of a processing cycle: `kopf.cycle <resource>`, a new trace per cycle, with the
 * object's resource, namespace, name, uid and resourceVersion, the watch event's type
 * (`kopf.event.type`), the cause the cycle found (`kopf.cause`, set by changing.ts), and as
 * children the handlers' attempts and the cycle's API requests.
 *
 * Why a link and not a parent: a cycle is caused by a watch event, and a watch event carries no
 * trace context (kube-apiserver writes none on objects, and we invent no annotation). What the
 * operator does know is its own last write: when a cycle's event is the echo of the previous
 * cycle's patch (the object's resourceVersion is the one that patch returned), the new cycle
 * links to the cycle that wrote it (`kopf.link.reason: own-write`), so the echo and its cause
 * are one click apart.
 *
 * Why a file of its own: orchestration.ts calls {@link tracedCycle} instead of `processEvent`
 * only when tracing is on; with it off, nothing here runs.
 *
 * @module
 */

import { objectAttributes, resourceName } from "../../cogs/tracing/attributes.ts";
import {
  endSpan,
  inSpan,
  type Link,
  type SpanContext,
  startSpan,
} from "../../cogs/tracing/tracing.ts";
import type { Resource } from "../../cogs/structs/resource.ts";
import type { ObjectApi } from "../actions/application.ts";
import type { CycleResult, ObjectMemory, OperatorContext, RawEvent } from "./cycle_types.ts";
import { processEvent } from "./processing.ts";

/** The last write of an object's cycle: its span and the resourceVersion it wrote. */
interface LastWrite {
  span: SpanContext;
  resourceVersion: string;
}

/** The attributes of a link to the cycle whose write this cycle's event echoes. */
const OWN_WRITE = { "kopf.link.reason": "own-write" } as const;

/** Per object (its memory, dropped with it): the span of the cycle that last wrote it. */
const lastWrites = new WeakMap<ObjectMemory, LastWrite>();

/** A resource's names in its cycles' spans, made once per resource. */
interface CycleNames {
  /** The span's name: `kopf.cycle <plural>`. */
  span: string;
  /** `kopf.resource`. */
  resource: string;
}

const cycleNames = new WeakMap<Resource, CycleNames>();

function namesOf(resource: Resource): CycleNames {
  let names = cycleNames.get(resource);
  if (!names) {
    names = { span: `kopf.cycle ${resource.plural}`, resource: resourceName(resource) };
    cycleNames.set(resource, names);
  }
  return names;
}

/**
 * Processes one event of one object in a cycle span (see the module doc).
 *
 * @param op The operator's parts.
 * @param resource The object's resource.
 * @param api Patching and reading this object.
 * @param event The event.
 * @param memory The object's memory across cycles.
 * @param signal Aborts the cycle's API calls at operator exit.
 * @returns What `processEvent` returns.
 */
export async function tracedCycle(
  op: OperatorContext,
  resource: Resource,
  api: ObjectApi,
  event: RawEvent,
  memory: ObjectMemory,
  signal?: AbortSignal,
): Promise<CycleResult> {
  const meta = event.object.metadata;
  const names = namesOf(resource);
  const attributes = objectAttributes(names.resource, meta);
  attributes["kopf.event.type"] = event.type ?? "LISTED";
  const last = lastWrites.get(memory);
  const links: Link[] | undefined = last && last.resourceVersion === meta?.resourceVersion
    ? [{ context: last.span, attributes: OWN_WRITE }]
    : undefined;
  const span = startSpan(names.span, attributes, { root: true, links });
  try {
    const result = await inSpan(span, processEvent, op, resource, api, event, memory, signal);
    const written = result.patched?.metadata?.resourceVersion;
    if (span && written) {
      lastWrites.set(memory, { span: span.spanContext(), resourceVersion: written });
    }
    if (result.delay !== undefined) span?.setAttribute("kopf.cycle.delay", result.delay);
    endSpan(span);
    return result;
  } catch (error) {
    endSpan(span, error);
    throw error;
  }
}
