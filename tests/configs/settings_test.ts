import assert from "node:assert/strict";
import {
  AnnotationsDiffBaseStorage,
  StatusDiffBaseStorage,
} from "../../src/cogs/configs/diffbase.ts";
import {
  AnnotationsProgressStorage,
  SmartProgressStorage,
} from "../../src/cogs/configs/progress.ts";
import { OperatorSettings } from "../../src/cogs/configs/settings.ts";

Deno.test("OperatorSettings has Kopf's defaults", () => {
  const s = new OperatorSettings();
  assert.equal(s.process.ultimateExitingTimeout, 600);

  assert.equal(s.posting.enabled, true);
  assert.equal(s.posting.loggers, true);
  assert.equal(s.posting.level, "info");
  assert.equal(s.posting.reportingComponent, "kopf");
  assert.equal(s.posting.reportingInstance, "dev");
  assert.equal(s.posting.eventNamePrefix, "kopf-event-");

  assert.equal(s.peering.name, "default");
  assert.equal(s.peering.stealth, false);
  assert.equal(s.peering.priority, 0);
  assert.equal(s.peering.lifetime, 60);
  assert.equal(s.peering.mandatory, false);
  assert.equal(s.peering.standalone, false);
  assert.equal(s.peering.clusterwide, false);
  assert.equal(s.peering.namespaced, true);

  assert.equal(s.watching.serverTimeout, null);
  assert.equal(s.watching.clientTimeout, null);
  assert.equal(s.watching.connectTimeout, null);
  assert.equal(s.watching.reconnectBackoff, 0.1);
  assert.equal(s.watching.inactivityTimeout, 70);

  assert.equal(s.batching.workerLimit, null);
  assert.equal(s.batching.idleTimeout, 5);
  assert.equal(s.batching.batchWindow, 0.1);
  assert.equal(s.batching.exitTimeout, 2);
  assert.deepEqual(
    [...s.batching.errorDelays],
    [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610],
  );
  assert.equal(s.queueing, s.batching);

  assert.equal(s.scanning.disabled, false);
  assert.equal(s.admission.server, null);
  assert.equal(s.admission.managed, null);
  assert.equal(s.execution.maxWorkers, null);
  assert.equal(s.execution.defaultBackoff, 60);

  assert.equal(s.background.cancellationPolling, 60);
  assert.equal(s.background.instantExitTimeout, null);
  assert.equal(s.background.instantExitZeroTimeCycles, 10);

  assert.equal(s.networking.requestTimeout, 300);
  assert.equal(s.networking.connectTimeout, null);
  assert.deepEqual([...s.networking.errorBackoffs], [1, 1, 2, 3, 5, 8, 13, 21]);
  assert.equal(s.networking.enforceRetryAfter, false);

  assert.equal(s.persistence.finalizer, "kopf.zalando.org/KopfFinalizerMarker");
  assert.ok(s.persistence.progressStorage instanceof SmartProgressStorage);
  assert.ok(s.persistence.diffbaseStorage instanceof AnnotationsDiffBaseStorage);
  assert.equal(s.persistence.consistencyTimeout, 5);
});

Deno.test("OperatorSettings instances do not share sections or storages", () => {
  const a = new OperatorSettings();
  const b = new OperatorSettings();
  a.posting.level = "error";
  assert.equal(b.posting.level, "info");
  assert.notEqual(a.persistence.progressStorage, b.persistence.progressStorage);
});

Deno.test("settings accept valid assignments", () => {
  const s = new OperatorSettings();
  s.posting.level = "WARNING" as "warning";
  assert.equal(s.posting.level, "warning");
  s.watching.serverTimeout = 600;
  s.watching.inactivityTimeout = null;
  s.peering.namespaced = false;
  assert.equal(s.peering.clusterwide, true);
  s.peering.priority = -5;
  s.networking.errorBackoffs = 2;
  assert.deepEqual([...s.networking.errorBackoffs], [2]);
  s.batching.errorDelays = [];
  assert.deepEqual([...s.batching.errorDelays], []);
  const infinite = {
    *[Symbol.iterator]() {
      while (true) yield 10;
    },
  };
  s.networking.errorBackoffs = infinite;
  assert.equal(s.networking.errorBackoffs, infinite);
  s.persistence.progressStorage = new AnnotationsProgressStorage({ prefix: "my-op.example.com" });
  s.persistence.diffbaseStorage = new StatusDiffBaseStorage({ field: "status.diff-base" });
  s.execution.maxWorkers = 20;
  s.admission.managed = "auto.kopf.dev";
  assert.equal(s.admission.managed, "auto.kopf.dev");
});

Deno.test("settings reject invalid assignments with a one-line TypeError naming the setting", () => {
  const s = new OperatorSettings();
  const cases: [() => void, string][] = [
    [() => (s.watching.reconnectBackoff = -1), "settings.watching.reconnectBackoff"],
    [() => (s.networking.requestTimeout = NaN), "settings.networking.requestTimeout"],
    [() => (s.batching.idleTimeout = "5" as unknown as number), "settings.batching.idleTimeout"],
    [() => (s.posting.level = "verbose" as "info"), "settings.posting.level"],
    [() => (s.posting.enabled = 1 as unknown as boolean), "settings.posting.enabled"],
    [() => (s.peering.lifetime = 0), "settings.peering.lifetime"],
    [() => (s.peering.priority = 1.5), "settings.peering.priority"],
    [() => (s.execution.maxWorkers = 0), "settings.execution.maxWorkers"],
    [() => (s.batching.errorDelays = [1, -2]), "settings.batching.errorDelays[1]"],
    [() => (s.persistence.finalizer = ""), "settings.persistence.finalizer"],
    [
      () => (s.persistence.progressStorage = {} as unknown as SmartProgressStorage),
      "settings.persistence.progressStorage",
    ],
  ];
  for (const [assign, name] of cases) {
    assert.throws(assign, (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.ok(error.message.startsWith(`${name} must be `), error.message);
      assert.ok(!error.message.includes("\n"));
      return true;
    });
  }
  assert.equal(s.watching.reconnectBackoff, 0.1); // unchanged after a refused assignment
});
