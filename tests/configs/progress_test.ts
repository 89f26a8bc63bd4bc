import assert from "node:assert/strict";
import {
  AnnotationsProgressStorage,
  formatTimestamp,
  MultiProgressStorage,
  parseTimestamp,
  type ProgressRecord,
  ProgressStorage,
  SmartProgressStorage,
  StatusProgressStorage,
} from "../../src/cogs/configs/progress.ts";
import type { Body } from "../../src/cogs/structs/bodies.ts";
import { Patch } from "../../src/cogs/structs/patches.ts";

/** Verbatim what Python Kopf writes for a handler that is delayed for a retry (json.dumps, no spaces). */
const KOPF_WRITTEN =
  '{"started":"2026-11-22T04:19:01.345317+00:00","delayed":"2026-11-22T04:20:01.345317+00:00",' +
  '"purpose":"create","retries":1,"success":false,"failure":false,"message":"not yet"}';

/** Kopf's full record (`HandlerState.for_storage()`): every field, nulls included. */
const FULL_RECORD: ProgressRecord = {
  started: "2026-11-22T04:19:01.345317+00:00",
  stopped: null,
  delayed: "2026-11-22T04:20:01.345317+00:00",
  purpose: "create",
  retries: 1,
  success: false,
  failure: false,
  message: "not yet",
  subrefs: null,
};

function bodyWith(annotations: Record<string, string>, status?: Record<string, unknown>): Body {
  return {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "ex1", namespace: "default", uid: "u1", annotations },
    spec: {},
    ...(status ? { status } : {}),
  };
}

Deno.test("AnnotationsProgressStorage reads Python Kopf's annotation verbatim", () => {
  const storage = new AnnotationsProgressStorage();
  const body = bodyWith({ "kopf.zalando.org/create_fn": KOPF_WRITTEN });
  assert.deepEqual(storage.fetch("create_fn", body), {
    started: "2026-11-22T04:19:01.345317+00:00",
    delayed: "2026-11-22T04:20:01.345317+00:00",
    purpose: "create",
    retries: 1,
    success: false,
    failure: false,
    message: "not yet",
  });
  assert.equal(storage.fetch("other_fn", body), null);
});

Deno.test("AnnotationsProgressStorage writes the same bytes as Python Kopf", () => {
  const storage = new AnnotationsProgressStorage();
  const body = bodyWith({});
  // From Kopf's full record (nulls dropped) …
  const patch = new Patch();
  storage.store("create_fn", FULL_RECORD, body, patch);
  assert.deepEqual(patch.toJSON(), {
    metadata: { annotations: { "kopf.zalando.org/create_fn": KOPF_WRITTEN } },
  });
  // … from the record read back (a round trip), and from fields given in another order.
  const fetched = storage.fetch(
    "create_fn",
    bodyWith({ "kopf.zalando.org/create_fn": KOPF_WRITTEN }),
  );
  assert.ok(fetched);
  assert.equal(storage.encode(fetched), KOPF_WRITTEN);
  const shuffled: ProgressRecord = {
    message: "not yet",
    failure: false,
    success: false,
    retries: 1,
    purpose: "create",
    delayed: "2026-11-22T04:20:01.345317+00:00",
    started: "2026-11-22T04:19:01.345317+00:00",
  };
  assert.equal(storage.encode(shuffled), KOPF_WRITTEN);
});

// Expected strings below were produced by CPython's json.dumps(..., separators=(",", ":")),
// which is what Kopf calls (ensure_ascii stays at its default, True).
Deno.test("AnnotationsProgressStorage encodes subrefs, verbose nulls and non-ASCII as Kopf", () => {
  const done: ProgressRecord = {
    started: "2026-11-22T04:19:01.345317+00:00",
    stopped: "2026-11-22T04:19:02.000001+00:00",
    delayed: null,
    purpose: "update",
    retries: 2,
    success: true,
    failure: false,
    message: null,
    subrefs: ["fn/sub1", "fn/sub2"],
  };
  assert.equal(
    new AnnotationsProgressStorage().encode(done),
    '{"started":"2026-11-22T04:19:01.345317+00:00","stopped":"2026-11-22T04:19:02.000001+00:00",' +
      '"purpose":"update","retries":2,"success":true,"failure":false,"subrefs":["fn/sub1","fn/sub2"]}',
  );
  assert.equal(
    new AnnotationsProgressStorage({ verbose: true }).encode(FULL_RECORD),
    '{"started":"2026-11-22T04:19:01.345317+00:00","stopped":null,' +
      '"delayed":"2026-11-22T04:20:01.345317+00:00","purpose":"create","retries":1,' +
      '"success":false,"failure":false,"message":"not yet","subrefs":null}',
  );
  assert.equal(
    new AnnotationsProgressStorage().encode({ message: "Ошибка: ✓" }),
    '{"message":"\\u041e\\u0448\\u0438\\u0431\\u043a\\u0430: \\u2713"}',
  );
});

Deno.test("AnnotationsProgressStorage writes v2 and v1 keys of long ids and reads either", () => {
  const storage = new AnnotationsProgressStorage();
  const id = "a_very_long_handler_identifier_for_the_kopfexamples_resource/sub1";
  const v2 = "kopf.zalando.org/a_very_long_handler_identifier_for_the_kopfexamples_reso-PBu3DQ";
  const v1 = "kopf.zalando.org/a_very_long_handler_identifier_for_the_-g9pOug";
  const patch = new Patch();
  storage.store(id, { retries: 1 }, bodyWith({}), patch);
  assert.deepEqual(Object.keys(patch.metadata.annotations), [v2, v1]);
  // An object last handled by an old (v1-only) Kopf is still read.
  assert.deepEqual(storage.fetch(id, bodyWith({ [v1]: '{"retries":3}' })), { retries: 3 });
  // v2 wins when both are present.
  assert.deepEqual(
    storage.fetch(id, bodyWith({ [v1]: '{"retries":3}', [v2]: '{"retries":4}' })),
    { retries: 4 },
  );
});

Deno.test("AnnotationsProgressStorage purges what is on the object and drops what is only in the patch", () => {
  const storage = new AnnotationsProgressStorage();
  const body = bodyWith({ "kopf.zalando.org/a": KOPF_WRITTEN });
  const patch = new Patch();
  storage.store("b", { retries: 1 }, body, patch);
  storage.purge("a", body, patch);
  storage.purge("b", body, patch);
  storage.purge("c", body, patch);
  assert.deepEqual(patch.toJSON(), { metadata: { annotations: { "kopf.zalando.org/a": null } } });
});

Deno.test("AnnotationsProgressStorage touches only when the value differs", () => {
  const storage = new AnnotationsProgressStorage();
  const stamp = "2026-11-22T04:20:01.345317+00:00";
  const patch = new Patch();
  storage.touch(bodyWith({}), patch, stamp);
  assert.deepEqual(patch.toJSON(), {
    metadata: { annotations: { "kopf.zalando.org/touch-dummy": stamp } },
  });
  const touched = bodyWith({ "kopf.zalando.org/touch-dummy": stamp });
  const same = new Patch();
  storage.touch(touched, same, stamp);
  storage.touch(bodyWith({}), same, null);
  assert.equal(same.isEmpty(), true);
  const cleared = new Patch();
  storage.touch(touched, cleared, null);
  assert.deepEqual(cleared.toJSON(), {
    metadata: { annotations: { "kopf.zalando.org/touch-dummy": null } },
  });
});

Deno.test("AnnotationsProgressStorage with a custom prefix adds the kopf-managed marker", () => {
  const storage = new AnnotationsProgressStorage({ prefix: "my-op.example.com", v1: false });
  const patch = new Patch();
  storage.store("fn", { retries: 1 }, bodyWith({}), patch);
  assert.deepEqual(patch.toJSON(), {
    metadata: {
      annotations: {
        "my-op.example.com/fn": '{"retries":1}',
        "my-op.example.com/kopf-managed": "yes",
      },
    },
  });
});

Deno.test("AnnotationsProgressStorage.clear() removes its prefix from an essence", () => {
  const storage = new AnnotationsProgressStorage();
  const essence = {
    spec: { a: 1 },
    metadata: { annotations: { "kopf.zalando.org/fn": "{}", "kopf.zalando.orgx/y": "1" } },
  };
  assert.deepEqual(storage.clear(essence), {
    spec: { a: 1 },
    metadata: { annotations: { "kopf.zalando.orgx/y": "1" } },
  });
  assert.deepEqual(
    storage.clear({ metadata: { annotations: { "kopf.zalando.org/fn": "{}" } } }),
    {},
  );
  assert.equal(Object.keys(essence.metadata.annotations).length, 2); // the input is not changed
});

Deno.test("AnnotationsProgressStorage refuses corrupted values with a clear error", () => {
  const storage = new AnnotationsProgressStorage();
  assert.throws(
    () => storage.fetch("fn", bodyWith({ "kopf.zalando.org/fn": "{not json" })),
    (error: unknown) =>
      error instanceof SyntaxError && error.message.includes("kopf.zalando.org/fn"),
  );
  assert.throws(() => storage.fetch("fn", bodyWith({ "kopf.zalando.org/fn": "[1]" })), SyntaxError);
});

Deno.test("StatusProgressStorage reads, stores full records, purges and touches under status.kopf", () => {
  const storage = new StatusProgressStorage();
  assert.deepEqual(storage.field, ["status", "kopf", "progress"]);
  assert.deepEqual(storage.touchField, ["status", "kopf", "dummy"]);
  const body = bodyWith({}, { kopf: { progress: { old_fn: { retries: 5, success: true } } } });
  assert.deepEqual(storage.fetch("old_fn", body), { retries: 5, success: true });
  assert.equal(storage.fetch("new_fn", body), null);
  assert.equal(storage.fetch("x", bodyWith({}, { kopf: { progress: "corrupted" } })), null);

  const patch = new Patch();
  storage.store("new_fn", { retries: 1, started: "2026-11-22T04:19:01.345317+00:00" }, body, patch);
  storage.purge("old_fn", body, patch);
  storage.touch(body, patch, "2026-11-22T04:20:01.345317+00:00");
  assert.deepEqual(patch.toJSON(), {
    status: {
      kopf: {
        progress: {
          new_fn: {
            started: "2026-11-22T04:19:01.345317+00:00",
            stopped: null,
            delayed: null,
            purpose: null,
            retries: 1,
            success: null,
            failure: null,
            message: null,
            subrefs: null,
          },
          old_fn: null,
        },
        dummy: "2026-11-22T04:20:01.345317+00:00",
      },
    },
  });
  assert.deepEqual(storage.clear({ spec: {}, status: { kopf: { progress: { a: {} } } } }), {
    spec: {},
  });
});

Deno.test("StatusProgressStorage formats {name} into string fields", () => {
  const storage = new StatusProgressStorage({ name: "my-op", touchField: ["status", "t"] });
  assert.deepEqual(storage.field, ["status", "my-op", "progress"]);
  assert.deepEqual(storage.touchField, ["status", "t"]);
  storage.field = "status.{name}.state";
  assert.deepEqual(storage.field, ["status", "my-op", "state"]);
});

Deno.test("SmartProgressStorage reads annotations first, then status", async () => {
  const storage = new SmartProgressStorage();
  const both = bodyWith(
    { "kopf.zalando.org/fn": KOPF_WRITTEN },
    { kopf: { progress: { fn: { retries: 9 } } } },
  );
  assert.equal((await storage.fetch("fn", both))?.retries, 1);
  const statusOnly = bodyWith({}, { kopf: { progress: { fn: { retries: 9 } } } });
  assert.deepEqual(await storage.fetch("fn", statusOnly), { retries: 9 });
  assert.equal(await storage.fetch("fn", bodyWith({})), null);
});

Deno.test("SmartProgressStorage writes annotations only and purges both places", async () => {
  const storage = new SmartProgressStorage();
  const body = bodyWith(
    { "kopf.zalando.org/fn": KOPF_WRITTEN },
    { kopf: { progress: { fn: { retries: 9 } } } },
  );
  const written = new Patch();
  await storage.store("fn2", FULL_RECORD, body, written);
  storage.touch(body, written, "2026-11-22T04:20:01.345317+00:00");
  assert.deepEqual(written.toJSON(), {
    metadata: {
      annotations: {
        "kopf.zalando.org/fn2": KOPF_WRITTEN,
        "kopf.zalando.org/touch-dummy": "2026-11-22T04:20:01.345317+00:00",
      },
    },
  });
  const purged = new Patch();
  await storage.purge("fn", body, purged);
  assert.deepEqual(purged.toJSON(), {
    metadata: { annotations: { "kopf.zalando.org/fn": null } },
    status: { kopf: { progress: { fn: null } } },
  });
  await storage.flush();
  assert.deepEqual(
    storage.clear({
      spec: { a: 1 },
      metadata: { annotations: { "kopf.zalando.org/fn": "{}" } },
      status: { kopf: { progress: {} } },
    }),
    { spec: { a: 1 } },
  );
});

Deno.test("MultiProgressStorage stores into all and reads the first found", async () => {
  const annotations = new AnnotationsProgressStorage({ prefix: "my-op.example.com", v1: false });
  const status = new StatusProgressStorage({ field: "status.my-operator" });
  const storage = new MultiProgressStorage([annotations, status]);
  const patch = new Patch();
  await storage.store("fn", { retries: 2 }, bodyWith({}), patch);
  const json = patch.toJSON() as {
    metadata: { annotations: Record<string, string> };
    status: unknown;
  };
  assert.equal(json.metadata.annotations["my-op.example.com/fn"], '{"retries":2}');
  assert.equal(
    (json.status as Record<string, Record<string, ProgressRecord>>)["my-operator"]!.fn!.retries,
    2,
  );
  const statusOnly = bodyWith({}, { "my-operator": { fn: { retries: 7 } } });
  assert.deepEqual(await storage.fetch("fn", statusOnly), { retries: 7 });
});

Deno.test("formatTimestamp() writes Python's isoformat with microseconds and +00:00", () => {
  assert.equal(
    formatTimestamp(Date.UTC(2026, 10, 22, 4, 19, 1, 345) + 0.317),
    "2026-11-22T04:19:01.345317+00:00",
  );
  assert.equal(
    formatTimestamp(new Date("2026-11-22T04:19:01Z")),
    "2026-11-22T04:19:01.000000+00:00",
  );
  assert.equal(
    formatTimestamp(new Date("1969-12-31T23:59:59.999Z")),
    "1969-12-31T23:59:59.999000+00:00",
  );
  assert.throws(() => formatTimestamp(new Date("invalid")), TypeError);
});

Deno.test("parseTimestamp() accepts Kopf's, Z, offset and naive forms", () => {
  const expected = Date.UTC(2026, 10, 22, 4, 19, 1, 345);
  assert.equal(parseTimestamp("2026-11-22T04:19:01.345317+00:00").getTime(), expected);
  assert.equal(parseTimestamp("2026-11-22T04:19:01.345317Z").getTime(), expected);
  assert.equal(parseTimestamp("2026-11-22T04:19:01.345317").getTime(), expected);
  assert.equal(parseTimestamp("2026-11-22T06:19:01.345+02:00").getTime(), expected);
  assert.equal(parseTimestamp("2026-11-22T00:19:01.345-0400").getTime(), expected);
  assert.equal(parseTimestamp("2026-11-22 04:19:01.345").getTime(), expected);
  assert.equal(parseTimestamp("2026-11-22T04:19:01+00:00").getTime(), expected - 345);
  assert.throws(() => parseTimestamp("yesterday"), TypeError);
  assert.throws(() => parseTimestamp("2026-13-45T99:00:00"), TypeError);
});

Deno.test("MultiProgressStorage answers synchronously from synchronous storages, and awaits async ones in order", async () => {
  const body = { status: { kopf: { progress: { fn: { retries: 2 } } } } };
  const sync = new SmartProgressStorage();
  assert.deepEqual(sync.fetch("fn", body), { retries: 2 }, "no promise from the built-in ones");
  const patch = new Patch();
  assert.equal(sync.purge("fn", body, patch), undefined);
  assert.deepEqual(JSON.parse(JSON.stringify(patch)), {
    status: { kopf: { progress: { fn: null } } },
  });

  const calls: string[] = [];
  class AsyncStorage extends ProgressStorage {
    readonly #inner: StatusProgressStorage;
    constructor(readonly label: string, field: string) {
      super();
      this.#inner = new StatusProgressStorage({ field });
    }
    override fetch(key: string, b: Body): Promise<ProgressRecord | null> {
      calls.push(`fetch ${this.label}`);
      return Promise.resolve(this.#inner.fetch(key, b));
    }
    override store(key: string, record: ProgressRecord, b: Body, p: Patch): Promise<void> {
      calls.push(`store ${this.label}`);
      return Promise.resolve(this.#inner.store(key, record, b, p));
    }
    override purge(key: string, b: Body, p: Patch): Promise<void> {
      return Promise.resolve(this.#inner.purge(key, b, p));
    }
    override touch(): void {}
  }
  const multi = new MultiProgressStorage([
    new StatusProgressStorage({ field: "status.first" }),
    new AsyncStorage("second", "status.second"),
    new AsyncStorage("third", "status.third"),
  ]);
  const found = multi.fetch("fn", { status: { third: { fn: { retries: 3 } } } });
  assert.ok(found instanceof Promise);
  assert.deepEqual(await found, { retries: 3 });
  const written = new Patch();
  await multi.store("fn", { retries: 1 }, {}, written);
  assert.deepEqual(calls, ["fetch second", "fetch third", "store second", "store third"]);
  const json = JSON.parse(JSON.stringify(written));
  assert.equal(json.status.first.fn.retries, 1);
  assert.equal(json.status.third.fn.retries, 1);
});
