/**
 * The event recorder over a scripted writer: repeats coalesced into the next
 * write, bounded concurrency across objects and one write at a time per
 * object (in order), Events gone or failing, the counts of every outcome, and
 * the exit flush within `settings.posting.flushTimeout` on a fake clock.
 */

import assert from "node:assert/strict";
import { FakeClock } from "../../testing.ts";
import { PostingSettings } from "../../src/cogs/configs/settings.ts";
import {
  type EventDraft,
  EventRecorder,
  type EventWriter,
} from "../../src/core/engines/event_recorder.ts";
import { OperatorMetrics } from "../../src/core/engines/metrics.ts";
import { sample } from "./_metrics.ts";

/** A POST's name, or `null` for a failed POST; a PATCH's outcome. */
type Answer = { namespace: string; name: string } | null | "patched" | "gone" | "failed";

interface Call {
  verb: "POST" | "PATCH";
  target: string | undefined;
  draft: EventDraft;
  answer(value?: Answer): void;
  signal: AbortSignal;
}

/** A writer whose calls wait until the test answers them (or answer at once with `auto`). */
class ScriptedWriter implements EventWriter {
  calls: Call[] = [];
  open: Call[] = [];
  #names = 0;
  constructor(readonly auto = false) {}
  #call(verb: Call["verb"], target: string | undefined, draft: EventDraft, signal: AbortSignal) {
    const { promise, resolve } = Promise.withResolvers<Answer>();
    const fallback: Answer = verb === "POST"
      ? { namespace: "ns", name: `e${++this.#names}` }
      : "patched";
    const call: Call = {
      verb,
      target,
      draft,
      signal,
      answer: (value = fallback) => {
        if (!this.open.includes(call)) return;
        this.open.splice(this.open.indexOf(call), 1);
        resolve(value);
      },
    };
    this.calls.push(call);
    this.open.push(call);
    // Like a real request, an aborted one ends at once (as a failed one).
    signal.addEventListener("abort", () => call.answer(verb === "POST" ? null : "failed"));
    if (this.auto) queueMicrotask(() => call.answer());
    return promise;
  }
  create(draft: EventDraft, signal: AbortSignal) {
    return this.#call("POST", undefined, draft, signal).then((a) =>
      a === null ? undefined : a as { namespace: string; name: string }
    );
  }
  patch(target: { name: string }, draft: EventDraft, signal: AbortSignal) {
    return this.#call("PATCH", target.name, draft, signal) as Promise<
      "patched" | "gone" | "failed"
    >;
  }
  /** The calls so far, as `VERB [target] message ×count`. */
  log(): string[] {
    return this.calls.map((c) =>
      `${c.verb}${
        c.target ? ` ${c.target}` : ""
      } ${c.draft.ref.name}: ${c.draft.message} ×${c.draft.count}`
    );
  }
}

const ref = (name: string) => ({ apiVersion: "v1", kind: "Pod", name, namespace: "ns", uid: name });
const settle = () => new Promise((r) => setTimeout(r, 0));

Deno.test("EventRecorder: repeats while a write is in flight fold into one PATCH with the latest count", async () => {
  const writer = new ScriptedWriter();
  const recorder = new EventRecorder(writer);
  recorder.post(ref("p1"), "Normal", "Logging", "Same.");
  await settle();
  for (let i = 0; i < 49; i++) recorder.post(ref("p1"), "Normal", "Logging", "Same.");
  assert.deepEqual(writer.log(), ["POST p1: Same. ×1"]);
  assert.equal(recorder.counts.pending, 25); // the 25 dropped by the spam filter never wait
  writer.open[0]!.answer();
  await settle();
  // The spam filter let 25 through (client-go's burst); the other 25 are dropped.
  assert.deepEqual(writer.log(), ["POST p1: Same. ×1", "PATCH e1 p1: Same. ×25"]);
  writer.open[0]!.answer();
  await recorder.close();
  assert.deepEqual(
    { ...recorder.counts },
    {
      posted: 1,
      folded: 24,
      aggregated: 0,
      spam: 25,
      failed: 0,
      overflow: 0,
      unflushed: 0,
      pending: 0,
    },
  );
});

Deno.test("EventRecorder: at most settings.posting.concurrency writes at once; one at a time per object, in order", async () => {
  const writer = new ScriptedWriter();
  const settings = new PostingSettings();
  settings.concurrency = 3;
  const recorder = new EventRecorder(writer, { settings });
  for (const name of ["a", "b", "c", "d", "e"]) {
    recorder.post(ref(name), "Normal", "Logging", "First.");
    recorder.post(ref(name), "Normal", "Logging", "Second.");
  }
  await settle();
  assert.deepEqual(writer.log(), ["POST a: First. ×1", "POST b: First. ×1", "POST c: First. ×1"]);
  writer.open[1]!.answer(); // b's first
  await settle();
  // The next ready object goes first (d), b's second waits its turn behind it.
  assert.deepEqual(writer.log().slice(3), ["POST d: First. ×1"]);
  while (writer.open.length) {
    writer.open[0]!.answer();
    await settle();
    assert.ok(writer.open.length <= 3);
  }
  const order = (name: string) =>
    writer.calls.filter((c) => c.draft.ref.name === name).map((c) => c.draft.message);
  for (const name of ["a", "b", "c", "d", "e"]) {
    assert.deepEqual(order(name), ["First.", "Second."]);
  }
  await recorder.close();
  assert.equal(recorder.counts.posted, 10);
});

Deno.test("EventRecorder: a PATCH of a deleted Event creates it anew; failed writes are counted and retried by the next occurrence", async () => {
  const writer = new ScriptedWriter();
  const recorder = new EventRecorder(writer);
  recorder.post(ref("p"), "Normal", "Logging", "Same.");
  await settle();
  writer.open[0]!.answer();
  await settle();
  recorder.post(ref("p"), "Normal", "Logging", "Same.");
  await settle();
  writer.open[0]!.answer("gone"); // the PATCH of e1
  await settle();
  writer.open[0]!.answer({ namespace: "ns", name: "e2" }); // the POST that follows it
  await settle();
  recorder.post(ref("p"), "Normal", "Logging", "Same.");
  await settle();
  writer.open[0]!.answer("failed");
  await settle();
  recorder.post(ref("p"), "Normal", "Logging", "Same.");
  await settle();
  writer.open[0]!.answer();
  recorder.post(ref("q"), "Normal", "Logging", "Other.");
  await settle();
  writer.open[0]!.answer(null); // a failed POST
  await settle();
  writer.open[0]?.answer();
  await recorder.close();
  assert.deepEqual(writer.log(), [
    "POST p: Same. ×1",
    "PATCH e1 p: Same. ×2",
    "POST p: Same. ×2",
    "PATCH e2 p: Same. ×3",
    "PATCH e2 p: Same. ×4",
    "POST q: Other. ×1",
  ]);
  assert.equal(recorder.counts.posted, 2); // the 1st, and the 2nd (its Event re-created, count 2)
  assert.equal(recorder.counts.folded, 1); // the 4th
  assert.equal(recorder.counts.failed, 2); // the 3rd (its PATCH failed) and q's
});

Deno.test("EventRecorder: every outcome is counted on the metrics; posted + folded + dropped = occurrences", async () => {
  const writer = new ScriptedWriter(true);
  const metrics = new OperatorMetrics();
  const recorder = new EventRecorder(writer, { metrics, maxPending: 10 });
  let occurrences = 0;
  const post = (name: string, message: string) => {
    occurrences++;
    recorder.post(ref(name), "Normal", "Logging", message);
  };
  for (let i = 0; i < 12; i++) post("similar", `Step ${i}.`); // 9 Events, then 3 in an aggregate
  await settle();
  for (let i = 0; i < 30; i++) post("chatty", "Same."); // 25 pass the spam filter
  await settle();
  for (let i = 0; i < 11; i++) post(`o${i}`, "Hi."); // 10 Events may wait at once: 1 overflows
  await recorder.close();
  assert.deepEqual({ ...recorder.counts }, {
    posted: 10 + 1 + 10,
    folded: 2 + 24,
    aggregated: 3,
    spam: 5,
    failed: 0,
    overflow: 1,
    unflushed: 0,
    pending: 0,
  });
  const c = recorder.counts;
  assert.equal(c.posted + c.folded + c.spam + c.failed + c.overflow + c.unflushed, occurrences);
  assert.equal(writer.calls.filter((x) => x.draft.message.startsWith("(combined")).length, 1);
  const text = await metrics.metrics();
  assert.equal(sample(text, "kopf_events_posted_total"), 21);
  assert.equal(sample(text, "kopf_events_folded_total"), 26);
  assert.equal(sample(text, "kopf_events_aggregated_total"), 3);
  assert.equal(sample(text, "kopf_events_dropped_total", { reason: "spam" }), 5);
  assert.equal(sample(text, "kopf_events_dropped_total", { reason: "overflow" }), 1);
  assert.equal(sample(text, "kopf_events_dropped_total", { reason: "failed" }), 0);
  assert.equal(sample(text, "kopf_events_dropped_total", { reason: "unflushed" }), 0);
});

Deno.test("EventRecorder: close() waits for pending writes up to settings.posting.flushTimeout, then drops and counts the rest, logged once", async () => {
  const clock = new FakeClock();
  const writer = new ScriptedWriter();
  const settings = new PostingSettings();
  settings.concurrency = 1;
  settings.flushTimeout = 2;
  const warnings: string[] = [];
  const recorder = new EventRecorder(writer, { settings, clock, warn: (m) => warnings.push(m) });
  for (const name of ["a", "b", "c"]) recorder.post(ref(name), "Normal", "Logging", "Hi.");
  let closed = false;
  const closing = recorder.close().then(() => (closed = true));
  await clock.advance(1);
  writer.open[0]!.answer(); // a is written within the deadline
  await clock.advance(0.5);
  assert.equal(closed, false);
  assert.equal(writer.open[0]!.draft.ref.name, "b"); // b is in flight, c waits
  await clock.advance(0.5); // the deadline: b's request is aborted, c never starts
  await closing;
  assert.equal(writer.calls.length, 2);
  assert.equal(writer.calls[1]!.signal.aborted, true);
  assert.equal(recorder.counts.posted, 1);
  assert.equal(recorder.counts.unflushed, 2);
  assert.equal(recorder.counts.failed, 0);
  assert.deepEqual(warnings, [
    "2 event(s) were not posted within settings.posting.flushTimeout (2s) at exit and are " +
    "dropped (counted in kopf_events_dropped_total).",
  ]);
  recorder.post(ref("late"), "Normal", "Logging", "Too late.");
  assert.equal(recorder.counts.unflushed, 3);
  assert.equal(warnings.length, 1);
});
