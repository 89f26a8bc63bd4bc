import assert from "node:assert/strict";
import { iterJsonLineBatches, iterJsonLines } from "../../src/cogs/clients/jsonlines.ts";
import {
  infiniteWatch,
  type RawWatchEvent,
  type WatchEvent,
  WatchingError,
  watchObjects,
} from "../../src/cogs/clients/watching.ts";
import { listObjects } from "../../src/cogs/clients/fetching.ts";
import { createObject } from "../../src/cogs/clients/creating.ts";
import { deleteObject } from "../../src/cogs/clients/deleting.ts";
import { patchObject } from "../../src/cogs/clients/patching.ts";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import type { RawBody } from "../../src/cogs/clients/types.ts";
import { KubeClient } from "../../src/cogs/clients/kube_client.ts";
import { CONFIGMAPS, eventually, setup } from "./_setup.ts";

Deno.test("iterJsonLines() survives any chunk boundary, multi-byte characters included", async () => {
  const text = '{"a":"ü€𝄞"}\r\n\n{"b":[1,2]}\n{"c":"' + "x".repeat(5000) + '"}';
  const bytes = new TextEncoder().encode(text);
  const expected = [{ a: "ü€𝄞" }, { b: [1, 2] }, { c: "x".repeat(5000) }];
  for (const size of [1, 2, 3, 7, 64, bytes.length]) {
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.slice(i, i + size));
    const values = [];
    for await (const value of iterJsonLines(chunks)) values.push(value);
    assert.deepEqual(values, expected, `chunk size ${size}`);
  }
  await assert.rejects(async () => {
    for await (const _ of iterJsonLines([new TextEncoder().encode("{oops}\n")])) { /* consume */ }
  }, SyntaxError);
});

Deno.test("iterJsonLineBatches() yields a batch per chunk; a bad line throws after the values before it", async () => {
  const enc = (t: string) => new TextEncoder().encode(t);
  const batches: unknown[][] = [];
  for await (const b of iterJsonLineBatches([enc('{"a":1}\n{"b"'), enc(':2}\n{"c":3}\n\n')])) {
    batches.push(b);
  }
  assert.deepEqual(batches, [[{ a: 1 }], [{ b: 2 }, { c: 3 }]]);
  const seen: unknown[][] = [];
  await assert.rejects(async () => {
    for await (const b of iterJsonLineBatches([enc('{"a":1}\n{oops}\n{"c":3}\n')])) seen.push(b);
  }, SyntaxError);
  assert.deepEqual(seen, [[{ a: 1 }]]);
});

Deno.test("iterJsonLines() stays linear for a huge line in many small chunks", async () => {
  const line = new TextEncoder().encode(JSON.stringify({ data: "y".repeat(4_000_000) }) + "\n");
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < line.length; i += 1024) chunks.push(line.subarray(i, i + 1024));
  // The best of three tries: a loaded machine may stall one (a quadratic splitter takes seconds
  // every time; a linear one, tens of milliseconds).
  const times: number[] = [];
  for (let i = 0; i < 3 && !times.some((t) => t < 1000); i++) {
    const started = performance.now();
    let count = 0;
    for await (const _ of iterJsonLines(chunks)) count++;
    assert.equal(count, 1);
    times.push(performance.now() - started);
  }
  assert.ok(times.some((t) => t < 1000), `ms per try: ${times.map(Math.round).join(", ")}`);
});

Deno.test("watchObjects() yields ADDED, MODIFIED, DELETED in order from a resourceVersion", async () => {
  await using env = await setup();
  const { api } = env;
  await createObject(api, CONFIGMAPS, "default", { metadata: { name: "before" } });
  const { resourceVersion } = await listObjects(api, CONFIGMAPS, "default");
  const stop = new AbortController();
  const events: Array<[string, string | undefined]> = [];
  const watching = (async () => {
    for await (
      const { type, object } of watchObjects(api, CONFIGMAPS, "default", {
        resourceVersion,
        signal: stop.signal,
      })
    ) {
      if (type === "BOOKMARK") continue;
      events.push([type, object.metadata?.name]);
      if (type === "DELETED") stop.abort();
    }
  })();
  await createObject(api, CONFIGMAPS, "default", { metadata: { name: "cm" }, data: { a: "1" } });
  await patchObject(api, CONFIGMAPS, "default", "cm", { data: { a: "2" } });
  await deleteObject(api, CONFIGMAPS, "default", "cm");
  await watching;
  assert.deepEqual(events, [["ADDED", "cm"], ["MODIFIED", "cm"], ["DELETED", "cm"]]);
});

Deno.test("watchObjects() yields the in-stream 410 ERROR for an expired resourceVersion", async () => {
  await using env = await setup();
  const { resourceVersion } = await listObjects(env.api, CONFIGMAPS, "default");
  await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "cm" } });
  env.server.expireResourceVersions();
  const events: RawWatchEvent[] = [];
  for await (const event of watchObjects(env.api, CONFIGMAPS, "default", { resourceVersion })) {
    events.push(event);
    if (event.type === "ERROR") break;
  }
  assert.equal(events.at(-1)?.type, "ERROR");
  assert.equal(events.at(-1)?.object.code, 410);
});

/** Applies infiniteWatch events to a name → resourceVersion map. */
function apply(state: Map<string, string>, event: WatchEvent): void {
  if (event.type === "LISTED") return;
  const name = event.object.metadata!.name!;
  if (event.type === "DELETED") state.delete(name);
  else state.set(name, event.object.metadata!.resourceVersion!);
}

async function serverState(env: { api: ApiClient }): Promise<Map<string, string>> {
  const { items } = await listObjects(env.api, CONFIGMAPS, "default");
  return new Map(items.map((i) => [i.metadata!.name!, i.metadata!.resourceVersion!]));
}

/** Whether two name → resourceVersion maps are equal (in any order). */
function same(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

/** Runs infiniteWatch in the background, collecting the events and the state. */
/** The object of a watch event (not the LISTED marker). */
function objectOf(event: WatchEvent | undefined): RawBody {
  assert.ok(event && event.type !== "LISTED", "an event with an object");
  return event.object;
}

function follow(api: ApiClient, options: Parameters<typeof infiniteWatch>[3] = {}) {
  const stop = new AbortController();
  const events: WatchEvent[] = [];
  const state = new Map<string, string>();
  const done = (async () => {
    for await (
      const event of infiniteWatch(api, CONFIGMAPS, "default", { ...options, signal: stop.signal })
    ) {
      events.push(event);
      apply(state, event);
    }
  })();
  const listings = () => events.filter((e) => e.type === "LISTED").length;
  return {
    events,
    state,
    listings,
    async stop() {
      stop.abort();
      await done;
    },
  };
}

Deno.test("infiniteWatch() lists, marks LISTED, then follows changes", async () => {
  await using env = await setup();
  await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "a" } });
  await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "b" } });
  const watch = follow(env.api);
  try {
    await eventually(() => watch.listings() === 1);
    assert.deepEqual(
      watch.events.map((e) =>
        e.type === "LISTED" ? ["LISTED", e.count] : [e.type, e.object.metadata?.name]
      ),
      [
        [null, "a"],
        [null, "b"],
        ["LISTED", 2],
      ],
    );
    await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "c" } });
    await deleteObject(env.api, CONFIGMAPS, "default", "a");
    const expected = await serverState(env);
    await eventually(() => same(watch.state, expected));
    assert.ok(!watch.events.some((e) => (e.type as string) === "BOOKMARK"));
  } finally {
    await watch.stop();
  }
});

Deno.test("infiniteWatch() survives closed watches and ends with the exact server state", async () => {
  await using env = await setup({ faults: { closeWatchesEvery: 0.15 } });
  const watch = follow(env.api);
  try {
    await eventually(() => watch.listings() === 1);
    for (let i = 0; i < 20; i++) {
      await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: `cm${i}` } });
      if (i % 3 === 0) {
        await patchObject(env.api, CONFIGMAPS, "default", `cm${i}`, { data: { i: `${i}` } });
      }
      if (i % 4 === 0) await deleteObject(env.api, CONFIGMAPS, "default", `cm${i}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const expected = await serverState(env);
    await eventually(() => same(watch.state, expected), 10, "the same state");
    assert.ok(
      env.server.faultCounts.watchClosed >= 2,
      `closed ${env.server.faultCounts.watchClosed}`,
    );
    assert.equal(watch.listings(), 1, "resumed from the last resourceVersion, never relisted");
  } finally {
    await watch.stop();
  }
});

Deno.test("KubeClient.watch() under closed watches, 500s and a 410: the server's state, no version older than one seen", async () => {
  await using env = await setup({ faults: { closeWatchesEvery: 0.05 } });
  const kube = KubeClient.fromVault(env.vault, {
    settings: {
      networking: { errorBackoffs: Array(50).fill(0.01) },
      watching: { reconnectBackoff: 0.05 },
    },
  });
  // The test's own writes retry for as long as the injected 500s may take.
  const api = new ApiClient({
    vault: env.vault,
    settings: { networking: { errorBackoffs: Array(50).fill(0.01) } },
  });
  for (const name of ["a", "b", "c", "d"]) {
    await createObject(api, CONFIGMAPS, "default", { metadata: { name } });
  }
  const stop = new AbortController();
  const state = new Map<string, string>();
  const older: string[] = [];
  const watching = (async () => {
    for await (
      const { type, object } of kube.watch(CONFIGMAPS, {
        namespace: "default",
        signal: stop.signal,
      })
    ) {
      const name = object.metadata.name!;
      const version = object.metadata.resourceVersion!;
      const last = state.get(name);
      if (last !== undefined && Number(version) < Number(last)) {
        older.push(`${type} ${name} ${version} after ${last}`);
      }
      if (type === "DELETED") state.delete(name);
      else state.set(name, version);
    }
  })();
  try {
    await eventually(() => state.size === 4, 10, "the listing: every object before the watch");
    env.server.setFaults({ rate500: 0.2 });
    for (let i = 0; i < 24; i++) {
      await createObject(api, CONFIGMAPS, "default", { metadata: { name: `cm${i}` } });
      if (i % 3 === 0) {
        await patchObject(api, CONFIGMAPS, "default", `cm${i}`, { data: { i: `${i}` } });
      }
      if (i % 4 === 0) await deleteObject(api, CONFIGMAPS, "default", `cm${i}`);
      // A stretch of changes no stream delivers, whose history is then forgotten: a 410, a relist.
      if (i === 8) {
        env.server.setFaults({ stallWatches: true });
        env.server.expireResourceVersions();
      }
      if (i === 14) {
        env.server.expireResourceVersions();
        env.server.setFaults({ stallWatches: null });
      }
      await new Promise((r) => setTimeout(r, 15));
    }
    env.server.setFaults({ rate500: null });
    const expected = await serverState(env);
    await eventually(() => same(state, expected), 10, "the same state");
    assert.deepEqual(older, []);
    const counts = env.server.faultCounts;
    assert.ok(
      counts.watchClosed >= 2 && counts.error500 >= 1 && counts.expiredWatches >= 1,
      JSON.stringify(counts),
    );
  } finally {
    stop.abort();
    await watching;
  }
});

Deno.test("infiniteWatch() relists on 410 and reports deletions it missed", async () => {
  await using env = await setup({}, { settings: { watching: { reconnectBackoff: 0.3 } } });
  for (const name of ["a", "b", "c"]) {
    await createObject(env.api, CONFIGMAPS, "default", { metadata: { name } });
  }
  const watch = follow(env.api);
  try {
    await eventually(() => watch.listings() === 1);
    // Close the stream; change things while no stream delivers (a stream reopened after the
    // 0.3-s backoff stays silent: no race with a loaded machine's slow writes); forget that
    // history.
    env.server.setFaults({ stallWatches: true });
    env.server.expireResourceVersions();
    await deleteObject(env.api, CONFIGMAPS, "default", "a");
    await patchObject(env.api, CONFIGMAPS, "default", "b", { data: { x: "1" } });
    await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "d" } });
    env.server.expireResourceVersions();
    env.server.setFaults({ stallWatches: null });
    await eventually(() => watch.listings() === 2, 10, "a relist");
    assert.ok(same(watch.state, await serverState(env)));
    const relisted = watch.events.slice(watch.events.findIndex((e) => e.type === "LISTED") + 1);
    assert.deepEqual(
      relisted.map((e) => e.type === "LISTED" ? "LISTED" : `${e.type}:${e.object.metadata?.name}`),
      ["null:b", "null:c", "null:d", "DELETED:a", "LISTED"],
    );
    assert.ok(env.server.faultCounts.expiredWatches >= 1);
  } finally {
    await watch.stop();
  }
});

Deno.test("infiniteWatch(): a deletion missed between streams reports the stub it kept (apiVersion, kind, metadata; no data, no managedFields)", async () => {
  await using env = await setup({}, { settings: { watching: { reconnectBackoff: 0.3 } } });
  await createObject(env.api, CONFIGMAPS, "default", {
    metadata: { name: "a", labels: { app: "x" }, annotations: { note: "kept" } },
    data: { big: "x".repeat(1000) },
  });
  const watch = follow(env.api);
  try {
    await eventually(() => watch.listings() === 1);
    const listed = objectOf(watch.events.find((e) => e.type === null));
    assert.equal((listed.data as { big: string }).big.length, 1000, "the whole body is yielded");
    env.server.expireResourceVersions();
    await deleteObject(env.api, CONFIGMAPS, "default", "a");
    env.server.expireResourceVersions();
    await eventually(() => watch.listings() === 2, 10, "a relist");
    const deleted = objectOf(watch.events.find((e) => e.type === "DELETED"));
    assert.deepEqual(Object.keys(deleted), ["apiVersion", "kind", "metadata"]);
    assert.equal(deleted.kind, "ConfigMap");
    assert.equal(deleted.metadata?.name, "a");
    assert.equal(deleted.metadata?.uid, listed.metadata?.uid);
    assert.deepEqual(deleted.metadata?.labels, { app: "x" });
    assert.deepEqual(deleted.metadata?.annotations, { note: "kept" });
    assert.equal(deleted.metadata?.managedFields, undefined);
  } finally {
    await watch.stop();
  }
});

Deno.test("infiniteWatch() reopens a silent (stalled) stream after the inactivity timeout", async () => {
  await using env = await setup({}, { settings: { watching: { inactivityTimeout: 0.5 } } });
  const watch = follow(env.api);
  try {
    await eventually(() => watch.listings() === 1);
    await new Promise((r) => setTimeout(r, 100)); // let the watch stream open
    env.server.setFaults({ stallWatches: true });
    await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "during-stall" } });
    env.server.setFaults({ stallWatches: null });
    const started = performance.now();
    await eventually(() => watch.state.has("during-stall"), 10, "the event after reconnecting");
    const waited = (performance.now() - started) / 1000;
    assert.ok(env.server.faultCounts.watchStalled >= 1);
    // Real time (the stall is a real stream's silence). Without the 0.5-s inactivity timeout the
    // stalled stream would hold the event until the server ends the watch (minutes); 8 s is a
    // loaded 2-core machine's margin above the timeout.
    assert.ok(waited >= 0.2 && waited < 8, `waited ${waited}s`);
    assert.equal(watch.listings(), 1);
  } finally {
    await watch.stop();
  }
});

Deno.test("infiniteWatch() stops promptly when aborted, also on a silent stream", async () => {
  await using env = await setup();
  const watch = follow(env.api);
  await eventually(() => watch.listings() === 1);
  await new Promise((r) => setTimeout(r, 100));
  const started = performance.now();
  await watch.stop();
  // Real time (a real stream's read is what the abort must cut). Not cut, the silent stream
  // would hold the stop until the server ends the watch (minutes); 2 s is a loaded machine's
  // margin.
  const took = performance.now() - started;
  assert.ok(took < 2000, `stopped after ${took.toFixed(0)} ms`);
});

Deno.test("an HTTP 410 relists; an in-stream ERROR other than 410 is a WatchingError", async () => {
  await using env = await setup();
  await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "a" } });
  let watches = 0;
  const api = new ApiClient({
    vault: env.vault,
    // LIST, then WATCH (streamed lists fall back on such errors: streaming_lists_test.ts).
    settings: { watching: { reconnectBackoff: 0.01, streamingLists: "never" } },
    // Tamper with the real server's answers to watches: 410 first, then an ERROR event.
    fetch: (url, init) => {
      if (!url.includes("watch=true")) return fetch(url, init);
      watches++;
      if (watches === 1) {
        return Promise.resolve(
          Response.json({ kind: "Status", code: 410, reason: "Expired", message: "too old" }, {
            status: 410,
          }),
        );
      }
      const line = JSON.stringify({
        type: "ERROR",
        object: { kind: "Status", code: 500, reason: "InternalError", message: "boom" },
      });
      return Promise.resolve(new Response(line + "\n"));
    },
  });
  const events: WatchEvent[] = [];
  await assert.rejects(
    (async () => {
      for await (const event of infiniteWatch(api, CONFIGMAPS, "default")) events.push(event);
    })(),
    (e: Error) => e instanceof WatchingError && /500 InternalError: boom/.test(e.message),
  );
  assert.equal(events.filter((e) => e.type === "LISTED").length, 2, "relisted after the HTTP 410");
  assert.ok(events.every((e) => e.type !== "DELETED"));
  assert.equal(watches, 2);
});

Deno.test("watchObjects() ends when the client timeout passes", async () => {
  await using env = await setup();
  const started = performance.now();
  const events: RawBody[] = [];
  for await (const event of watchObjects(env.api, CONFIGMAPS, "default", { clientTimeout: 0.3 })) {
    events.push(event.object);
  }
  const elapsed = (performance.now() - started) / 1000;
  // Real time (the client timeout ends a real stream). Without it, the watch would last until
  // the server ends it (minutes); 5 s is a loaded 2-core machine's margin above 0.3 s.
  assert.ok(elapsed >= 0.25 && elapsed < 5, `elapsed ${elapsed}`);
});

Deno.test("watchObjects(): lines cut across chunks; a line that is not JSON comes after those before it", async () => {
  await using env = await setup();
  const enc = new TextEncoder();
  const event = (type: string, name: string) =>
    JSON.stringify({ type, object: { metadata: { name, resourceVersion: "1" } } });
  // Each text cut at the given byte offsets (one cut is in the middle of "ü").
  const answer = ([text, ...cuts]: [string, ...number[]]) => {
    const bytes = enc.encode(text);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        let from = 0;
        for (const to of [...cuts, bytes.length]) controller.enqueue(bytes.slice(from, from = to));
        controller.close();
      },
    });
    return Promise.resolve(new Response(body));
  };
  const first = `${event("ADDED", "a")}\n${event("MODIFIED", "ü")}\nnot json\n${
    event("ADDED", "b")
  }\n`;
  const cutInU = enc.encode(first.slice(0, first.indexOf("ü"))).length + 1;
  const streams: [string, ...number[]][] = [
    [first, 30, cutInU],
    [`${event("ADDED", "c")}\n\n${event("DELETED", "c")}`, 5], // the last line has no newline
  ];
  const api = new ApiClient({
    vault: env.vault,
    fetch: (url, init) => url.includes("watch=true") ? answer(streams.shift()!) : fetch(url, init),
  });
  const seen: string[] = [];
  const see = (e: RawWatchEvent) => seen.push(`${e.type} ${e.object.metadata?.name}`);
  await assert.rejects(
    (async () => {
      for await (const e of watchObjects(api, CONFIGMAPS, "default", {})) see(e);
    })(),
    (e: Error) => e instanceof WatchingError && e.cause instanceof SyntaxError,
  );
  assert.deepEqual(seen, ["ADDED a", "MODIFIED ü"]);
  seen.length = 0;
  for await (const e of watchObjects(api, CONFIGMAPS, "default", {})) see(e);
  assert.deepEqual(seen, ["ADDED c", "DELETED c"]);
});

Deno.test("infiniteWatch(): the events of one chunk in order; a 410 ERROR after events in the same chunk relists after them", async () => {
  await using env = await setup();
  await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "a" } });
  const line = (type: string, object: Record<string, unknown>) =>
    JSON.stringify({ type, object }) + "\n";
  const cm = (name: string, rv: string) => ({
    metadata: { name, namespace: "default", resourceVersion: rv },
  });
  let watches = 0;
  const api = new ApiClient({
    vault: env.vault,
    settings: { watching: { reconnectBackoff: 0.01, streamingLists: "never" } },
    fetch: (url, init) => {
      if (!url.includes("watch=true")) return fetch(url, init);
      watches++;
      // One chunk: two changes, a bookmark, a 410 and a change after it (never seen).
      const chunk = watches === 1
        ? line("ADDED", cm("x", "101")) + line("MODIFIED", cm("x", "102")) +
          line("BOOKMARK", { metadata: { resourceVersion: "103" } }) +
          line("ERROR", { kind: "Status", code: 410, reason: "Expired", message: "old" }) +
          line("ADDED", cm("never", "104"))
        : "";
      return Promise.resolve(new Response(chunk));
    },
  });
  const seen: string[] = [];
  const stop = new AbortController();
  for await (const event of infiniteWatch(api, CONFIGMAPS, "default", { signal: stop.signal })) {
    seen.push(event.type === "LISTED" ? "LISTED" : `${event.type} ${event.object.metadata?.name}`);
    if (seen.filter((s) => s === "LISTED").length === 2) stop.abort();
  }
  // x was never on the server: the relist after the 410 reports it DELETED.
  assert.deepEqual(seen, [
    "null a",
    "LISTED",
    "ADDED x",
    "MODIFIED x",
    "null a",
    "DELETED x",
    "LISTED",
  ]);
  assert.equal(watches, 1);
});

Deno.test("infiniteWatch() with skip: the skipped objects are not in the state nor their changes yielded; a relist request brings their state at once (streamed and listed)", async () => {
  for (const streamingLists of ["auto", "never"] as const) {
    await using env = await setup();
    const a = await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "a" } });
    const b = await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "b" } });
    const skipped = new Set([b!.metadata!.uid!]);
    let request: (() => void) | undefined;
    const watch = follow(env.api, {
      streamingLists,
      // No stream ends by itself meanwhile: only the request's cut ends it.
      serverTimeout: 3600,
      clientTimeout: null,
      inactivityTimeout: null,
      skip: (uid) => skipped.has(uid),
      onRelist: (r) => {
        request = r;
        return () => (request = undefined);
      },
    });
    try {
      await eventually(() => watch.listings() === 1);
      assert.deepEqual(
        watch.events.map((e) =>
          e.type === "LISTED" ? "LISTED" : `${e.type}:${e.object.metadata?.name}`
        ),
        ["null:a", "LISTED"],
        `${streamingLists}: the skipped object is not in the state (streamed or listed)`,
      );
      const after = () =>
        watch.events.slice(watch.events.findIndex((e) => e.type === "LISTED") + 1).map((e) =>
          e.type === "LISTED" ? "LISTED" : `${e.type}:${e.object.metadata?.name}`
        );
      await patchObject(env.api, CONFIGMAPS, "default", "b", { data: { x: "1" } });
      await patchObject(env.api, CONFIGMAPS, "default", "a", { data: { x: "1" } });
      await eventually(() => after().length === 1);
      assert.deepEqual(after(), ["MODIFIED:a"], `${streamingLists}: b's change is skipped`);
      assert.equal(a!.metadata!.name, "a");
      skipped.clear();
      request!(); // the stream is silent now: the request cuts it
      // At once (the stream would otherwise end only after seconds: the server closes it).
      await eventually(() => watch.listings() === 2, 3, `${streamingLists}: a relist`);
      assert.deepEqual(after().slice(1), ["null:a", "null:b", "LISTED"], streamingLists);
      assert.ok(same(watch.state, await serverState(env)), "the exact state, b's change too");
    } finally {
      await watch.stop();
    }
    assert.equal(request, undefined, "unsubscribed when the watch stops");
  }
});
