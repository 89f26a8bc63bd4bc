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

import { objectAttributes } from "../../cogs/tracing/attributes.ts";
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

/** Per object (its memory, dropped with it): the span of the cycle that last wrote it. */
const lastWrites = new WeakMap<ObjectMemory, LastWrite>();

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
  const attributes = objectAttributes(resource, meta);
  attributes["kopf.event.type"] = event.type ?? "LISTED";
  const last = lastWrites.get(memory);
  const links: Link[] = [];
  if (last && last.resourceVersion === meta?.resourceVersion) {
    links.push({ context: last.span, attributes: { "kopf.link.reason": "own-write" } });
  }
  const span = startSpan(`kopf.cycle ${resource.plural}`, attributes, { root: true, links });
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
