/**
 * Running an operator: its parts (parts.ts) started in the order of one list
 * — the health server, startup handlers, login, events, discovery of the
 * resources the handlers want (observation.ts), the watchers feeding
 * per-object queues (orchestration.ts), admission, peering, leader election,
 * sharding — and their exit steps run stage by stage, all owned by one task
 * that stops through an `AbortSignal`, gracefully, with nothing left running
 * behind.
 *
 * `operator()` is the embeddable core (several operators may run in one
 * process, each with its own registry and settings); `run()` adds the process
 * signals (SIGINT/SIGTERM, a second one forces the exit); `spawnTasks()` and
 * `runTasks()` split the two steps for applications with their own loops.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { realClock } from "../../cogs/aio/clock.ts";
import { clockScope } from "../../cogs/aio/clock_scope.ts";
import { sleep } from "../../cogs/aio/sleep.ts";
import { within } from "../../cogs/aio/within.ts";
import { OperatorSettings } from "../../cogs/configs/settings.ts";
import { getDefaultLifecycle } from "../actions/lifecycles.ts";
import type { AnyObject } from "../actions/invocation.ts";
import { lineSink, ObjectLogger, OperatorLogger } from "../actions/loggers.ts";
import { apiScope, type PendingApi, pendingApi } from "../actions/handler_api.ts";
import { OperatorIndexers } from "../engines/indexing.ts";
import { OperatorMetrics } from "../engines/metrics.ts";
import { type PostingScope, postingScope } from "../engines/posting.ts";
import { Memo } from "../intents/handlers.ts";
import { getDefaultRegistry } from "../intents/registration.ts";
import { OperatorError } from "./errors.ts";
import {
  EXIT_STAGES,
  LEAVE_STAGES,
  need,
  type OperatorOptions,
  type OperatorPart,
  type OperatorTask,
  type Started,
  type Startup,
} from "./parts.ts";
import {
  apiPart,
  checksPart,
  contextPart,
  discoveryPart,
  eventsPart,
  loginPart,
  metricsPart,
  probesPart,
  startupPart,
  watchersPart,
} from "./startup.ts";
import {
  admissionPart,
  applyPeeringOptions,
  leaderElectionPart,
  peeringPart,
  shardingPart,
} from "./optional_parts.ts";

export { OperatorError } from "./errors.ts";
export type { OperatorOptions, OperatorTask } from "./parts.ts";

/**
 * The abort reason of an operator stopped by a process signal (`kopf.run()`, `kopf run`): a
 * second signal exits the process at once, and the exit's notices say so.
 *
 * @example
 * ```ts ignore
 * const stop = new AbortController();
 * Deno.addSignalListener("SIGINT", () => stop.abort(new SignalledExit("SIGINT")));
 * ```
 */
export class SignalledExit extends Error {
  /** The signal received. */
  readonly signal: Deno.Signal;

  /** @param signal The signal received. */
  constructor(signal: Deno.Signal) {
    super(`Stopped by ${signal}.`);
    this.name = "SignalledExit";
    this.signal = signal;
  }
}

/** Seconds of exiting after which the operator says what it still waits for (then each minute). */
const EXIT_NOTICE = 5;

/** The scope of a running operator (for `kopf.event()`, test runners and console capture). */
export interface OperatorScope {
  /** A number unique to each operator started in this process, counting from 1. */
  id: number;
}

/** The operator the current code runs in. */
export const operatorScope: AsyncLocalStorage<OperatorScope> = new AsyncLocalStorage<
  OperatorScope
>();

let nextId = 1;

/**
 * Runs an operator until the signal aborts (or a fatal error).
 *
 * @param options Registry, settings, namespaces, logging, signal.
 * @returns When stopped.
 * @throws {OperatorError} For failed startup or login, an unreachable API.
 *
 * @example
 * ```ts ignore
 * import { operator } from "@kopf/kopf";
 * const stop = new AbortController();
 * setTimeout(() => stop.abort(), 10_000);
 * await operator({ clusterwide: true, signal: stop.signal });
 * ```
 */
export async function operator(options: OperatorOptions = {}): Promise<void> {
  const tasks = await spawnTasks(options);
  await runTasks(tasks, options.signal);
}

/**
 * Starts an operator's tasks: the returned tasks run until the signal aborts.
 * Startup handlers, login and discovery happen before this resolves.
 *
 * @param options As for {@link operator}.
 * @returns The tasks.
 * @throws {OperatorError} For failed startup, login, or discovery.
 */
export async function spawnTasks(options: OperatorOptions = {}): Promise<OperatorTask[]> {
  const scope: OperatorScope = { id: nextId++ };
  const posting: PostingScope = {
    poster: undefined,
    posting: () => ({ enabled: false, level: "info" }),
  };
  const handlerApi = pendingApi(); // kopf.api() and the handlers' `api`, connected after the login
  return await operatorScope.run(
    scope,
    () =>
      postingScope.run(
        posting,
        () =>
          // The operator's clock for kopf.sleep() in its handlers and the tasks they start.
          clockScope.run(
            options.clock ?? realClock,
            () => apiScope.run(handlerApi.kube, () => startOperator(options, posting, handlerApi)),
          ),
      ),
  );
}

/**
 * Waits for an operator's tasks; a task that fails stops the operator (and so the others) from
 * inside, and its error is what this throws.
 *
 * @param tasks The tasks from {@link spawnTasks}.
 * @param signal Not needed: the tasks stop on the signal given to {@link spawnTasks} (kept for
 *   calls written as `runTasks(tasks, signal)`).
 * @returns When all tasks ended.
 * @throws The first task's error.
 */
export async function runTasks(tasks: OperatorTask[], signal?: AbortSignal): Promise<void> {
  const results = await Promise.allSettled(tasks.map((t) => t.done));
  void signal;
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
}

async function startOperator(
  options: OperatorOptions,
  posting: PostingScope,
  handlerApi: PendingApi,
): Promise<OperatorTask[]> {
  // What to undo when the start fails half-way (e.g. the health server started before startup).
  const undo: Array<() => Promise<void>> = [];
  try {
    return await startOperatorTasks(options, posting, undo, handlerApi);
  } catch (e) {
    for (const fn of undo) await fn().catch(() => {});
    throw e;
  }
}

/**
 * The parts of an operator, in their start order (each in parts.ts's terms; their exit steps run
 * by stage, parts.ts's EXIT_STAGES then LEAVE_STAGES). Adding a part: its file, and a line here.
 */
const PARTS: readonly OperatorPart[] = [
  probesPart, // first: a slow start is seen as alive
  startupPart, // the startup handlers may change the settings…
  checksPart, // …so the parts' settings are checked after them, before anything connects
  loginPart,
  apiPart,
  eventsPart,
  contextPart,
  discoveryPart,
  shardingPart, // before the watchers: their queues ask its gate
  watchersPart,
  metricsPart,
  admissionPart,
  peeringPart,
  leaderElectionPart,
];

async function startOperatorTasks(
  options: OperatorOptions,
  posting: PostingScope,
  undo: Array<() => Promise<void>>,
  handlerApi: PendingApi,
): Promise<OperatorTask[]> {
  const run = prepare(options, posting, undo, handlerApi);
  const started: Started[] = [];
  for (const part of run.parts) started.push(await part.start(run) ?? {});
  const main = exit(run, started);
  return [{ name: "main", done: main }, ...started.flatMap((s) => s.tasks ?? [])];
}

/** What every part gets at once: the options read, the stop, the indices, the logger. */
function prepare(
  options: OperatorOptions,
  posting: PostingScope,
  undo: Array<() => Promise<void>>,
  handlerApi: PendingApi,
): Startup {
  const identity = options.identity;
  if (identity !== undefined && (typeof identity !== "string" || identity.trim() === "")) {
    throw new OperatorError(
      `kopf.operator(): identity must be a non-empty string (this operator's name among its ` +
        `peers, e.g. "operator-a"), not ${JSON.stringify(identity)}; or leave it out for ` +
        `$POD_ID or user@host/time/xyz.`,
    );
  }
  const registry = options.registry ?? getDefaultRegistry();
  const settings = options.settings ?? new OperatorSettings();
  const clusterwide = !!options.clusterwide || !options.namespaces?.length;
  applyPeeringOptions(settings, { ...options, clusterwide }); // before startup handlers (Kopf's)
  const memo = options.memo ?? new Memo();
  const sink = options.sink ?? lineSink(options.logging);
  const logger = new OperatorLogger(sink, "kopf.activities");
  const stop = new AbortController();
  const outer = options.signal;
  if (outer?.aborted) stop.abort();
  outer?.addEventListener("abort", () => stop.abort(), { once: true });
  const signal = stop.signal;
  // In-memory indexing: the watchers fill the indices; handlers wait until all are listed.
  const indexers = new OperatorIndexers({
    registry,
    settings,
    memo,
    sink,
    signal,
    clock: options.clock,
  });
  const indices: AnyObject = indexers.indices;
  const metrics = options.metrics ?? (options.liveness ? new OperatorMetrics() : undefined);
  const env = { logger, memo, settings, indices, metrics, clock: options.clock };
  const lifecycle = options.lifecycle ?? getDefaultLifecycle();

  if (registry.isEmpty) {
    logger.warning(
      "No handlers are registered: nothing to do. Check the handler files or modules given to kopf run.",
    );
  }
  return {
    options,
    parts: PARTS,
    registry,
    settings,
    memo,
    sink,
    logger,
    stop,
    signal,
    clusterwide,
    indexers,
    metrics,
    env,
    lifecycle,
    posting,
    handlerApi,
    undo,
  };
}

/**
 * The main task: ready once the watchers have listed, then waiting for the stop; then the exit,
 * the parts' steps stage by stage — within `process.ultimateExitingTimeout`, saying what it
 * waits for — and then the leaving and closing, always.
 */
async function exit(run: Startup, started: Started[]): Promise<void> {
  const { options, settings, signal, logger } = run;
  const op = need(run, "op");
  await run.ready;
  run.probing?.ready();
  options.onReady?.();
  // Stopped during the start-up (e.g. an early SIGINT): the abort event has already fired.
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
  logger.info("Stop-flag is raised. Operator is stopping.");
  let phase: string = EXIT_STAGES.handlers;
  // What the exit waits for, said at once when handlers are in progress, and again after a few
  // seconds (then every minute) while it lasts — never a silent wait of up to 10 minutes.
  const clock = options.clock ?? realClock;
  const began = clock.now();
  const cap = settings.process.ultimateExitingTimeout;
  const outer = options.signal;
  const signalled = outer?.reason instanceof SignalledExit ? outer.reason.signal : undefined;
  const notice = () => {
    const now = clock.now();
    const secs = (ms: number) => `${Math.round(ms / 1000)}s`;
    const attempts = [...op.running ?? []].map((a) =>
      `${a.what}${
        a.logger instanceof ObjectLogger ? ` of ${a.logger.prefix.trim()}` : ""
      } (running for ${secs(now - a.since)})`
    );
    const awaited = phase === EXIT_STAGES.handlers || phase === EXIT_STAGES.watchers
      ? attempts.length ? `the handlers in progress: ${attempts.join(", ")}` : phase
      : phase;
    const limit = cap === null
      ? "with no time limit (process.ultimateExitingTimeout is not set)"
      : `for at most ${secs(Math.max(0, began + cap * 1000 - now))} more ` +
        `(process.ultimateExitingTimeout ${cap}s), then exiting anyway`;
    const again = signalled
      ? ` A second Ctrl-C (${signalled === "SIGINT" ? "SIGINT" : `${signalled} or SIGINT`}) ` +
        `exits now, without waiting.`
      : "";
    const head = now - began >= 1000 ? `Still stopping after ${secs(now - began)}:` : "Stopping:";
    logger.info(`${head} waiting for ${awaited}, ${limit}.${again}`);
  };
  if (op.running?.size) notice();
  let cancelNotice = clock.timer(EXIT_NOTICE * 1000, function repeat() {
    notice();
    cancelNotice = clock.timer(60_000, repeat);
  });
  const stages = Object.entries(EXIT_STAGES) as Array<[keyof typeof EXIT_STAGES, string]>;
  const exiting = (async () => {
    for (const [stage, awaits] of stages) {
      phase = awaits;
      for (const s of started) await s.exit?.[stage]?.();
    }
  })();
  // Kopf's absolute cap on the exit: after it, the operator exits whatever still runs.
  const finished = await within(exiting, cap, clock);
  cancelNotice();
  if (!finished) {
    logger.warning(
      `The operator did not stop within process.ultimateExitingTimeout (${cap}s): ` +
        `exiting anyway, leaving ${phase} running.`,
    );
  }
  for (const stage of LEAVE_STAGES) {
    for (const s of started) await s.exit?.[stage]?.();
  }
}

/**
 * Runs an operator in this process until SIGINT or SIGTERM (a second signal forces the exit).
 *
 * @param options As for {@link operator}; a given `signal` is honoured too.
 * @returns When stopped.
 * @throws {OperatorError} For fatal errors.
 *
 * @example
 * ```ts ignore
 * import { run } from "@kopf/kopf";
 * await run({ clusterwide: true });
 * ```
 */
export async function run(options: OperatorOptions = {}): Promise<void> {
  const stop = new AbortController();
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  const listeners = signals.map((s) => [s, onProcessSignal(stop, s)] as const);
  for (const [s, fn] of listeners) Deno.addSignalListener(s, fn);
  options.signal?.addEventListener("abort", () => stop.abort(), { once: true });
  try {
    await operator({ ...options, signal: stop.signal });
  } finally {
    for (const [s, fn] of listeners) Deno.removeSignalListener(s, fn);
  }
  await sleep(0);
}

/**
 * The listener of a process signal for an operator's stop: the first signal stops it gracefully
 * (with a {@link SignalledExit} reason, so its notices tell of the second), the second exits
 * the process at once with code 130.
 *
 * @param stop The operator's stop.
 * @param signal The signal listened to.
 * @returns The listener.
 */
export function onProcessSignal(stop: AbortController, signal: Deno.Signal): () => void {
  return () => {
    if (stop.signal.aborted) Deno.exit(130);
    stop.abort(new SignalledExit(signal));
  };
}
