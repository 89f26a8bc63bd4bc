/**
 * Cause detection (`detectChangingCause`), every branch, as Kopf decides it:
 * gone, free, delete, create, resume, noop, update (with resuming mixed in
 * during the first cycle of an object noticed by the initial listing, creation included).
 */

import assert from "node:assert/strict";
import { diff } from "../../src/cogs/structs/diffs.ts";
import {
  detectChangingCause,
  isDeletionBlocked,
  isDeletionOngoing,
} from "../../src/core/intents/causes.ts";
import type { AnyObject } from "../../src/core/intents/handlers.ts";

const F = "kopf.zalando.org/KopfFinalizerMarker";
const DELETING = "2026-01-01T00:00:00Z";

function detect(
  opts: {
    eventType?: string | null;
    meta?: AnyObject;
    old?: unknown;
    new?: unknown;
    initial?: boolean;
    finalizer?: string;
  },
) {
  const old = opts.old;
  const now = opts.new ?? { spec: { a: 1 } };
  return detectChangingCause({
    eventType: opts.eventType === undefined ? "MODIFIED" : opts.eventType,
    body: { metadata: opts.meta ?? {}, spec: { a: 1 } },
    finalizer: opts.finalizer ?? F,
    old,
    new: now,
    diff: diff(old, now),
    initial: opts.initial ?? false,
  });
}

Deno.test("detectChangingCause(): a DELETED event is 'gone', whatever the object says", () => {
  for (const initial of [true, false]) {
    const cause = detect({
      eventType: "DELETED",
      meta: { deletionTimestamp: DELETING, finalizers: [F] },
      initial,
    });
    assert.deepEqual(cause, { reason: "gone", initial });
  }
});

Deno.test("detectChangingCause(): a deleting object with our finalizer is 'delete' (before create/update)", () => {
  const meta = { deletionTimestamp: DELETING, finalizers: ["example.com/x", F] };
  assert.equal(detect({ meta }).reason, "delete");
  assert.equal(detect({ meta, old: undefined }).reason, "delete", "even if never handled");
  assert.equal(detect({ meta, old: { spec: { a: 0 } } }).reason, "delete", "even if changed");
  assert.deepEqual(detect({ meta, initial: true }), { reason: "delete", initial: true });
});

Deno.test("detectChangingCause(): a deleting object without our finalizer is 'free'", () => {
  assert.equal(detect({ meta: { deletionTimestamp: DELETING } }).reason, "free");
  assert.equal(
    detect({ meta: { deletionTimestamp: DELETING, finalizers: ["example.com/x"] } }).reason,
    "free",
  );
  assert.equal(
    detect({ meta: { deletionTimestamp: DELETING, finalizers: [F] }, finalizer: "my/fin" })
      .reason,
    "free",
    "only the configured finalizer counts",
  );
});

Deno.test("detectChangingCause(): no diff base is 'create'; resuming joins when noticed by the initial listing", () => {
  for (const eventType of [null, "ADDED", "MODIFIED"]) {
    for (const initial of [true, false]) {
      assert.deepEqual(detect({ eventType, old: undefined, initial }), {
        reason: "create",
        initial,
      });
    }
  }
  assert.equal(detect({ old: null }).reason, "create");
});

Deno.test("detectChangingCause(): no changes are 'resume' in the first cycle, 'noop' later", () => {
  const same = { spec: { a: 1 } };
  assert.deepEqual(detect({ old: same, new: same, initial: true }), {
    reason: "resume",
    initial: true,
  });
  assert.deepEqual(detect({ old: same, new: same, initial: false }), {
    reason: "noop",
    initial: false,
  });
});

Deno.test("detectChangingCause(): changes are 'update', with resuming mixed in during the first cycle", () => {
  const old = { spec: { a: 0 } };
  assert.deepEqual(detect({ old, initial: true }), { reason: "update", initial: true });
  assert.deepEqual(detect({ old, initial: false }), { reason: "update", initial: false });
});

Deno.test("isDeletionOngoing() and isDeletionBlocked() read the deletion mark and the finalizers", () => {
  assert.equal(isDeletionOngoing({ metadata: {} }), false);
  assert.equal(isDeletionOngoing({}), false);
  assert.equal(isDeletionOngoing({ metadata: { deletionTimestamp: DELETING } }), true);
  assert.equal(isDeletionBlocked({ metadata: { finalizers: [F] } }, F), true);
  assert.equal(isDeletionBlocked({ metadata: { finalizers: ["x"] } }, F), false);
  assert.equal(isDeletionBlocked({ metadata: {} }, F), false);
  assert.equal(isDeletionBlocked({ metadata: { finalizers: F } }, F), false, "not a list");
});
