/**
 * Where `infiniteWatch()` resumes after a disconnect (issue 26: nothing failed when it forgot):
 * from the resourceVersion of the last event it yielded — so no change comes twice — and from
 * the last bookmark's, so that a watch whose own objects are quiet while the rest of the cluster
 * changes does not fall out of the server's history (a 410 and a full relist). Over real HTTP
 * against the embedded API server; the disconnects are the server closing every watch.
 */

import assert from "node:assert/strict";
import { infiniteWatch, type WatchEvent } from "../../src/cogs/clients/watching.ts";
import { createObject } from "../../src/cogs/clients/creating.ts";
import { patchObject } from "../../src/cogs/clients/patching.ts";
import { delay, until } from "../reactor/_setup.ts";
import { CONFIGMAPS, type Env, setup } from "./_setup.ts";

/** Consumes a watch in the background, as lines `TYPE name v`. */
function watch(env: Env, labelSelector?: string) {
  const stop = new AbortController();
  const seen: string[] = [];
  const done = (async () => {
    const events = infiniteWatch(env.api, CONFIGMAPS, "default", {
      signal: stop.signal,
      ...(labelSelector ? { labelSelector } : {}),
    });
    for await (const e of events as AsyncIterable<WatchEvent>) {
      if (e.type === "LISTED") seen.push("LISTED");
      else {
        const o = e.object as { metadata?: { name?: string }; data?: { v?: string } };
        seen.push(`${e.type ?? "LIST"} ${o.metadata?.name} ${o.data?.v ?? ""}`.trim());
      }
    }
  })().catch((e) => {
    if (!stop.signal.aborted) throw e;
  });
  return {
    seen,
    async [Symbol.asyncDispose]() {
      stop.abort();
      await done;
    },
  };
}

Deno.test("infiniteWatch(): after a disconnect, it resumes after the last event — no change twice, no relist", async () => {
  await using env = await setup();
  await using w = watch(env);
  await until(() => w.seen.includes("LISTED"), "listed");
  await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: "a" }, data: { v: "1" } });
  await patchObject(env.api, CONFIGMAPS, "default", "a", { data: { v: "2" } });
  await until(() => w.seen.includes("MODIFIED a 2"), "a's change");
  const before = env.server.server.watches.size;
  env.server.server.watches.closeAll();
  await until(() => env.server.server.watches.size === before, "the watch re-opened");
  await patchObject(env.api, CONFIGMAPS, "default", "a", { data: { v: "3" } });
  await until(() => w.seen.includes("MODIFIED a 3"), "a's next change");
  assert.deepEqual(w.seen, ["LISTED", "ADDED a 1", "MODIFIED a 2", "MODIFIED a 3"]);
});

Deno.test("infiniteWatch(): bookmarks move the resume point on while its own objects are quiet — no 410, no relist", async () => {
  // History of 3 changes; bookmarks every 0.1 s.
  await using env = await setup({ historySize: 3, bookmarkSeconds: 0.1 });
  await using w = watch(env, "app=mine");
  await until(() => w.seen.includes("LISTED"), "listed");
  // The rest of the cluster changes (10 objects this watch does not select): the list's
  // resourceVersion drops out of history; bookmarks carry the newest one to the watch.
  for (let i = 0; i < 10; i++) {
    await createObject(env.api, CONFIGMAPS, "default", { metadata: { name: `other-${i}` } });
  }
  await delay(500); // several bookmarks (every 0.1 s) pass meanwhile
  const before = env.server.server.watches.size;
  env.server.server.watches.closeAll();
  await until(() => env.server.server.watches.size === before, "the watch re-opened");
  await createObject(env.api, CONFIGMAPS, "default", {
    metadata: { name: "mine", labels: { app: "mine" } },
    data: { v: "1" },
  });
  await until(() => w.seen.some((l) => l.includes("mine")), "its own object");
  assert.deepEqual(w.seen, ["LISTED", "ADDED mine 1"], "resumed, not relisted");
  assert.equal(env.server.faultCounts.expiredWatches, 0, "no watch was answered 410");
});
