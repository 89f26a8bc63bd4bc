/**
 * The spans of handler runs, for the one handler protocol (execution.ts): a span per attempt —
 * `kopf.handler <id>` for resource-changing, event, admission and conversion handlers (children
 * of the span active then: the object's cycle, the review), `kopf.timer <id>` and
 * `kopf.activity <id>` as new traces — and, for a daemon, a span per iteration
 * (`kopf.daemon <id>`, a new trace each), an iteration ending at each `kopf.sleep()` the daemon
 * awaits and the next starting when it wakes.
 *
 * Each span has `kopf.handler.id`, `kopf.handler.kind`, `kopf.handler.retry` and, at its end,
 * `kopf.handler.outcome` (see `cogs/tracing/attributes.ts`); a temporary failure adds
 * `kopf.handler.delay` (seconds until the retry) and records its error without setting the
 * status; a permanent failure records its error and sets the status to ERROR; an ignored error
 * is recorded too.
 *
 * Why a file of its own: execution.ts calls three small hooks, only when tracing is on
 * (`TRACING`), so the protocol reads as before and makes nothing when it is off. Index handlers
 * run on every event of every object outside of any cycle and have no spans.
 *
 * @module
 */

import { outcomeName } from "../../cogs/tracing/attributes.ts";
import {
  type Attributes,
  endSpan,
  inSpan,
  Iterations,
  type Span,
  startSpan,
} from "../../cogs/tracing/tracing.ts";
import { ObjectLogger, type OperatorLogger } from "./loggers.ts";
import type { Outcome } from "./progression.ts";

/** The spans of one handler run: the function called in them, and their end with the outcome. */
export interface HandlerTrace {
  /**
   * Calls the handler's function in the span (or the iterations).
   *
   * @param fn The function.
   * @param args Its arguments.
   * @returns What it returns.
   */
  run<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R;
  /**
   * Ends the span (or the current iteration) with the run's outcome.
   *
   * @param outcome The outcome.
   * @param caught The error the run threw, if any (also when its errors mode ignores it).
   */
  end(outcome: Outcome, caught: unknown): void;
}

/**
 * Starts the spans of one handler run (call only when tracing is on).
 *
 * @param id The handler's id.
 * @param kind Its kind (`changing`, `event`, `daemon`, `timer`, `activity`, `admission`, …).
 * @param retry How many attempts were made before this one.
 * @param logger The logger of the run (an object's logger names the object of timers and daemons).
 * @returns The run's trace, or undefined for kinds that have none (index handlers).
 */
export function traceHandler(
  id: string,
  kind: string,
  retry: number,
  logger: OperatorLogger,
): HandlerTrace | undefined {
  if (kind === "index") return undefined;
  const attributes: Attributes = {
    "kopf.handler.id": id,
    "kopf.handler.kind": kind,
    "kopf.handler.retry": retry,
  };
  // Timers and daemons start traces of their own: they say which object they run for.
  if ((kind === "daemon" || kind === "timer") && logger instanceof ObjectLogger) {
    const ref = logger.ref;
    if (ref.namespace) attributes["k8s.namespace.name"] = ref.namespace;
    if (ref.name) attributes["kopf.object.name"] = ref.name;
    if (ref.uid) attributes["kopf.object.uid"] = ref.uid;
  }
  if (kind === "daemon") return new DaemonTrace(new Iterations(`kopf.daemon ${id}`, attributes));
  const root = kind === "timer" || kind === "activity";
  const name = root ? `kopf.${kind} ${id}` : `kopf.handler ${id}`;
  return new SpanTrace(startSpan(name, attributes, { root }));
}

class SpanTrace implements HandlerTrace {
  readonly #span: Span | undefined;

  constructor(span: Span | undefined) {
    this.#span = span;
  }

  run<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R {
    return inSpan(this.#span, fn, ...args);
  }

  end(outcome: Outcome, caught: unknown): void {
    finish(this.#span, outcome, caught);
  }
}

class DaemonTrace implements HandlerTrace {
  readonly #iterations: Iterations;

  constructor(iterations: Iterations) {
    this.#iterations = iterations;
  }

  run<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R {
    return this.#iterations.run(fn, ...args);
  }

  end(outcome: Outcome, caught: unknown): void {
    finish(this.#iterations.span, outcome, caught);
    this.#iterations.span = undefined;
  }
}

function finish(span: Span | undefined, outcome: Outcome, caught: unknown): void {
  if (!span) return;
  const name = outcomeName(outcome, caught !== undefined);
  span.setAttribute("kopf.handler.outcome", name);
  if (name === "temporary" || name === "delayed") {
    span.setAttribute("kopf.handler.delay", outcome.delay ?? 0);
  }
  endSpan(span, outcome.error ?? caught, name === "permanent");
}
