/**
 * The watcher's loop: carries out the commands of its steps (./watcher.ts)
 * through a {@link WatcherIo} — list a page, open a watch, read on, sleep —
 * and feeds what comes back in as the next input. It decides nothing itself:
 * every decision is a transition of `stepWatcher`. The I/O is given, so the
 * loop runs on scripted pages and streams and a fake clock as well as on
 * HTTP (`infiniteWatch` in ./watching.ts gives it the HTTP).
 *
 * @module
 */

import {
  startWatcher,
  stepWatcher,
  type WatcherCommand,
  type WatcherConfig,
  type WatcherInput,
  type WatcherStep,
} from "./watcher.ts";
import type { RawWatchEvent, WatchEvent } from "./watch_events.ts";
import type { RawBody } from "./types.ts";

/** The I/O of {@link runWatcher}: the requests, the sleeps, the log. */
export interface WatcherIo {
  /**
   * Gets a LIST page.
   *
   * @param command The page to get.
   * @returns The page's objects, resourceVersion and next token.
   */
  list(command: WatcherCommand & { do: "list" }): Promise<{
    items: readonly RawBody[];
    resourceVersion: string;
    continue: string | undefined;
  }>;
  /**
   * Opens a watch: its events in the batches they came in (a batch is valid until the next is
   * asked for). Ends when the stream ends; throws when it cannot be opened or read on.
   *
   * @param command The watch to open.
   * @param cut Ends the stream early (quietly), when the state is to be read anew.
   * @returns The batches.
   */
  watch(
    command: WatcherCommand & { do: "watch" },
    cut?: AbortSignal,
  ): AsyncIterable<readonly RawWatchEvent[]>;
  /**
   * Sleeps (the backoff).
   *
   * @param seconds How long.
   * @returns When the time passed or the watcher is stopped.
   */
  sleep(seconds: number): Promise<unknown>;
  /**
   * Logs a note of the watcher.
   *
   * @param level The level.
   * @param message The message.
   */
  log(level: "debug" | "warn", message: string): void;
  /**
   * Subscribes to requests to read the state anew (see `InfiniteWatchOptions.onRelist`).
   *
   * @param request Called for each request (with what to call once it is carried out).
   * @returns Unsubscribes.
   */
  onRelist?: ((request: (listed?: () => void) => void) => () => void) | undefined;
}

/**
 * Runs a watcher: its events, until `signal` aborts (quietly) or a step fails (thrown).
 * (One event per generator step; {@link runWatcherBatches} gives them a step's batch at a time.)
 *
 * @param config The watcher's configuration.
 * @param io The requests, sleeps and log.
 * @param signal Stops the watcher; the I/O should stop on it too.
 * @returns The events.
 * @throws The error of a step that fails (e.g. a `WatchingError`, an `ApiError`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runWatcher } from "./watch_loop.ts";
 * const config = { streamingLists: "never", limit: 500, bookmarks: undefined, reconnectBackoff: 0, resource: "pods", where: "cluster-wide" } as const;
 * const stop = new AbortController();
 * const seen: unknown[] = [];
 * const io = {
 *   list: () => Promise.resolve({ items: [{ metadata: { name: "a" } }], resourceVersion: "1", continue: undefined }),
 *   watch: async function* () { stop.abort(); },
 *   sleep: () => Promise.resolve(),
 *   log: () => {},
 * };
 * for await (const event of runWatcher(config, io, stop.signal)) seen.push(event.type);
 * assert.deepEqual(seen, [null, "LISTED"]);
 * ```
 */
export async function* runWatcher(
  config: WatcherConfig,
  io: WatcherIo,
  signal?: AbortSignal,
): AsyncGenerator<WatchEvent, void, undefined> {
  for await (const events of runWatcherBatches(config, io, signal)) {
    for (let i = 0; i < events.length; i++) yield events[i]!;
  }
}

/**
 * Runs a watcher as {@link runWatcher} does, but yields the events of each step at once (a
 * page's objects, a chunk's events; never an empty batch): one generator step per batch, not
 * per event — what a generator step costs (its promises, its resumptions) is paid once per
 * chunk the connection read, which in a burst holds many events. The consumer takes the
 * whole batch before asking for the next (the loop is suspended meanwhile, as per event).
 *
 * @param config The watcher's configuration.
 * @param io The requests, sleeps and log.
 * @param signal Stops the watcher; the I/O should stop on it too.
 * @returns The batches of events, in order.
 * @throws The error of a step that fails (e.g. a `WatchingError`, an `ApiError`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runWatcherBatches } from "./watch_loop.ts";
 * const config = { streamingLists: "never", limit: 500, bookmarks: undefined, reconnectBackoff: 0, resource: "pods", where: "cluster-wide" } as const;
 * const stop = new AbortController();
 * const seen: unknown[] = [];
 * const io = {
 *   list: () => Promise.resolve({ items: [{ metadata: { name: "a" } }, { metadata: { name: "b" } }], resourceVersion: "1", continue: undefined }),
 *   watch: async function* () { stop.abort(); },
 *   sleep: () => Promise.resolve(),
 *   log: () => {},
 * };
 * for await (const events of runWatcherBatches(config, io, stop.signal)) {
 *   seen.push(events.map((event) => event.type));
 * }
 * assert.deepEqual(seen, [[null, null, "LISTED"]]);
 * ```
 */
export async function* runWatcherBatches(
  config: WatcherConfig,
  io: WatcherIo,
  signal?: AbortSignal,
): AsyncGenerator<readonly WatchEvent[], void, undefined> {
  const subject = `${config.resource} ${config.where}`;
  let stream: AsyncIterator<readonly RawWatchEvent[]> | undefined;
  const drop = async () => {
    const open = stream;
    stream = undefined;
    await open?.return?.();
  };
  // A request to read the state anew cuts the open stream; it is carried out at the next step
  // that can take it (a listing in progress is finished first).
  let relist = false;
  let cut: AbortController | undefined;
  // What to call once the listing of a request is over (its events taken): the requests not
  // carried out yet, and those whose listing runs.
  let requested: (() => void)[] = [];
  let listing: (() => void)[] = [];
  const unsubscribe = io.onRelist?.((listed) => {
    relist = true;
    if (listed) requested.push(listed);
    cut?.abort();
  });
  io.log("debug", `Starting the watch-stream for ${subject}.`);
  try {
    let step: WatcherStep = startWatcher(config);
    while (!signal?.aborted) {
      for (const note of step.notes) io.log(note.level, note.message);
      if (step.events.length) {
        yield step.events;
        if (listing.length && step.events.some((event) => event.type === "LISTED")) {
          const done = listing;
          listing = [];
          for (const listed of done) listed();
        }
      }
      if (signal?.aborted) return; // stopped while its events were consumed: quietly
      if (relist && RELISTABLE.has(step.state.phase)) {
        relist = false;
        listing = listing.concat(requested);
        requested = [];
        await drop();
        step = stepWatcher(config, step.state, { type: "relist" });
        continue;
      }
      const command = step.command;
      let input: WatcherInput;
      if (command.do === "read" || command.do === "watch") {
        if (command.do === "watch") {
          await drop();
          cut = unsubscribe && new AbortController();
          stream = io.watch(command, cut?.signal)[Symbol.asyncIterator]();
        }
        try {
          const next = await stream!.next();
          input = next.done ? { type: "ended" } : { type: "events", events: next.value };
        } catch (error) {
          stream = undefined;
          input = { type: "failed", error };
        }
      } else {
        await drop();
        if (command.do === "fail") throw command.error;
        if (command.do === "sleep") {
          await io.sleep(command.seconds);
          input = { type: "slept" };
        } else {
          try {
            const page = await io.list(command);
            input = { type: "page", ...page };
          } catch (error) {
            input = { type: "failed", error };
          }
        }
      }
      step = stepWatcher(config, step.state, input);
    }
  } finally {
    unsubscribe?.();
    await drop();
    io.log("debug", `Stopping the watch-stream for ${subject}.`);
  }
}

/** The phases a request to relist is carried out in (a listing finishes first). */
const RELISTABLE: ReadonlySet<string> = new Set(["streaming", "watching", "backoff", "relisting"]);
