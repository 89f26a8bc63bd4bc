/**
 * Spans through Deno's built-in OpenTelemetry, and nothing at all when it is off.
 *
 * Why this file: the operator and the embedded API server trace their work with the official
 * `npm:@opentelemetry/api`, to which Deno binds its own providers (tracer, context manager,
 * W3C propagator) when the process runs with `OTEL_DENO=true`; the runtime exports what we
 * make over OTLP, with the spans of its own `fetch` and `Deno.serve`. Everything the rest of the
 * code calls goes through here, so the rule below holds in one place.
 *
 * Off means free: whether tracing is on is decided once, when this module is first loaded —
 * `OTEL_DENO` is `true` or `1` and may be read (a narrow `--allow-env` that leaves it out
 * keeps tracing off; the permission is queried first, so nothing prompts). When off, the API
 * package is not even loaded ({@link TRACING} is false), every helper returns at its first line
 * and makes no object; call sites on a hot path test {@link TRACING} before they build
 * attributes. When on, the package is imported once (a top-level await of this module only).
 *
 * Context: the active span follows async calls through Deno's context manager, so a span made
 * while another is active is its child, and the spans of `fetch` land under it too. A span is
 * made active only for the call given to {@link inSpan}.
 *
 * Names and attributes: see `docs/tracing.md` and `attributes.ts` beside this file.
 *
 * @module
 */

import type {
  Attributes,
  Context,
  Link,
  Span,
  SpanContext,
  Tracer,
} from "npm:@opentelemetry/api@^1";

export type { Attributes, Context, Link, Span, SpanContext } from "npm:@opentelemetry/api@^1";

/**
 * Whether `OTEL_DENO` asks for telemetry, as read from an environment (pure; the rule of the
 * module doc).
 *
 * @param value The variable's value (undefined: not set or not readable).
 * @returns Whether tracing is on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { otelWanted } from "./tracing.ts";
 * assert.deepEqual([otelWanted("true"), otelWanted(" 1 "), otelWanted("false"), otelWanted(undefined)], [true, true, false, false]);
 * ```
 */
export function otelWanted(value: string | undefined): boolean {
  const v = value?.trim().toLowerCase();
  return v === "true" || v === "1";
}

function readOtelDeno(): string | undefined {
  try {
    const q = Deno.permissions.querySync({ name: "env", variable: "OTEL_DENO" });
    return q.state === "granted" ? Deno.env.get("OTEL_DENO") : undefined;
  } catch {
    return undefined;
  }
}

const otel = otelWanted(readOtelDeno()) ? await import("npm:@opentelemetry/api@^1") : undefined;
const tracer: Tracer | undefined = otel?.trace.getTracer("kopf");

/**
 * Whether spans are made in this process (decided once, at load; see the module doc). Hot
 * paths test it before they build anything for a span.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startSpan, TRACING } from "./tracing.ts";
 * // The tests run without OTEL_DENO: off, and no span is made.
 * assert.equal(TRACING, false);
 * assert.equal(startSpan("kopf.cycle"), undefined);
 * ```
 */
export const TRACING: boolean = tracer !== undefined;

/** Span kinds (OpenTelemetry's numbering). */
export const SpanKinds = { INTERNAL: 0, SERVER: 1, CLIENT: 2 } as const;

/** Options of {@link startSpan}. */
export interface SpanOptions {
  /** The span's kind (default internal). */
  kind?: 0 | 1 | 2 | undefined;
  /** A new trace, whatever span is active now (a cycle, a timer run). */
  root?: boolean | undefined;
  /** The parent's context (e.g. extracted from a request's `traceparent`). */
  parent?: Context | undefined;
  /** Links to spans of other traces. */
  links?: Link[] | undefined;
}

/**
 * Starts a span (a child of the active one, unless `root` or `parent` say otherwise). Not made
 * active: run code in it with {@link inSpan}; end it with {@link endSpan}.
 *
 * @param name The span's name.
 * @param attributes Its attributes.
 * @param options Kind, root, parent, links.
 * @returns The span, or undefined when tracing is off.
 */
export function startSpan(
  name: string,
  attributes?: Attributes,
  options?: SpanOptions,
): Span | undefined {
  if (!tracer) return undefined;
  const ctx = options?.parent ?? (options?.root ? otel!.ROOT_CONTEXT : current());
  return tracer.startSpan(name, {
    kind: options?.kind ?? 0,
    ...(attributes ? { attributes } : {}),
    ...(options?.links?.length ? { links: options.links } : {}),
    ...(options?.root && !options.parent ? { root: true } : {}),
  }, ctx);
}

/**
 * Calls a function with a span as the active one (its calls' spans become its children, and
 * `fetch` sends its `traceparent`); without a span, just calls it.
 *
 * @param span The span (undefined: none).
 * @param fn The function.
 * @param args Its arguments (no closure needed at the call site).
 * @returns What the function returns.
 */
export function inSpan<A extends unknown[], R>(
  span: Span | undefined,
  fn: (...args: A) => R,
  ...args: A
): R {
  if (!span) return fn(...args);
  return otel!.context.with(
    otel!.trace.setSpan(otel!.context.active(), span),
    fn,
    undefined,
    ...args,
  );
}

/**
 * Ends a span; with an error, records it as an exception event and, when `failed` (the default
 * with an error), sets the span's status to ERROR with the error's message.
 *
 * @param span The span (undefined: nothing to do).
 * @param error What went wrong, if anything.
 * @param failed Whether the error makes the span's status ERROR (default: when there is one).
 */
export function endSpan(span: Span | undefined, error?: unknown, failed?: boolean): void {
  if (!span) return;
  if (error !== undefined) {
    span.recordException(error instanceof Error ? error : String(error));
    if (failed ?? true) {
      span.setStatus({ code: 2, message: error instanceof Error ? error.message : String(error) });
    }
  }
  span.end();
}

/**
 * The span active now, if any (and tracing is on).
 *
 * @returns The span, or undefined.
 */
export function activeSpan(): Span | undefined {
  return otel ? otel.trace.getSpan(current()) : undefined;
}

/**
 * Sets an attribute of the active span, when there is one (e.g. the cause a cycle found).
 *
 * @param key The attribute's name.
 * @param value Its value.
 */
export function spanAttribute(key: string, value: string | number | boolean): void {
  if (!otel) return;
  otel.trace.getSpan(current())?.setAttribute(key, value);
}

/**
 * Adds an event to the active span (a transition, a decision), when there is one.
 *
 * @param name The event's name.
 * @param attributes Its attributes.
 */
export function spanEvent(name: string, attributes?: Attributes): void {
  if (!otel) return;
  otel.trace.getSpan(current())?.addEvent(name, attributes);
}

/**
 * Records a transition of the operator as a whole — peering's pause and resume, leadership
 * gained and lost, a shard membership change — as a span of no duration, a trace of its own
 * (they happen in background loops, inside no span), so that a backend shows when they
 * happened beside the cycles around them.
 *
 * @param name The span's name (e.g. `kopf.peering pause`).
 * @param attributes What changed.
 */
export function traceTransition(name: string, attributes?: Attributes): void {
  startSpan(name, attributes, { root: true })?.end();
}

/** The trace context of a log line, by the names of OpenTelemetry's non-OTLP log formats. */
export interface LogTraceFields {
  /** The trace id: 32 lower-case hex digits. */
  trace_id: string;
  /** The span id: 16 lower-case hex digits. */
  span_id: string;
  /** The W3C trace flags: two hex digits (`01`: sampled). */
  trace_flags: string;
}

/**
 * The trace and span ids of the active span, for a log line written now; undefined when tracing
 * is off or no span is active.
 *
 * @returns The fields, or undefined.
 */
export function logTraceFields(): LogTraceFields | undefined {
  if (!otel) return undefined;
  const sc = otel.trace.getSpan(current())?.spanContext();
  if (!sc || !otel.isSpanContextValid(sc)) return undefined;
  return {
    trace_id: sc.traceId,
    span_id: sc.spanId,
    trace_flags: sc.traceFlags.toString(16).padStart(2, "0"),
  };
}

/**
 * Writes the W3C trace context of a span (`traceparent`, and `tracestate` when it has one) into
 * request headers.
 *
 * @param span The span the request is made in (undefined: nothing is written).
 * @param headers The headers to add to.
 */
export function injectTraceContext(span: Span | undefined, headers: Record<string, string>): void {
  if (!span) return;
  otel!.propagation.inject(otel!.trace.setSpan(otel!.ROOT_CONTEXT, span), headers);
}

/**
 * The context of an incoming request's W3C trace context (`traceparent`, `tracestate`): the
 * parent of its server span. Without those headers (or with tracing off): undefined.
 *
 * @param header Reads a request header by its lower-case name.
 * @returns The parent context, or undefined.
 */
export function extractTraceContext(header: (name: string) => string | null): Context | undefined {
  if (!otel) return undefined;
  const traceparent = header("traceparent");
  if (!traceparent) return undefined;
  const carrier: Record<string, string> = { traceparent };
  const tracestate = header("tracestate");
  if (tracestate) carrier.tracestate = tracestate;
  return otel.propagation.extract(otel.ROOT_CONTEXT, carrier);
}

/**
 * A link to a span (kept as its context), for a later span of another trace.
 *
 * @param span The span.
 * @returns Its context, or undefined (no span, tracing off).
 */
export function spanContextOf(span: Span | undefined): SpanContext | undefined {
  return span?.spanContext();
}

/**
 * Iterations of a long-running function (a daemon): one span at a time, ended and started anew
 * at each `kopf.sleep()` the function awaits ({@link iterationBoundary}). While it runs, the
 * current iteration's span is the parent of the spans its calls make, as an active span is.
 */
export class Iterations {
  /** The current iteration's span (none between an iteration's end and the next one's start). */
  span: Span | undefined;
  /** How many iterations started. */
  count = 0;
  readonly #name: string;
  readonly #attributes: Attributes;

  /**
   * Starts the first iteration (a new trace).
   *
   * @param name The iterations' span name.
   * @param attributes Their attributes (each also gets `kopf.daemon.iteration`).
   */
  constructor(name: string, attributes: Attributes) {
    this.#name = name;
    this.#attributes = attributes;
    this.next();
  }

  /** Starts the next iteration's span (a new trace). */
  next(): void {
    this.count++;
    const attributes = { ...this.#attributes, "kopf.daemon.iteration": this.count };
    this.span = startSpan(this.#name, attributes, { root: true });
  }

  /**
   * Calls a function with these iterations as its context (and no active span: the spans its
   * calls make are children of the current iteration's).
   *
   * @param fn The function.
   * @param args Its arguments.
   * @returns What it returns.
   */
  run<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R {
    if (!otel) return fn(...args);
    return otel.context.with(otel.ROOT_CONTEXT.setValue(ITERATIONS, this), fn, undefined, ...args);
  }
}

/** The context key of the {@link Iterations} a function runs in. */
const ITERATIONS: symbol = Symbol.for("kopf.daemon.iterations");

/**
 * At a sleep of the function that runs now: when it runs in {@link Iterations}, ends the
 * current iteration's span and returns what starts the next one (to call when the sleep is
 * over); else undefined.
 *
 * @returns The start of the next iteration, or undefined.
 */
export function iterationBoundary(): (() => void) | undefined {
  if (!otel) return undefined;
  const iterations = otel.context.active().getValue(ITERATIONS) as Iterations | undefined;
  if (!iterations) return undefined;
  iterations.span?.end();
  iterations.span = undefined;
  return () => iterations.next();
}

/** The active context, with the current iteration's span as its span when there is no other. */
function current(): Context {
  const ctx = otel!.context.active();
  if (otel!.trace.getSpan(ctx)) return ctx;
  const span = (ctx.getValue(ITERATIONS) as Iterations | undefined)?.span;
  return span ? otel!.trace.setSpan(ctx, span) : ctx;
}
