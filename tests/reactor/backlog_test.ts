/**
 * The worker limit of a backlogged API, end to end: with no `batching.workerLimit` set, cycles
 * beyond `networking.maxConcurrentRequests` wait as queued events once requests queue for a slot
 * (core/reactor/backlog.ts) — and the limit lifts when the API is calm again, so objects whose
 * handlers are slow do not hold up the others once the API keeps up again.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { cluster, delay, until } from "./_setup.ts";

Deno.test("backlog: cycles wait while the API is backlogged and go on when it is not, though slow handlers hold more slots than the limit", async () => {
  // Every request takes 30 ms more: requests queue behind the operator's 2 slots.
  await using c = await cluster({ faults: { latencyMs: 30 } });
  const registry = new kopf.OperatorRegistry();
  const calls = new Map<string, number>();
  let release!: () => void;
  const slow = new Promise<void>((resolve) => (release = resolve));
  const started = new Set<string>();
  let api: kopf.KubeClient | undefined;
  kopf.on.create("kopfexamples", { registry }, async function createFn(ctx) {
    const name = ctx.name!;
    calls.set(name, (calls.get(name) ?? 0) + 1);
    if (name.startsWith("slow-")) {
      api = ctx.api;
      started.add(name);
      await slow;
    }
    return { done: true };
  });
  const settings = new kopf.OperatorSettings();
  settings.networking.maxConcurrentRequests = 2; // a backlog admits 2 cycles
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    settings,
    kubeconfig: c.api.kubeconfig.path,
  });
  const slowNames = Array.from({ length: 6 }, (_, i) => `slow-${i}`);
  const fastNames = Array.from({ length: 10 }, (_, i) => `fast-${i}`);
  const done = async (names: string[]) => {
    for (const name of names) {
      if ((await c.getKex("default", name))?.status?.createFn?.done !== true) return false;
    }
    return true;
  };
  try {
    // Six slow handlers, started one after another (no backlog): 6 cycles in processing, more
    // than the 2 a backlog admits, none of them ending until the test says so.
    for (const name of slowNames) {
      await c.createKex("default", name);
      await until(() => started.has(name), `the handler of ${name}`, 10);
    }
    // A backlog of the operator's own client (40 requests behind 2 slots: ~0.6 s), and objects
    // created meanwhile: their cycles wait for a slot of the limit — and must go on when the
    // backlog is gone, not when a slow handler ends (none does until the end).
    const backlog = Array.from({ length: 40 }, () => api!.list("configmaps"));
    await Promise.all(fastNames.map((name) => c.createKex("default", name)));
    await Promise.all(backlog);
    await until(() => done(fastNames), "the results while the slow handlers still run", 10);
    assert.equal(started.size, 6);
    release();
    await until(() => done(slowNames), "the slow handlers' results", 10);
    await delay(300); // a repeated handling would show up here
    for (const name of [...slowNames, ...fastNames]) {
      assert.equal(calls.get(name), 1, `${name} handled ${calls.get(name)} times`);
    }
  } finally {
    release();
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
});
