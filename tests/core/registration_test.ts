/**
 * Handler options, declared once (src/core/intents/option_specs.ts, checked by options.ts): each
 * kind takes its own options; an option of another kind, an unknown one, or
 * a value of the wrong form is refused at registration with one line naming
 * the option (and the kinds that take it); sub-handlers inherit what the
 * table says. No API server.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { OPTIONS } from "../../src/core/intents/options.ts";
import { executeHandlers } from "../../src/core/actions/execution.ts";
import { OperatorLogger } from "../../src/core/actions/loggers.ts";
import { State } from "../../src/core/actions/progression.ts";

const fn = () => {};
const KEX = new kopf.Resource({
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
});

function refused(call: () => unknown, message: RegExp): void {
  assert.throws(call, (e: Error) => {
    assert.equal(e.name, "RegistrationError");
    assert.ok(!e.message.includes("\n"), "one line");
    assert.match(e.message, message);
    return true;
  });
}

Deno.test("options: each kind takes its own options", () => {
  const registry = new kopf.OperatorRegistry();
  const filters = { labels: { app: "x" }, annotations: {}, when: () => true };
  const errorsOptions = { errors: "permanent", timeout: 5, retries: 3, backoff: 1 } as const;
  kopf.on.create("kopfexamples", { registry, id: "c", param: 1, ...errorsOptions, ...filters }, fn);
  kopf.on.update("kopfexamples", { registry, id: "u", field: "spec.x", old: 1, new: 2 }, fn);
  kopf.on.delete("kopfexamples", { registry, id: "d", optional: true }, fn);
  kopf.on.resume("kopfexamples", { registry, id: "r", deleted: true }, fn);
  kopf.on.field("kopfexamples", { registry, id: "f", field: "spec.x", old: 0, new: 1 }, fn);
  kopf.on.event("kopfexamples", { registry, id: "e", ...filters }, fn);
  kopf.daemon("kopfexamples", {
    registry,
    id: "dm",
    initialDelay: 1,
    cancellationBackoff: 1,
    cancellationTimeout: 2,
    cancellationPolling: 3,
  }, fn);
  kopf.timer("kopfexamples", { registry, id: "t", interval: 1, sharp: true, idle: 2 }, fn);
  kopf.index("kopfexamples", { registry, id: "i", field: "spec.x" }, fn);
  kopf.on.startup({ registry, id: "s", ...errorsOptions }, fn);
  assert.equal(registry.changingHandlers(KEX).length, 5);
});

Deno.test("options: an option of another kind is refused, naming the kinds that take it", () => {
  const registry = new kopf.OperatorRegistry();
  // The issue's case: the timers' option on a create handler was accepted and did nothing.
  refused(
    () => kopf.on.create("x", { registry, interval: 60 } as never, fn),
    /^kopf\.on\.create\(\.\.\.\): the option "interval" is not for create handlers; it is for kopf\.timer\.$/,
  );
  refused(
    () => kopf.on.update("x", { registry, optional: true }, fn),
    /the option "optional" is not for update handlers; it is for kopf\.on\.delete\./,
  );
  refused(
    () => kopf.on.create("x", { registry, old: 1 }, fn),
    /"old" is not for create handlers; it is for kopf\.on\.update, kopf\.on\.field and kopf\.register\./,
  );
  refused(
    () => kopf.on.delete("x", { registry, deleted: true }, fn),
    /"deleted" is not for delete handlers; it is for kopf\.on\.resume\./,
  );
  refused(
    () => kopf.timer("x", { registry, interval: 1, cancellationTimeout: 1 } as never, fn),
    /"cancellationTimeout" is not for timers; it is for kopf\.daemon\./,
  );
  refused(
    () => kopf.daemon("x", { registry, sharp: true } as never, fn),
    /"sharp" is not for daemons; it is for kopf\.timer\./,
  );
  refused(
    () => kopf.daemon("x", { registry, initialDelay: 1, old: 1 } as never, fn),
    /"old" is not for daemons/,
  );
  refused(
    () => kopf.index("x", { registry, new: 1 } as never, fn),
    /"new" is not for indexing handlers/,
  );
  refused(
    () => kopf.on.event("x", { registry, interval: 1 } as never, fn),
    /"interval" is not for event handlers; it is for kopf\.timer\./,
  );
  refused(
    () => kopf.on.startup({ registry, labels: {} } as never, fn),
    /"labels" is not for startup handlers; it is for kopf\.on\.create, .*kopf\.register\./,
  );
});

Deno.test("options: unknown options and values of the wrong form are refused in one line", () => {
  const registry = new kopf.OperatorRegistry();
  refused(
    () => kopf.on.create("x", { registry, intervall: 60 } as never, fn),
    /unknown option "intervall"; the options of create handlers are: id, param, errors, timeout, retries, backoff, registry, labels, annotations, when, field, value\.$/,
  );
  refused(
    () => kopf.on.create("x", { registry, retries: 1.5 }, fn),
    /retries must be a whole number of 0 or more, not 1\.5\./,
  );
  refused(
    () => kopf.on.create("x", { registry, errors: "loud" } as never, fn),
    /errors must be "temporary", "permanent" or "ignored", not "loud"\./,
  );
  refused(
    () => kopf.on.create("x", { registry, when: true } as never, fn),
    /when must be a function, not true\./,
  );
  refused(
    () => kopf.on.create("x", { registry: {} } as never, fn),
    /registry must be a kopf\.OperatorRegistry/,
  );
  refused(
    () => kopf.timer("x", { registry, interval: -1 }, fn),
    /interval must be a number of seconds above 0/,
  );
  // A timer of interval 0 ran in a hot loop (275 MB of log in 7 s, Ctrl-C ignored).
  refused(
    () => kopf.timer("x", { registry, interval: 0 }, fn),
    /^kopf\.timer\(\.\.\.\): interval must be a number of seconds above 0 \(a timer of interval 0 would run without a pause\), not 0\.$/,
  );
});

Deno.test("options: every option names at least one kind, and resource objects are not options", () => {
  for (const [name, spec] of Object.entries(OPTIONS)) assert.ok(spec.kinds.length, name);
  const registry = new kopf.OperatorRegistry();
  // A resource given as an object is told from options by its keys.
  kopf.on.create({ group: "kopf.dev", plural: "kopfexamples" }, { registry, id: "obj" }, fn);
  assert.deepEqual(registry.changingHandlers(KEX).map((h) => h.id), ["obj"]);
});

Deno.test("options: sub-handlers take their own options and inherit param from the parent", async () => {
  // Outside of a running handler there is no parent: one line says so.
  refused(() => kopf.register(fn), /work only inside a running resource-changing handler/);
  const params = new Map<string, unknown>();
  let refusal = "";
  const parent = {
    id: "parent",
    param: "from-parent",
    errors: undefined,
    timeout: undefined,
    retries: undefined,
    backoff: undefined,
    fn: () => {
      kopf.register(function inherits() {});
      kopf.register(function owns() {}, { param: "own", retries: 2 });
      try {
        kopf.register(function bad() {}, { interval: 1 } as never);
      } catch (e) {
        refusal = (e as Error).message;
      }
    },
  };
  await executeHandlers([parent], {
    state: new State("create"),
    kind: "changing",
    subhandlers: true,
    defaultErrors: "temporary",
    logger: new OperatorLogger(() => {}),
    context: (handler) => {
      params.set(handler.id, handler.param);
      return {};
    },
  });
  assert.deepEqual(Object.fromEntries(params), {
    parent: "from-parent",
    "parent/inherits": "from-parent",
    "parent/owns": "own",
  });
  assert.equal(
    refusal,
    'kopf.register(...): the option "interval" is not for sub-handlers; it is for kopf.timer.',
  );
});

Deno.test("options: bad filters and NaN are refused at registration with these exact lines", () => {
  const registry = new kopf.OperatorRegistry();
  const table: Array<[() => unknown, string]> = [
    [
      () => kopf.on.create("x", { registry, labels: { "bad key!": "x" } }, fn),
      'kopf.on.create(...): labels has the key "bad key!", which is not a label key; use at most ' +
      '63 letters, digits, "-", "_" and "." that start and end with a letter or digit, optionally ' +
      'prefixed with a DNS subdomain and "/" (e.g. "app", "example.com/app").',
    ],
    [
      () => kopf.on.event("x", { registry, annotations: { "Example.com/x": kopf.PRESENT } }, fn),
      'kopf.on.event(...): annotations has the key "Example.com/x", which is not an annotation ' +
      'key; use at most 63 letters, digits, "-", "_" and "." that start and end with a letter or ' +
      'digit, optionally prefixed with a DNS subdomain and "/" (e.g. "app", "example.com/app").',
    ],
    [
      () => kopf.on.update("x", { registry, labels: { app: 1 } }, fn),
      'kopf.on.update(...): labels["app"] must be a string, kopf.PRESENT, kopf.ABSENT or a ' +
      "function (value) => boolean, not 1.",
    ],
    [
      () => kopf.daemon("x", { registry, annotations: { note: null } as never }, fn),
      'kopf.daemon(...): annotations["note"] must be a string, kopf.PRESENT, kopf.ABSENT or a ' +
      "function (value) => boolean, not null.",
    ],
    [
      () => kopf.on.create("x", { registry, labels: { app: "app in (" } }, fn),
      'kopf.on.create(...): labels["app"] is "app in (", which no label can have; a label value ' +
      'is at most 63 letters, digits, "-", "_" and "." that start and end with a letter or digit ' +
      "(or empty).",
    ],
    [
      () => kopf.on.create("x", { registry, labels: { "app in (": kopf.PRESENT } }, fn),
      'kopf.on.create(...): labels has the key "app in (", which is not a label key; use at most ' +
      '63 letters, digits, "-", "_" and "." that start and end with a letter or digit, optionally ' +
      'prefixed with a DNS subdomain and "/" (e.g. "app", "example.com/app").',
    ],
    [
      () => kopf.on.field("x", { registry, field: "spec.x", value: 1, old: 0 }, fn),
      "kopf.on.field(...): value cannot be combined with old/new; use value (either side of the " +
      "change) or old/new (each side), not both.",
    ],
    [
      () => kopf.on.update("x", { registry, field: "spec.x", value: 1, new: 2 }, fn),
      "kopf.on.update(...): value cannot be combined with old/new; use value (either side of the " +
      "change) or old/new (each side), not both.",
    ],
    [
      () => kopf.timer("x", { registry, interval: NaN }, fn),
      "kopf.timer(...): interval must be a number of seconds above 0 (a timer of interval 0 would run without a pause), not NaN.",
    ],
    [
      () => kopf.timer("x", { registry, interval: 1, idle: Number("10s") }, fn),
      "kopf.timer(...): idle must be a number of 0 or more (seconds), not NaN.",
    ],
    [
      () => kopf.daemon("x", { registry, initialDelay: NaN }, fn),
      "kopf.daemon(...): initialDelay must be a number of 0 or more (seconds), not NaN.",
    ],
    [
      () => kopf.on.create("x", { registry, backoff: NaN }, fn),
      "kopf.on.create(...): backoff must be a number of 0 or more (seconds), not NaN.",
    ],
    [
      () => kopf.on.create("x", { registry, timeout: Infinity }, fn),
      "kopf.on.create(...): timeout must be a number of 0 or more (seconds), not Infinity.",
    ],
  ];
  for (const [call, line] of table) {
    assert.throws(call, (e: Error) => {
      assert.equal(e.name, "RegistrationError");
      assert.equal(e.message, line);
      return true;
    });
  }
  // Valid filters pass: prefixed keys, empty values, markers, callbacks; annotations take any text.
  kopf.on.create("x", {
    registry,
    id: "ok",
    labels: { "example.com/app": "web-1", tier: "", x: kopf.ABSENT, y: (v: unknown) => !!v },
    annotations: { "example.com/note": "any text (even this)" },
  }, fn);
  // A TemporaryError with a NaN delay says so (thrown in a handler, it is an arbitrary error).
  assert.throws(
    () => new kopf.TemporaryError("x", { delay: NaN }),
    /^TypeError: TemporaryError: delay must be a number of 0 or more \(seconds\) or null, not NaN\.$/,
  );
});

Deno.test("registry: reconciles() is cached per resource and renewed by a later registration", () => {
  const registry = new kopf.OperatorRegistry();
  const examples = new kopf.Resource({ group: "kopf.dev", version: "v1", plural: "kopfexamples" });
  assert.equal(registry.reconciles(examples), false);
  assert.equal(registry.reconciles(examples), false, "the cached answer");
  kopf.on.reconcile("kopfexamples", { registry, owns: ["pods"] }, function sync() {});
  assert.equal(registry.reconciles(examples), true, "a new reconciler is seen at once");
  const pods = new kopf.Resource({ group: "", version: "v1", plural: "pods" });
  assert.equal(registry.reconciles(pods), false, "owned children are not parents");
});

Deno.test("registry: indexersOf() and reconcilersOf() are cached per resource, frozen, renewed by a later registration", () => {
  const registry = new kopf.OperatorRegistry();
  const examples = new kopf.Resource({ group: "kopf.dev", version: "v1", plural: "kopfexamples" });
  const none = registry.indexersOf(examples);
  assert.equal(none.length, 0);
  assert.equal(registry.indexersOf(examples), none, "the cached array");
  assert.equal(registry.reconcilersOf(examples).length, 0);
  kopf.index("kopfexamples", { registry, id: "byName" }, ({ name }) => name);
  const indexers = registry.indexersOf(examples);
  assert.deepEqual(indexers.map((h) => h.id), ["byName"], "a new indexer is seen at once");
  assert.ok(Object.isFrozen(indexers));
  assert.equal(registry.indexersOf(examples), indexers);
  kopf.on.reconcile("kopfexamples", { registry, id: "sync", owns: ["pods"] }, function sync() {});
  const reconcilers = registry.reconcilersOf(examples);
  assert.deepEqual(reconcilers.map((h) => h.id), ["sync"], "a new reconciler is seen at once");
  assert.ok(Object.isFrozen(reconcilers));
  // The public lists stay fresh, changeable arrays.
  const list = registry.indexingHandlers(examples);
  assert.ok(!Object.isFrozen(list) && list !== registry.indexingHandlers(examples));
  assert.ok(!Object.isFrozen(registry.reconcilingHandlers(examples)));
});

// Issue 24: `{ field: "spec..x[" }` was accepted and the handler never fired.
Deno.test("options: a malformed field path is refused in one line naming the handler, the path and the fix", () => {
  const registry = new kopf.OperatorRegistry();
  const onX = () => {};
  refused(
    () => kopf.on.field("x", { registry, field: "spec..x[" }, onX),
    /^kopf\.on\.field\(\.\.\.\): field "spec\.\.x\[" of the handler 'onX' has an empty key \(two dots in a row\); write the keys joined by single dots \(e\.g\. "spec\.size"\), or give a list of keys \(e\.g\. \["spec", "size"\]\) when a key itself holds a dot or a bracket\.$/,
  );
  refused(
    () => kopf.on.update("x", { registry, id: "sized", field: "spec.items[0]" }, fn),
    /field "spec\.items\[0\]" of the handler 'sized' has a bracket, but field paths have no indices/,
  );
  refused(() => kopf.on.field("x", { registry, field: ".spec" }, onX), /starts with a dot/);
  refused(() => kopf.on.field("x", { registry, field: "spec." }, onX), /ends with a dot/);
  refused(() => kopf.on.field("x", { registry, field: "spec. x" }, onX), /spaces around a key/);
  refused(
    () => kopf.daemon("x", { registry, field: ["spec", ""] }, onX),
    /field \["spec",""\] of the handler 'onX' has an empty key at position 2; every key of the list must be a non-empty string/,
  );
  refused(
    () => kopf.on.field("x", { registry, field: [] as string[] }, onX),
    /field \[\] of the handler 'onX' is an empty list; give at least one key/,
  );
  // Well-formed paths stay accepted, including keys with dots or brackets given as a list.
  kopf.on.field("x", { registry, field: "spec.size" }, onX);
  kopf.on.field("x", { registry, id: "ann", field: ["metadata", "annotations", "a.b/c[0]"] }, onX);
});
