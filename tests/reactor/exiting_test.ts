/**
 * `settings.process.ultimateExitingTimeout`: the absolute cap on the
 * operator's exit, as in Kopf — after it, the operator exits whatever still
 * runs (here, a cleanup handler that never returns), with one warning line.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { FakeClock } from "../../testing.ts";
import { cluster, until } from "./_setup.ts";

Deno.test("exiting: the operator exits after process.ultimateExitingTimeout, whatever still runs", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  let cleanupStarted = false;
  let release!: () => void;
  const hung = new Promise<void>((resolve) => (release = resolve));
  kopf.on.cleanup({ registry }, async function stuck() {
    cleanupStarted = true;
    await hung; // ignores the exit
  });
  const settings = new kopf.OperatorSettings();
  settings.process.ultimateExitingTimeout = 3;
  const clock = new FakeClock();
  const lines: string[] = [];
  const stop = new AbortController();
  let ready = false;
  let exited = false;
  const running = kopf.operator({
    registry,
    settings,
    clock,
    kubeconfig: c.api.kubeconfig.path,
    logging: { write: (l) => lines.push(l), format: "plain" },
    signal: stop.signal,
    onReady: () => (ready = true),
  }).finally(() => (exited = true));
  try {
    await until(() => ready, "the operator is ready");
    stop.abort();
    await until(() => cleanupStarted, "the cleanup handler runs");
    const t0 = clock.now();
    assert.ok(await clock.advanceUntil(() => exited, 10, 0.1), "the operator exits");
    await running;
    const waited = (clock.now() - t0) / 1000;
    assert.ok(waited >= 2.9 && waited <= 3.2, `exited after ${waited}s of fake time`);
    const warnings = lines.filter((l) => l.includes("ultimateExitingTimeout"));
    assert.deepEqual(warnings, [
      "The operator did not stop within process.ultimateExitingTimeout (3s): exiting anyway, leaving the cleanup handlers running.",
    ]);
  } finally {
    release();
    stop.abort();
    await running;
  }
});

Deno.test("exiting: a prompt exit says nothing of the ultimate timeout", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.cleanup({ registry }, function quick() {});
  const settings = new kopf.OperatorSettings();
  settings.process.ultimateExitingTimeout = 0.5;
  const lines: string[] = [];
  const stop = new AbortController();
  const running = kopf.operator({
    registry,
    settings,
    kubeconfig: c.api.kubeconfig.path,
    logging: { write: (l) => lines.push(l), format: "plain" },
    signal: stop.signal,
    onReady: () => stop.abort(),
  });
  await running;
  assert.ok(lines.includes("Stop-flag is raised. Operator is stopping."), lines.join("\n"));
  assert.ok(!lines.some((l) => l.includes("ultimateExitingTimeout")), lines.join("\n"));
});
