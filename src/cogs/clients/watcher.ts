/**
 * The watcher's states and its one step: what `infiniteWatch` (./watching.ts)
 * does, as values — with no HTTP, no timers and no logger, so that every
 * transition is tested by feeding inputs and reading outputs (as kube-rs'
 * `watcher.rs` keeps its `enum State` and `step()`).
 *
 * The states ({@link WatcherState}, by `phase`):
 *
 * - `listing` — a paged LIST, page by page (`continue` is the next page's token);
 * - `streaming` — a watch with `sendInitialEvents=true` (KEP-3157), the state
 *   coming as ADDED events until the bookmark annotated
 *   `k8s.io/initial-events-end`;
 * - `watching` — a watch from `resourceVersion`, following the changes;
 * - `backoff` — a stream ended (closed, timed out, silent, broken): wait, then
 *   watch again from `resourceVersion`;
 * - `relisting` — 410 Gone (an expired resourceVersion): wait, then read the
 *   state again (streamed or listed);
 * - `failed` — an error the watcher does not retry: the caller gets it.
 *
 * The inputs ({@link WatcherInput}): a LIST `page`, the `events` of a chunk
 * of the stream (bookmarks and in-stream ERRORs among them), the stream
 * `ended`, a request `failed`, the backoff `slept`. Each {@link stepWatcher}
 * gives the next state, the events to yield, the command to carry out next
 * (list a page, open a watch, read on, sleep, fail) and notes to log.
 * {@link runWatcher} is the loop that carries out the commands through an
 * injected {@link WatcherIo}; `infiniteWatch` gives it the HTTP.
 *
 * The one mutable part is the {@link Inventory} (the stubs of the objects
 * seen, to report deletions missed between streams): a state is handed to
 * `stepWatcher` as a value moved into it, and the inventory it carries is
 * written in place — a listing is never copied.
 *
 * @module
 */

import { ApiError, GoneError } from "./errors.ts";
import { Inventory, type RawWatchEvent, type WatchEvent, WatchingError } from "./watch_events.ts";

import type {
  Common,
  WatcherCommand,
  WatcherConfig,
  WatcherInput,
  WatcherNote,
  WatcherState,
  WatcherStep,
} from "./watcher_types.ts";
export type * from "./watcher_types.ts";

/** The annotation of the bookmark that ends the state of a streamed listing (KEP-3157). */
const INITIAL_EVENTS_END = "k8s.io/initial-events-end";

/** Answers of servers that do not stream listings: 400 (an unknown parameter), 422 (refused). */
const REFUSALS = new Set([400, 422]);

const READ: WatcherCommand = { do: "read" };

/**
 * The watcher's first step: a streamed listing (unless `streamingLists` is "never"), or a LIST.
 *
 * @param config The watcher's configuration.
 * @returns The first state and its command.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startWatcher } from "./watcher.ts";
 * const config = { streamingLists: "never", limit: 500, bookmarks: undefined, reconnectBackoff: 0.1, resource: "pods", where: "cluster-wide" } as const;
 * const { state, command } = startWatcher(config);
 * assert.equal(state.phase, "listing");
 * assert.deepEqual(command, { do: "list", continue: undefined, limit: 500 });
 * ```
 */
export function startWatcher(config: WatcherConfig): WatcherStep {
  const common = {
    resourceVersion: undefined,
    streamed: config.streamingLists !== "never",
    inventory: new Inventory(),
  };
  return readState(config, common, [], []);
}

/**
 * One transition: the state and an input give the next state, the events to yield, the next
 * command and the notes to log (see the module doc). The state is consumed: its inventory is
 * written in place.
 *
 * @param config The watcher's configuration.
 * @param state The current state (not to be used again).
 * @param input What happened.
 * @returns The next step.
 * @throws {TypeError} For an input the state cannot take (e.g. a page while watching): a bug of the loop.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startWatcher, stepWatcher } from "./watcher.ts";
 * const config = { streamingLists: "never", limit: 500, bookmarks: undefined, reconnectBackoff: 0.1, resource: "pods", where: "cluster-wide" } as const;
 * const listed = stepWatcher(config, startWatcher(config).state, {
 *   type: "page", items: [{ metadata: { name: "a" } }], resourceVersion: "5", continue: undefined,
 * });
 * assert.deepEqual(listed.events.map((e) => e.type), [null, "LISTED"]);
 * assert.deepEqual(listed.command, { do: "watch", resourceVersion: "5", sendInitialEvents: false, bookmarks: undefined });
 * const gone = stepWatcher(config, listed.state, { type: "events", events: [{ type: "ERROR", object: { code: 410 } }] });
 * assert.equal(gone.state.phase, "relisting");
 * assert.deepEqual(gone.command, { do: "sleep", seconds: 0.1 });
 * ```
 */
export function stepWatcher(
  config: WatcherConfig,
  state: WatcherState,
  input: WatcherInput,
): WatcherStep {
  switch (input.type) {
    case "page":
      if (state.phase !== "listing") break;
      return onPage(config, state, input);
    case "events":
      if (state.phase !== "streaming" && state.phase !== "watching") break;
      return onEvents(config, state, input.events);
    case "ended":
      if (state.phase === "watching") return wait("backoff", config, state, [], []);
      if (state.phase !== "streaming") break;
      if (config.streamingLists === "auto") {
        return fallBack(config, state, "the stream ended before the end of the state", [], []);
      }
      return wait("relisting", config, state, [], []);
    case "failed":
      if (state.phase === "listing") return onListingFailure(config, state, input.error);
      if (state.phase !== "streaming" && state.phase !== "watching") break;
      return onStreamFailure(config, state, input.error);
    case "relist":
      if (state.phase === "listing" || state.phase === "failed") break;
      return readState(config, common(state), [], [{
        level: "debug",
        message: `Reading the state of ${config.resource} ${config.where} anew (asked for).`,
      }]);
    case "slept":
      if (state.phase === "backoff") {
        const next: WatcherState = { ...common(state), phase: "watching" };
        return { state: next, events: [], command: watchFrom(config, next), notes: [] };
      }
      if (state.phase !== "relisting") break;
      return readState(config, common(state), [], []);
  }
  throw new TypeError(`The watcher cannot take a ${input.type} input in its ${state.phase} state`);
}

function common(state: WatcherState): Common {
  const { resourceVersion, streamed, inventory } = state;
  return { resourceVersion, streamed, inventory };
}

/** Reads the state (again): streamed, or the first LIST page; the inventory begins a listing. */
function readState(
  config: WatcherConfig,
  common: Common,
  events: WatchEvent[],
  notes: WatcherNote[],
): WatcherStep {
  common.inventory.begin();
  if (common.streamed) {
    const command = {
      do: "watch",
      resourceVersion: undefined,
      sendInitialEvents: true,
      bookmarks: true,
    } as const;
    return { state: { ...common, phase: "streaming" }, events, command, notes };
  }
  return {
    state: { ...common, phase: "listing", continue: undefined, listVersion: undefined },
    events,
    command: { do: "list", continue: undefined, limit: config.limit },
    notes,
  };
}

function watchFrom(config: WatcherConfig, state: WatcherState): WatcherCommand {
  return {
    do: "watch",
    resourceVersion: state.resourceVersion,
    sendInitialEvents: false,
    bookmarks: config.bookmarks,
  };
}

/** Waits (`backoff`: then resumes; `relisting`: then reads the state again). */
function wait(
  phase: "backoff" | "relisting",
  config: WatcherConfig,
  state: WatcherState,
  events: WatchEvent[],
  notes: WatcherNote[],
): WatcherStep {
  return {
    state: { ...common(state), phase },
    events,
    command: { do: "sleep", seconds: config.reconnectBackoff },
    notes,
  };
}

/** A 410 Gone: wait, then read the state again (noted when it cut a watch, not a listing). */
function gone(
  config: WatcherConfig,
  state: WatcherState,
  events: WatchEvent[],
  notes: WatcherNote[],
): WatcherStep {
  if (state.phase === "watching") {
    const message =
      `Restarting the watch-stream for ${config.resource} ${config.where} (410 Gone).`;
    notes.push({ level: "debug", message });
  }
  return wait("relisting", config, state, events, notes);
}

/** The server does not stream the state: list it, at once and for good. */
function fallBack(
  config: WatcherConfig,
  state: WatcherState,
  why: string,
  events: WatchEvent[],
  notes: WatcherNote[],
): WatcherStep {
  notes.push({
    level: "debug",
    message: `The API server does not stream the state of ${config.resource} ${config.where} ` +
      `(${why}); listing it instead (LIST, then WATCH).`,
  });
  return readState(config, { ...common(state), streamed: false }, events, notes);
}

function fail(state: WatcherState, error: unknown, events: WatchEvent[]): WatcherStep {
  return {
    state: { ...common(state), phase: "failed", error },
    events,
    command: { do: "fail", error },
    notes: [],
  };
}

function onPage(
  config: WatcherConfig,
  state: WatcherState & { phase: "listing" },
  page: WatcherInput & { type: "page" },
): WatcherStep {
  const { inventory } = state;
  const listVersion = state.listVersion ?? page.resourceVersion; // the first page's
  const events: WatchEvent[] = [];
  for (const object of page.items) {
    inventory.seen(object);
    events.push({ type: null, object });
  }
  if (page.continue !== undefined) {
    return {
      state: { ...state, continue: page.continue, listVersion },
      events,
      command: { do: "list", continue: page.continue, limit: config.limit },
      notes: [],
    };
  }
  inventory.end(listVersion, events);
  const next: WatcherState = {
    ...common(state),
    phase: "watching",
    resourceVersion: listVersion || undefined,
  };
  return { state: next, events, command: watchFrom(config, next), notes: [] };
}

function onListingFailure(
  config: WatcherConfig,
  state: WatcherState & { phase: "listing" },
  error: unknown,
): WatcherStep {
  // An expired `continue` token: the listing starts over, at once (its pages so far are void).
  if (error instanceof GoneError && state.continue !== undefined) {
    return readState(config, common(state), [], []);
  }
  return fail(state, error, []);
}

function onStreamFailure(
  config: WatcherConfig,
  state: WatcherState & { phase: "streaming" | "watching" },
  error: unknown,
): WatcherStep {
  if (
    state.phase === "streaming" && config.streamingLists === "auto" &&
    error instanceof ApiError && REFUSALS.has(error.code)
  ) {
    return fallBack(config, state, `${error.code} ${error.reason}`, [], []);
  }
  if (error instanceof GoneError) return gone(config, state, [], []);
  return fail(state, error, []);
}

function onEvents(
  config: WatcherConfig,
  state: WatcherState & { phase: "streaming" | "watching" },
  batch: readonly RawWatchEvent[],
): WatcherStep {
  const { inventory } = state;
  const auto = config.streamingLists === "auto";
  let phase = state.phase;
  let resourceVersion = state.resourceVersion;
  const events: WatchEvent[] = [];
  const notes: WatcherNote[] = [];
  const now = (): WatcherState => ({ ...common(state), phase, resourceVersion });
  for (let i = 0; i < batch.length; i++) {
    const { type, object } = batch[i]!;
    if (type === "ERROR") {
      const what = `${object.code ?? "?"} ${object.reason ?? ""}: ${
        object.message ?? JSON.stringify(object)
      }`;
      if (phase === "streaming" && auto) {
        return fallBack(config, now(), `an error in the stream: ${what}`, events, notes);
      }
      if (object.code === 410) return gone(config, now(), events, notes);
      const message = `Error in the watch-stream for ${config.resource} ${config.where}: ${what}`;
      return fail(now(), new WatchingError(message), events);
    }
    const version = object.metadata?.resourceVersion;
    // An event left undecoded (another replica's object): only where the watch resumes.
    if (type === "SKIPPED") {
      if (version) resourceVersion = version;
      continue;
    }
    if (type === "BOOKMARK") {
      if (phase === "streaming") {
        const annotations = object.metadata?.annotations as Record<string, string> | undefined;
        if (annotations?.[INITIAL_EVENTS_END] !== "true") {
          if (auto) {
            return fallBack(config, now(), "a bookmark before the end of the state", events, notes);
          }
          continue; // "always": a bookmark within the state is ignored
        }
        phase = "watching";
        if (version) resourceVersion = version;
        inventory.end(version ?? "", events);
        continue;
      }
      if (version) resourceVersion = version;
      continue;
    }
    if (type !== "ADDED" && type !== "MODIFIED" && type !== "DELETED") {
      notes.push({
        level: "warn",
        message: `Ignoring an unsupported event type ${
          JSON.stringify(type)
        } for ${config.resource}.`,
      });
      continue;
    }
    if (version) resourceVersion = version;
    if (type === "DELETED") inventory.deleted(object);
    else inventory.seen(object);
    // The state's objects are a listing's (type null), as when listed.
    events.push({ type: phase === "streaming" && type === "ADDED" ? null : type, object });
  }
  return { state: now(), events, command: READ, notes };
}
