/**
 * The event correlator, client-go's semantics on a fake clock: which
 * occurrences are one Event (the key), identical ones counted into it,
 * similar ones aggregated after 10 messages in 10 minutes, and the spam
 * filter's token bucket per source and object (25 at once, one per 5 minutes).
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../testing.ts";
import { PostingSettings } from "../../src/cogs/configs/settings.ts";
import {
  COMBINED_PREFIX,
  type CorrelatedEvent,
  EventCorrelator,
} from "../../src/core/engines/event_correlator.ts";
import { Lru } from "../../src/cogs/structs/lru.ts";

const POD = { apiVersion: "v1", kind: "Pod", name: "p1", namespace: "ns", uid: "u1" };

function occurrence(over: Partial<CorrelatedEvent> = {}): CorrelatedEvent {
  return {
    ref: POD,
    type: "Normal",
    reason: "Logging",
    message: "Hello.",
    component: "kopf",
    instance: "dev",
    ...over,
  };
}

Deno.test("correlate(): identical events are one Event, its count bumped and its last time moved", async () => {
  const clock = new FakeClock();
  const correlator = new EventCorrelator({ clock });
  const first = correlator.correlate(occurrence())!;
  await clock.advance(10);
  const second = correlator.correlate(occurrence())!;
  await clock.advance(5);
  const third = correlator.correlate(occurrence())!;
  assert.equal(first.entry, second.entry);
  assert.equal(second.entry, third.entry);
  assert.deepEqual([first.count, second.count, third.count], [1, 2, 3]);
  assert.deepEqual(third.firstTimestamp, first.lastTimestamp);
  assert.equal(third.lastTimestamp.getTime() - first.lastTimestamp.getTime(), 15_000);
  assert.equal(third.message, "Hello.");
  assert.equal(third.aggregated, false);
});

Deno.test("correlate(): the key is the object (kind, namespace, name, uid, apiVersion), type, reason, message and source", () => {
  const correlator = new EventCorrelator();
  const base = correlator.correlate(occurrence())!.entry;
  const others: Partial<CorrelatedEvent>[] = [
    { ref: { ...POD, name: "p2" } },
    { ref: { ...POD, namespace: "other" } },
    { ref: { ...POD, uid: "u2" } }, // a re-created object of the same name
    { ref: { ...POD, kind: "Service" } },
    { ref: { ...POD, apiVersion: "v2" } },
    { type: "Warning" },
    { reason: "Other" },
    { message: "Bye." },
    { component: "other-operator" },
  ];
  const entries = others.map((o) => correlator.correlate(occurrence(o))!.entry);
  assert.equal(new Set([base, ...entries]).size, others.length + 1);
  for (const e of entries) assert.equal(e.count, 1);
  assert.equal(correlator.correlate(occurrence())!.entry, base);
  assert.equal(base.count, 2);
});

Deno.test("correlate(): the 10th different message of similar events within 10 minutes is aggregated", async () => {
  const clock = new FakeClock();
  const correlator = new EventCorrelator({ clock });
  const singles = [];
  for (let i = 1; i <= 9; i++) {
    singles.push(correlator.correlate(occurrence({ message: `Step ${i}.` }))!);
    await clock.advance(30);
  }
  assert.ok(singles.every((s) => !s.aggregated && s.count === 1));
  assert.equal(new Set(singles.map((s) => s.entry)).size, 9);

  const tenth = correlator.correlate(occurrence({ message: "Step 10." }))!;
  assert.equal(tenth.aggregated, true);
  assert.equal(tenth.message, `${COMBINED_PREFIX}Step 10.`);
  assert.equal(tenth.count, 1); // a new Event: the aggregate
  await clock.advance(1);
  const eleventh = correlator.correlate(occurrence({ message: "Step 11." }))!;
  assert.equal(eleventh.entry, tenth.entry);
  assert.equal(eleventh.count, 2);
  assert.equal(eleventh.message, `${COMBINED_PREFIX}Step 11.`);

  // The group stays below the limit by forgetting one message (the oldest, here: "Step 1." and
  // "Step 2."): a message still in the group is its own Event again; a forgotten one aggregates.
  const again = correlator.correlate(occurrence({ message: "Step 9." }))!;
  assert.equal(again.aggregated, false);
  assert.equal(again.entry, singles[8]!.entry);
  assert.equal(again.count, 2);
  const forgotten = correlator.correlate(occurrence({ message: "Step 1." }))!;
  assert.equal(forgotten.aggregated, true);
  assert.equal(forgotten.count, 3);

  // Other objects and other reasons are other groups.
  assert.equal(
    correlator.correlate(occurrence({ message: "Step 12.", reason: "X" }))!.aggregated,
    false,
  );
  assert.equal(
    correlator.correlate(occurrence({ message: "Step 12.", ref: { ...POD, name: "p2" } }))!
      .aggregated,
    false,
  );
});

Deno.test("correlate(): a group quiet for more than 10 minutes starts over", async () => {
  const clock = new FakeClock();
  const correlator = new EventCorrelator({ clock });
  for (let i = 1; i <= 9; i++) correlator.correlate(occurrence({ message: `Step ${i}.` }));
  await clock.advance(600); // exactly the window: still the same group
  assert.equal(correlator.correlate(occurrence({ message: "Step 10." }))!.aggregated, true);
  await clock.advance(600.001);
  const fresh = correlator.correlate(occurrence({ message: "Step 11." }))!;
  assert.equal(fresh.aggregated, false);
  assert.equal(fresh.message, "Step 11.");
});

Deno.test("correlate(): the spam filter lets 25 events about an object through at once, then one per 5 minutes", async () => {
  const clock = new FakeClock();
  const correlator = new EventCorrelator({ clock });
  const passed = [];
  for (let i = 0; i < 30; i++) passed.push(correlator.correlate(occurrence()));
  assert.equal(passed.filter(Boolean).length, 25);
  assert.deepEqual(passed.slice(20).map((p) => p?.count), [21, 22, 23, 24, 25, ...Array(5)]);
  // Other messages about the same object share its bucket; other objects have their own.
  assert.equal(correlator.correlate(occurrence({ message: "Other." })), undefined);
  assert.equal(correlator.correlate(occurrence({ ref: { ...POD, name: "p2" } }))?.count, 1);

  await clock.advance(299);
  assert.equal(correlator.correlate(occurrence()), undefined);
  await clock.advance(1);
  // As in client-go, dropped occurrences were counted: the one let through carries them all.
  const refilled = correlator.correlate(occurrence())!;
  assert.equal(refilled.count, 32);
  assert.equal(correlator.correlate(occurrence()), undefined);
  await clock.advance(25 * 300 + 600); // the bucket refills up to the burst, no more
  let through = 0;
  for (let i = 0; i < 40; i++) if (correlator.correlate(occurrence())) through++;
  assert.equal(through, 25);
});

Deno.test("correlate(): the spam limits are read at every use (settings.posting.spamBurst, spamRefill)", async () => {
  const clock = new FakeClock();
  const settings = new PostingSettings();
  settings.spamBurst = 2;
  settings.spamRefill = 10;
  const correlator = new EventCorrelator({ clock, limits: settings });
  const through = () => [1, 2, 3].filter(() => correlator.correlate(occurrence())).length;
  assert.equal(through(), 2);
  await clock.advance(10);
  assert.equal(through(), 1);
  settings.spamRefill = 0; // no limit
  assert.equal(through(), 3);
});

Deno.test("correlate(): the caches are bounded (LRU); an evicted Event starts over as a new one", () => {
  const correlator = new EventCorrelator({ cacheSize: 2 });
  const a = correlator.correlate(occurrence({ message: "A." }))!;
  correlator.correlate(occurrence({ message: "B." }));
  assert.equal(correlator.correlate(occurrence({ message: "A." }))!.entry, a.entry); // A is recent
  correlator.correlate(occurrence({ message: "C." })); // evicts B, the least recently used
  assert.equal(correlator.correlate(occurrence({ message: "A." }))!.count, 3);
  assert.equal(correlator.correlate(occurrence({ message: "B." }))!.count, 1);
});

Deno.test("correlate(): the keys kept per reference follow its component, type, reason and instance", () => {
  const correlator = new EventCorrelator();
  const ref = { ...POD };
  const base = correlator.correlate(occurrence({ ref }))!;
  const changes: Partial<CorrelatedEvent>[] = [
    { component: "other-operator" },
    { type: "Warning" },
    { reason: "Other" },
  ];
  for (const change of changes) {
    const other = correlator.correlate(occurrence({ ref, ...change }))!;
    assert.notEqual(other.entry, base.entry, JSON.stringify(change));
    assert.equal(other.count, 1);
    if (change.component) assert.notEqual(other.source, base.source);
    else assert.equal(other.source, base.source);
  }
  // The instance is in the aggregation's key only (as before the cache).
  assert.equal(correlator.correlate(occurrence({ ref, instance: "prod" }))!.entry, base.entry);
  // Back to the first: the same Event (an equal reference, not the same object, too).
  assert.equal(correlator.correlate(occurrence({ ref }))!.entry, base.entry);
  assert.equal(correlator.correlate(occurrence({ ref: { ...POD } }))!.entry, base.entry);
  assert.equal(base.entry.count, 4);
});

Deno.test("Lru: forgets the least recently used entry beyond its size; get and set make an entry recent", () => {
  const lru = new Lru<number>(3);
  for (const key of ["a", "b", "c"]) lru.set(key, key.charCodeAt(0));
  assert.equal(lru.get("a"), 97); // order now: b c a
  lru.set("b", 1); // c a b
  lru.set("d", 100); // evicts c
  assert.equal(lru.length, 3);
  assert.equal(lru.get("c"), undefined);
  lru.set("e", 101); // evicts a
  assert.equal(lru.get("a"), undefined);
  assert.deepEqual(["b", "d", "e"].map((k) => lru.get(k)), [1, 100, 101]); // b d e → evicted in that order
  lru.set("f", 0);
  lru.set("g", 0);
  const left = ["b", "d", "e", "f", "g"].map((k) => lru.get(k));
  assert.deepEqual(left, [undefined, undefined, 101, 0, 0]);
  const none = new Lru<number>(0);
  none.set("x", 1);
  assert.equal(none.get("x"), undefined);
  assert.equal(none.length, 0);
});

Deno.test("correlate(): an object's kept cache entries are used while live, looked up anew once evicted", () => {
  const limits = { spamBurst: 1, spamRefill: 300 };
  const correlator = new EventCorrelator({ cacheSize: 1, limits });
  const a = { ...POD, name: "a" };
  const b = { ...POD, name: "b" };
  assert.ok(correlator.correlate(occurrence({ ref: a })));
  assert.equal(correlator.correlate(occurrence({ ref: a })), undefined); // its kept bucket: spent
  assert.ok(correlator.correlate(occurrence({ ref: b }))); // evicts a's entries
  assert.ok(correlator.correlate(occurrence({ ref: a }))); // a new bucket: not the kept one
  assert.equal(correlator.correlate(occurrence({ ref: { ...a } })), undefined); // an equal reference
  // The groups: an evicted one starts over (9 messages, evicted, then 9 more: none aggregated).
  const big = new EventCorrelator({ cacheSize: 1, limits: { spamBurst: 100, spamRefill: 0 } });
  const seen = [];
  for (let i = 0; i < 9; i++) seen.push(big.correlate(occurrence({ ref: a, message: `${i}` }))!);
  big.correlate(occurrence({ ref: b }));
  for (let i = 9; i < 18; i++) seen.push(big.correlate(occurrence({ ref: a, message: `${i}` }))!);
  assert.ok(seen.every((s) => !s.aggregated));
  const kept = new EventCorrelator({ limits: { spamBurst: 100, spamRefill: 0 } });
  for (let i = 0; i < 9; i++) kept.correlate(occurrence({ ref: a, message: `${i}` }));
  assert.ok(kept.correlate(occurrence({ ref: a, message: "9" }))!.aggregated);
});

Deno.test("Lru: delete() and evictions call onEvict; oldest is the least recently used", () => {
  const evicted: string[] = [];
  const lru = new Lru<number>(2, (node) => evicted.push(node.key));
  const a = lru.add("a", 1);
  lru.add("b", 2);
  assert.equal(lru.oldest, a);
  lru.get("a");
  assert.equal(lru.oldest?.key, "b");
  lru.add("c", 3); // evicts b
  lru.delete(a);
  assert.deepEqual([evicted, a.live, lru.length, lru.oldest?.key], [["b", "a"], false, 1, "c"]);
});

Deno.test("Lru: a kept entry is used again while live; add() and entry() give entries", () => {
  const lru = new Lru<string>(2);
  const a = lru.add("a", "A");
  const b = lru.add("b", "B");
  assert.ok(lru.use(a)); // order: b a
  lru.add("c", "C"); // evicts b
  assert.equal(b.live, false);
  assert.equal(lru.use(b), false);
  assert.equal(lru.use(undefined), false);
  assert.equal(lru.entry("a"), a);
  assert.equal(lru.entry("b"), undefined);
  a.value = "A2";
  assert.equal(lru.get("a"), "A2");
});

Deno.test("correlate(): at most 64 Events and 64 groups per object, the least recently used forgotten", () => {
  const correlator = new EventCorrelator({
    aggregateLimit: 1_000,
    limits: { spamBurst: 1, spamRefill: 0 },
  });
  const say = (message: string, reason = "Logging") =>
    correlator.correlate(occurrence({ message, reason }))!.count;
  for (let i = 0; i < 64; i++) assert.equal(say(`m${i}`), 1);
  assert.equal(say("m0"), 2); // m0 is now the most recent: m1 is the oldest
  assert.equal(say("m64"), 1); // the 65th Event: m1 is forgotten
  assert.deepEqual([say("m2"), say("m0"), say("m64")], [2, 3, 2]);
  assert.equal(say("m1"), 1); // forgotten, so new (and m3, the oldest now, goes)
  assert.equal(say("m3"), 1);
  // Groups: one per reason; the 65th reason forgets the least recently used group.
  const grouped = new EventCorrelator({
    aggregateLimit: 2,
    limits: { spamBurst: 1, spamRefill: 0 },
  });
  const on = (reason: string, message: string) =>
    grouped.correlate(occurrence({ reason, message }))!.aggregated;
  assert.equal(on("r0", "a"), false);
  for (let i = 1; i <= 64; i++) on(`r${i}`, "a");
  assert.equal(on("r0", "b"), false); // r0's group (with "a") was forgotten: "b" is its first
  assert.equal(on("r64", "b"), true); // r64's group is kept: "a" and "b" make 2
});

Deno.test("correlate(): beyond the cache size in all, the least recently used objects go first, bucket and all", () => {
  const limits = { spamBurst: 2, spamRefill: 300 };
  const correlator = new EventCorrelator({ cacheSize: 4, limits });
  const ref = (name: string) => ({ ...POD, name, uid: name });
  const say = (name: string, message = "Hello.") =>
    correlator.correlate(occurrence({ ref: ref(name), message }))?.count;
  assert.deepEqual([say("a"), say("a", "Bye."), say("b"), say("b", "Bye.")], [1, 1, 1, 1]);
  assert.equal(say("a"), undefined); // a's bucket is spent (2 at once); its count moved to 2
  assert.equal(say("c"), 1); // the 5th Event in all: b, the least recently used object, goes
  assert.equal(say("b"), 1); // a new Event in a new bucket: 4 Events in all (a's 2, c's, b's)
  assert.equal(say("d"), 1); // the 5th: a, now the least recently used, goes (Events and bucket)
  assert.equal(say("a"), 1); // so a starts over: a new Event, a full bucket
});
