/**
 * The watcher's states and transitions (src/cogs/clients/watcher.ts), with no
 * sockets: inputs in, the next state, the events, the command and the notes
 * out. And its loop (watch_loop.ts) on scripted I/O and a fake clock: the
 * commands carried out, streams dropped, the backoff to the millisecond.
 */

import assert from "node:assert/strict";
import {
  startWatcher,
  stepWatcher,
  type WatcherConfig,
  type WatcherInput,
  type WatcherStep,
} from "../../src/cogs/clients/watcher.ts";
import {
  runWatcher,
  runWatcherBatches,
  type WatcherIo,
} from "../../src/cogs/clients/watch_loop.ts";
import {
  type RawWatchEvent,
  type WatchEvent,
  WatchingError,
} from "../../src/cogs/clients/watch_events.ts";
import { ApiError, GoneError } from "../../src/cogs/clients/errors.ts";
import type { RawBody } from "../../src/cogs/clients/types.ts";
import { FakeClock } from "../../src/cogs/aio/fake_clock.ts";

const config = (over: Partial<WatcherConfig> = {}): WatcherConfig => ({
  streamingLists: "auto",
  limit: 2,
  bookmarks: undefined,
  reconnectBackoff: 0.1,
  resource: "configmaps",
  where: "in default",
  ...over,
});

const cm = (name: string, rv = "1", data: Record<string, string> = {}): RawBody => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", resourceVersion: rv, managedFields: [{}] },
  data,
});
const ev = (type: RawWatchEvent["type"], object: RawBody): RawWatchEvent => ({
  type,
  object: object as RawWatchEvent["object"],
});
const bookmark = (rv: string, end = false): RawWatchEvent =>
  ev("BOOKMARK", {
    metadata: {
      resourceVersion: rv,
      ...(end ? { annotations: { "k8s.io/initial-events-end": "true" } } : {}),
    },
  });
const error = (code: number, reason = "Expired"): RawWatchEvent =>
  ev("ERROR", { kind: "Status", code, reason, message: "too old resource version" });
const events = (...list: RawWatchEvent[]): WatcherInput => ({ type: "events", events: list });
const page = (items: RawBody[], resourceVersion: string, next?: string): WatcherInput => ({
  type: "page",
  items,
  resourceVersion,
  continue: next,
});
const apiError = (code: number) =>
  new (code === 410 ? GoneError : ApiError)({ code, method: "GET", path: "/x" });

/** The events as short strings: `null:a`, `DELETED:a`, `LISTED:5/2`. */
const shown = (list: readonly WatchEvent[]) =>
  list.map((e) =>
    e.type === "LISTED"
      ? `LISTED:${e.resourceVersion}/${e.count}`
      : `${e.type}:${e.object.metadata?.name}`
  );

/** Steps through inputs, returning every step. */
function run(cfg: WatcherConfig, ...inputs: WatcherInput[]): WatcherStep[] {
  const steps = [startWatcher(cfg)];
  for (const input of inputs) steps.push(stepWatcher(cfg, steps.at(-1)!.state, input));
  return steps;
}

const STREAMED = {
  do: "watch",
  resourceVersion: undefined,
  sendInitialEvents: true,
  bookmarks: true,
};

Deno.test("startWatcher(): a streamed listing (auto, always); a LIST of the first page (never)", () => {
  for (const streamingLists of ["auto", "always"] as const) {
    const { state, command, events } = startWatcher(config({ streamingLists }));
    assert.equal(state.phase, "streaming");
    assert.deepEqual(command, STREAMED);
    assert.deepEqual(events, []);
  }
  const { state, command } = startWatcher(config({ streamingLists: "never", limit: 7 }));
  assert.equal(state.phase, "listing");
  assert.deepEqual(command, { do: "list", continue: undefined, limit: 7 });
});

Deno.test("listing: pages yield their objects as they come; the first page's resourceVersion is the watch's", () => {
  const cfg = config({ streamingLists: "never", bookmarks: false });
  const [, first, last] = run(
    cfg,
    page([cm("a"), cm("b")], "10", "token-1"),
    page([cm("c")], "11"),
  );
  assert.deepEqual(shown(first!.events), ["null:a", "null:b"]);
  assert.equal(first!.state.phase, "listing");
  assert.deepEqual(first!.command, { do: "list", continue: "token-1", limit: 2 });
  assert.deepEqual(shown(last!.events), ["null:c", "LISTED:10/3"]);
  assert.equal(last!.state.phase, "watching");
  assert.equal(last!.state.resourceVersion, "10");
  assert.deepEqual(last!.command, {
    do: "watch",
    resourceVersion: "10",
    sendInitialEvents: false,
    bookmarks: false,
  });
});

Deno.test("listing: a list without a resourceVersion watches from now", () => {
  const [, listed] = run(config({ streamingLists: "never" }), page([], ""));
  assert.deepEqual(shown(listed!.events), ["LISTED:/0"]);
  assert.equal(listed!.state.resourceVersion, undefined);
  assert.equal(listed!.command.do === "watch" && listed!.command.resourceVersion, undefined);
});

Deno.test("listing: an expired continue token starts over at once; what the void pages showed and the new ones do not is DELETED", () => {
  const steps = run(
    config({ streamingLists: "never" }),
    page([cm("a"), cm("b")], "10", "token-1"),
    { type: "failed", error: apiError(410) },
    page([cm("b")], "12"),
  );
  assert.equal(steps[2]!.state.phase, "listing");
  assert.deepEqual(steps[2]!.command, { do: "list", continue: undefined, limit: 2 });
  assert.deepEqual(steps[2]!.events, []);
  assert.deepEqual(shown(steps[3]!.events), ["null:b", "DELETED:a", "LISTED:12/1"]);
});

Deno.test("listing: a 410 for the first page and any other error are not retried here (the API client retried)", () => {
  for (const error of [apiError(410), apiError(500), new TypeError("boom")]) {
    const [, failed] = run(config({ streamingLists: "never" }), { type: "failed", error });
    assert.equal(failed!.state.phase, "failed");
    assert.deepEqual(failed!.command, { do: "fail", error });
  }
});

Deno.test("streaming: the state as type null up to the end bookmark, then LISTED and changes on the same stream", () => {
  const [, step] = run(
    config(),
    events(
      ev("ADDED", cm("a", "3")),
      ev("ADDED", cm("b", "4")),
      ev("MODIFIED", cm("a", "5")), // a change before the end: as it is
      ev("DELETED", cm("b", "6")),
      bookmark("7", true),
      ev("ADDED", cm("c", "8")), // after the end: a change
      bookmark("9"),
    ),
  );
  assert.deepEqual(shown(step!.events), [
    "null:a",
    "null:b",
    "MODIFIED:a",
    "DELETED:b",
    "LISTED:7/1",
    "ADDED:c",
  ]);
  assert.equal(step!.state.phase, "watching");
  assert.equal(step!.state.resourceVersion, "9");
  assert.deepEqual(step!.command, { do: "read" });
});

Deno.test("streaming (auto): a plain bookmark, an in-stream ERROR, an early end, 400 and 422 fall back to LIST at once, for good", () => {
  const cases: Array<[WatcherInput, string]> = [
    [events(ev("ADDED", cm("a")), bookmark("5")), "a bookmark before the end of the state"],
    [events(ev("ADDED", cm("a")), error(410)), "an error in the stream: 410 Expired: too old"],
    [events(ev("ADDED", cm("a")), error(500, "InternalError")), "an error in the stream: 500"],
    [{ type: "ended" }, "the stream ended before the end of the state"],
    [{ type: "failed", error: apiError(400) }, "(400 BadRequest)"],
    [{ type: "failed", error: apiError(422) }, "(422 Invalid)"],
  ];
  for (const [input, why] of cases) {
    const [, fell] = run(config(), input);
    assert.equal(fell!.state.phase, "listing", why);
    assert.equal(fell!.state.streamed, false, why);
    assert.deepEqual(fell!.command, { do: "list", continue: undefined, limit: 2 }, why);
    assert.equal(fell!.notes.length, 1, why);
    assert.equal(fell!.notes[0]!.level, "debug");
    assert.match(
      fell!.notes[0]!.message,
      /^The API server does not stream the state of configmaps in default \(.*\); listing it instead \(LIST, then WATCH\)\.$/,
    );
    assert.ok(fell!.notes[0]!.message.includes(why), `${fell!.notes[0]!.message} / ${why}`);
    // The objects streamed before the refusal came out; the rest of the chunk did not.
    if (input.type === "events") assert.deepEqual(shown(fell!.events), ["null:a"]);
  }
  // For good: a later 410 relists by LIST, not streamed.
  const steps = run(
    config(),
    { type: "ended" },
    page([cm("a")], "5"),
    events(error(410)),
    { type: "slept" },
  );
  assert.equal(steps[4]!.state.phase, "listing");
  assert.deepEqual(steps[4]!.command, { do: "list", continue: undefined, limit: 2 });
});

Deno.test("streaming (always): a plain bookmark is ignored; 410 and an early end relist streamed after the backoff; a refusal fails", () => {
  const cfg = config({ streamingLists: "always" });
  const [, ignored] = run(cfg, events(ev("ADDED", cm("a", "3")), bookmark("5")));
  assert.equal(ignored!.state.phase, "streaming");
  assert.equal(ignored!.state.resourceVersion, "3"); // not the ignored bookmark's
  assert.deepEqual(ignored!.command, { do: "read" });

  for (
    const input of [
      events(error(410)),
      { type: "ended" } as const,
      {
        type: "failed",
        error: apiError(410),
      } as const,
    ]
  ) {
    const [, waiting, again] = run(cfg, input, { type: "slept" });
    assert.equal(waiting!.state.phase, "relisting");
    assert.deepEqual(waiting!.command, { do: "sleep", seconds: 0.1 });
    assert.deepEqual(waiting!.notes, []); // a listing cut short, not a watch: nothing to say
    assert.equal(again!.state.phase, "streaming");
    assert.deepEqual(again!.command, STREAMED);
  }
  for (const input of [events(error(500)), { type: "failed", error: apiError(422) } as const]) {
    const [, failed] = run(cfg, input);
    assert.equal(failed!.state.phase, "failed");
    assert.equal(failed!.command.do, "fail");
  }
});

Deno.test("streaming (auto): errors that are no refusal fail (a 403, a broken line)", () => {
  const broken = new WatchingError("not JSON");
  for (const error of [apiError(403), broken]) {
    const [, failed] = run(config(), { type: "failed", error });
    assert.deepEqual(failed!.command, { do: "fail", error });
  }
});

/** A watcher that has streamed `a` and `b` and follows changes from rv 7. */
function watching(cfg = config()): WatcherStep {
  const [, step] = run(
    cfg,
    events(ev("ADDED", cm("a", "3", { big: "x" })), ev("ADDED", cm("b", "4")), bookmark("7", true)),
  );
  assert.equal(step!.state.phase, "watching");
  return step!;
}

Deno.test("watching: changes are yielded and move the resourceVersion; bookmarks move it silently; unknown types are noted and skipped", () => {
  const cfg = config();
  const step = stepWatcher(
    cfg,
    watching(cfg).state,
    events(
      ev("MODIFIED", cm("a", "8")),
      bookmark("9"),
      ev("BOOKMARK", { metadata: {} }), // a bookmark without a version changes nothing
      ev("SURPRISE" as RawWatchEvent["type"], cm("z", "99")),
      ev("DELETED", cm("b", "10")),
      ev("ADDED", { metadata: { name: "n" } }), // no resourceVersion: the last one stays
    ),
  );
  assert.deepEqual(shown(step.events), ["MODIFIED:a", "DELETED:b", "ADDED:n"]);
  assert.equal(step.state.resourceVersion, "10");
  assert.equal(step.state.phase, "watching");
  assert.deepEqual(step.command, { do: "read" });
  assert.deepEqual(step.notes, [{
    level: "warn",
    message: 'Ignoring an unsupported event type "SURPRISE" for configmaps.',
  }]);
  assert.equal(step.state.inventory.size, 2); // a, n
});

Deno.test("watching: a stream that ends waits the backoff, then resumes from the last resourceVersion", () => {
  const cfg = config({ bookmarks: true, reconnectBackoff: 2.5 });
  const ended = stepWatcher(cfg, watching(cfg).state, { type: "ended" });
  assert.equal(ended.state.phase, "backoff");
  assert.deepEqual(ended.command, { do: "sleep", seconds: 2.5 });
  assert.deepEqual(ended.events, []);
  const resumed = stepWatcher(cfg, ended.state, { type: "slept" });
  assert.equal(resumed.state.phase, "watching");
  assert.deepEqual(resumed.command, {
    do: "watch",
    resourceVersion: "7",
    sendInitialEvents: false,
    bookmarks: true,
  });
});

Deno.test("watching: a 410 mid-stream yields the events before it, notes the restart, waits, relists; missed deletions come as stubs", () => {
  const cfg = config();
  const gone = stepWatcher(
    cfg,
    watching(cfg).state,
    events(ev("ADDED", cm("c", "8")), error(410), ev("ADDED", cm("never", "9"))),
  );
  assert.deepEqual(shown(gone.events), ["ADDED:c"]);
  assert.equal(gone.state.phase, "relisting");
  assert.equal(gone.state.resourceVersion, "8");
  assert.deepEqual(gone.command, { do: "sleep", seconds: 0.1 });
  assert.deepEqual(gone.notes, [{
    level: "debug",
    message: "Restarting the watch-stream for configmaps in default (410 Gone).",
  }]);
  const again = stepWatcher(cfg, gone.state, { type: "slept" });
  assert.equal(again.state.phase, "streaming");
  assert.deepEqual(again.command, STREAMED);
  // The new state: b gone, c deleted in the stream, d new; a missed deletion of a.
  const relisted = stepWatcher(
    cfg,
    again.state,
    events(ev("ADDED", cm("b", "11")), ev("DELETED", cm("c", "12")), bookmark("20", true)),
  );
  assert.deepEqual(shown(relisted.events), ["null:b", "DELETED:c", "DELETED:a", "LISTED:20/1"]);
  const stub = relisted.events[2]!;
  assert.ok(stub.type === "DELETED");
  assert.deepEqual(stub.object, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "a", namespace: "default", resourceVersion: "3" },
  });
  assert.equal(relisted.state.resourceVersion, "20");
});

Deno.test("watching: an HTTP 410 when resuming relists (noted); a non-410 in-stream ERROR and other failures are not retried", () => {
  const cfg = config();
  const gone = stepWatcher(cfg, watching(cfg).state, { type: "failed", error: apiError(410) });
  assert.equal(gone.state.phase, "relisting");
  assert.equal(gone.notes.length, 1);
  assert.deepEqual(gone.command, { do: "sleep", seconds: 0.1 });

  const bad = stepWatcher(
    cfg,
    watching(cfg).state,
    events(ev("ADDED", cm("c", "8")), error(500, "InternalError")),
  );
  assert.deepEqual(shown(bad.events), ["ADDED:c"]); // yielded before the failure
  assert.equal(bad.state.phase, "failed");
  assert.ok(bad.command.do === "fail" && bad.command.error instanceof WatchingError);
  assert.equal(
    (bad.command.error as Error).message,
    "Error in the watch-stream for configmaps in default: 500 InternalError: too old resource version",
  );
  // A refusal is a fallback only for a streamed listing; while watching, it fails.
  for (const error of [apiError(422), apiError(500), new WatchingError("not JSON")]) {
    const failed = stepWatcher(cfg, watching(cfg).state, { type: "failed", error });
    assert.deepEqual(failed.command, { do: "fail", error });
  }
});

Deno.test("stepWatcher() refuses inputs its state cannot take (a bug of the loop, not of the server)", () => {
  const cfg = config();
  const cases: Array<[WatcherStep, WatcherInput]> = [
    [watching(cfg), page([], "1")],
    [watching(cfg), { type: "slept" }],
    [startWatcher(config({ streamingLists: "never" })), events()],
    [startWatcher(config({ streamingLists: "never" })), { type: "ended" }],
    [stepWatcher(cfg, watching(cfg).state, { type: "ended" }), events()],
    [stepWatcher(cfg, watching(cfg).state, events(error(500))), { type: "slept" }],
  ];
  for (const [step, input] of cases) {
    assert.throws(() => stepWatcher(cfg, step.state, input), TypeError);
  }
});

// ----- The loop, on scripted I/O and a fake clock.

/** A scripted stream: its batches, then it ends (or fails, or stays open until dropped). */
interface Script {
  batches: RawWatchEvent[][];
  then?: "end" | "hang" | Error;
}

function scripted(
  clock: FakeClock,
  scripts: Script[],
  pages: RawBody[][] = [],
  stopAt?: string,
) {
  const stop = new AbortController();
  const calls: string[] = [];
  const dropped: string[] = [];
  const logs: string[] = [];
  const io: WatcherIo = {
    list(command) {
      calls.push(`list@${clock.now()}:${command.continue ?? ""}`);
      const items = pages.shift();
      if (!items) return Promise.reject(new ApiError({ code: 500, method: "GET", path: "/x" }));
      return Promise.resolve({ items, resourceVersion: "50", continue: undefined });
    },
    watch(command) {
      const name = `watch@${clock.now()}:${command.resourceVersion ?? ""}:${
        command.sendInitialEvents ? "state" : "changes"
      }`;
      calls.push(name);
      const script = scripts.shift() ?? { batches: [], then: "hang" };
      return (async function* () {
        try {
          for (const batch of script.batches) yield batch;
          if (script.then instanceof Error) throw script.then;
          if (script.then === "hang") {
            await new Promise((resolve) => stop.signal.addEventListener("abort", resolve));
          }
        } finally {
          dropped.push(name);
        }
      })();
    },
    sleep: (seconds) => clock.sleep(seconds, stop.signal),
    log: (level, message) => logs.push(`${level}: ${message}`),
  };
  const got: string[] = [];
  let failure: unknown;
  const done = (async () => {
    try {
      for await (const event of runWatcher(config(), io, stop.signal)) {
        got.push(...shown([event]));
        if (got.at(-1) === stopAt) stop.abort();
      }
    } catch (error) {
      failure = error;
    }
  })();
  return {
    calls,
    dropped,
    logs,
    got,
    failure: () => failure,
    async stop() {
      stop.abort();
      await done;
    },
    done,
  };
}

Deno.test("runWatcher(): a stream that ends is reopened from its resourceVersion after exactly the backoff (fake clock)", async () => {
  const clock = new FakeClock();
  const w = scripted(clock, [
    { batches: [[ev("ADDED", cm("a", "3")), bookmark("7", true)], [bookmark("9")]], then: "end" },
    { batches: [[ev("MODIFIED", cm("a", "10"))]], then: "end" },
  ]);
  await clock.advance(0);
  assert.deepEqual(w.calls, ["watch@0::state"]);
  assert.deepEqual(w.got, ["null:a", "LISTED:7/1"]);
  await clock.advance(0.099);
  assert.deepEqual(w.calls, ["watch@0::state"]);
  await clock.advance(0.001);
  assert.deepEqual(w.calls, ["watch@0::state", "watch@100:9:changes"]);
  assert.deepEqual(w.got, ["null:a", "LISTED:7/1", "MODIFIED:a"]);
  await clock.advance(0.1);
  assert.deepEqual(w.calls.at(-1), "watch@200:10:changes");
  await w.stop();
  assert.equal(w.failure(), undefined);
  assert.deepEqual(w.logs, [
    "debug: Starting the watch-stream for configmaps in default.",
    "debug: Stopping the watch-stream for configmaps in default.",
  ]);
});

Deno.test("runWatcher(): a 410 mid-stream drops the stream, waits the backoff, streams the state anew", async () => {
  const clock = new FakeClock();
  const w = scripted(clock, [
    {
      batches: [[ev("ADDED", cm("a", "3")), bookmark("7", true)], [error(410)]],
      then: "hang", // the server would keep it open: the watcher must drop it
    },
    { batches: [[bookmark("20", true)]], then: "hang" },
  ]);
  await clock.advance(0);
  assert.deepEqual(w.dropped, ["watch@0::state"]);
  assert.deepEqual(w.calls, ["watch@0::state"]);
  await clock.advance(0.1);
  assert.deepEqual(w.calls, ["watch@0::state", "watch@100::state"]);
  assert.deepEqual(w.got, ["null:a", "LISTED:7/1", "DELETED:a", "LISTED:20/0"]);
  assert.ok(
    w.logs.includes("debug: Restarting the watch-stream for configmaps in default (410 Gone)."),
  );
  await w.stop();
  assert.deepEqual(w.dropped, ["watch@0::state", "watch@100::state"]);
});

Deno.test("runWatcher(): a refusal falls back to LIST at once (no backoff), then watches from the list's version", async () => {
  const clock = new FakeClock();
  const w = scripted(
    clock,
    [{ batches: [], then: new ApiError({ code: 422, method: "GET", path: "/x" }) }],
    [[cm("a", "3")]],
  );
  await clock.advance(0);
  assert.deepEqual(w.calls, ["watch@0::state", "list@0:", "watch@0:50:changes"]);
  assert.deepEqual(w.got, ["null:a", "LISTED:50/1"]);
  await w.stop();
});

Deno.test("runWatcher(): a failure is thrown after the events before it; an abort ends quietly, also in a backoff", async () => {
  const clock = new FakeClock();
  const w = scripted(clock, [
    { batches: [[ev("ADDED", cm("a", "3")), bookmark("7", true), error(500)]], then: "hang" },
  ]);
  await w.done;
  assert.deepEqual(w.got, ["null:a", "LISTED:7/1"]);
  assert.ok(w.failure() instanceof WatchingError);
  assert.deepEqual(w.dropped, ["watch@0::state"]);

  const quiet = scripted(clock, [{ batches: [[bookmark("7", true)]], then: "end" }]);
  await clock.advance(0.05); // in the backoff now
  assert.equal(clock.pending, 1);
  await quiet.stop();
  assert.equal(quiet.failure(), undefined);
  assert.equal(clock.pending, 0);

  // Stopped by the consumer on the event before a failure in the same chunk: quietly.
  const consumer = scripted(
    clock,
    [
      { batches: [[bookmark("7", true), ev("ADDED", cm("a", "8")), error(500)]], then: "hang" },
    ],
    [],
    "ADDED:a",
  );
  await consumer.done;
  assert.deepEqual(consumer.got, ["LISTED:7/0", "ADDED:a"]);
  assert.equal(consumer.failure(), undefined);
});

Deno.test("runWatcherBatches(): a relist request's `listed` is called once a listing started after it is over and its events taken — not at the end of a listing already in progress", async () => {
  const stop = new AbortController();
  const log: string[] = [];
  let request: ((listed?: () => void) => void) | undefined;
  let lists = 0;
  let firstPage: (() => void) | undefined;
  const io: WatcherIo = {
    async list() {
      const n = ++lists;
      log.push(`list ${n}`);
      // The first listing is held: the request comes while it runs.
      if (n === 1) await new Promise<void>((resolve) => (firstPage = resolve));
      return { items: [cm(`o${n}`)], resourceVersion: String(n), continue: undefined };
    },
    watch: (_command, cut) =>
      // deno-lint-ignore require-yield -- a watch that yields nothing until it is cut
      (async function* () {
        log.push("watch");
        await new Promise((resolve) => {
          stop.signal.addEventListener("abort", resolve);
          cut?.addEventListener("abort", resolve);
        });
        log.push(`cut: ${cut?.aborted}`);
      })(),
    sleep: () => Promise.resolve(),
    log: () => {},
    onRelist: (r) => {
      request = r;
      return () => (request = undefined);
    },
  };
  const done = (async () => {
    const watcher = runWatcherBatches(config({ streamingLists: "never" }), io, stop.signal);
    for await (const batch of watcher) {
      for (const event of batch) {
        log.push(
          event.type === "LISTED" ? "LISTED" : `${event.type}:${event.object.metadata?.name}`,
        );
      }
    }
  })();
  while (!firstPage) await new Promise((resolve) => setTimeout(resolve, 1));
  request!(() => log.push("listed 1")); // during the first listing
  firstPage();
  while (!log.includes("listed 1")) await new Promise((resolve) => setTimeout(resolve, 1));
  while (!log.includes("watch")) await new Promise((resolve) => setTimeout(resolve, 1));
  request!(() => { // while watching: the stream is cut
    log.push("listed 2");
    stop.abort();
  });
  await done;
  assert.deepEqual(log, [
    "list 1",
    "null:o1",
    "LISTED", // the listing in progress: not the request's
    "list 2",
    "null:o2",
    "DELETED:o1",
    "LISTED",
    "listed 1", // after its listing's events were taken
    "watch",
    "cut: true",
    "list 3",
    "null:o3",
    "DELETED:o2",
    "LISTED",
    "listed 2",
  ]);
  assert.equal(request, undefined, "unsubscribed at the end");
});
