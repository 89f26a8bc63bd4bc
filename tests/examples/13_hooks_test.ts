/**
 * 13-hooks: startup (with retries, the memo and the settings), login (a
 * custom handler returning the kubeconfig's credentials), probes (the
 * liveness endpoint's JSON), and cleanup at the operator's stop.
 *
 * @module
 */
import assert from "node:assert/strict";
import { OperatorSettings } from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { type Cluster, cluster, ROOT } from "./_setup.ts";
import { servedAt } from "../engines/_metrics.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const EXAMPLE = `${ROOT}examples/13-hooks/example.ts`;

async function events(c: Cluster, name: string): Promise<{ type: string; message: string }[]> {
  const got = await c.kubectl(
    "get",
    "events",
    "--field-selector",
    `involvedObject.name=${name}`,
    "-o",
    "json",
  );
  assert.equal(got.code, 0, got.stderr);
  return JSON.parse(got.stdout).items;
}

testWithKubectl("13-hooks: startup, login, probes, and cleanup handlers", async () => {
  await using c = await cluster();
  // The kubeconfig option: the example's login handler gets it from kopf.loginWithKubeconfig().
  // The liveness port is the system's pick, read back from the log.
  const liveness = "--liveness=http://127.0.0.1:0/healthz";
  // The probe results are cached for 10 s by default (tests/engines/probing_test.ts): here for
  // 0.2 s, so that the pod's task shows without waiting the default period out.
  const settings = new OperatorSettings();
  settings.probing.cachePeriod = 0.2;
  const runner = await KopfRunner.start(["run", "-A", "--verbose", liveness, EXAMPLE], {
    kubeconfig: c.api.kubeconfig.path,
    settings,
  });
  const url = servedAt(runner.output)!;
  try {
    assert.ok(url, runner.output);
    // Startup: all handlers have finished before the operator became ready, the retried one too.
    const startup = runner.output;
    assert.match(startup, /Initialising the pod-tasks registry\.\.\./);
    assert.match(startup, /Activity 'startupFnSimple' succeeded\./);
    assert.equal(startup.match(/Activity 'startupFnRetried' failed temporarily/g)?.length, 3);
    assert.match(startup, /Going to succeed in 1 more attempt\(s\)\./);
    assert.match(startup, /Starting retried\.\.\./);
    assert.match(startup, /Activity 'startupFnRetried' succeeded\./);
    // Login: by the custom handler, after the startup.
    assert.match(startup, /Logging in in 0\.5s\.\.\./);
    assert.match(startup, /Activity 'loginFn' succeeded\./);
    assert.ok(startup.indexOf("Starting retried...") < startup.indexOf("Logging in in 0.5s..."));
    assert.ok(
      startup.indexOf("Activity 'loginFn' succeeded.") <
        startup.indexOf("Initial authentication has finished."),
    );

    // Probes: the liveness endpoint answers with the probe handlers' results.
    const empty = await (await fetch(url)).json();
    assert.equal(empty.tasksCount, 0);
    assert.deepEqual(empty.monitoredObjects, {});
    assert.ok(!Number.isNaN(Date.parse(empty.now)), `a timestamp: ${empty.now}`);

    const created = await c.kubectl("run", "pod1", "--image=busybox");
    assert.equal(created.code, 0, created.stderr);
    await runner.waitFor("[default/pod1] A background task is started.");
    await runner.waitFor("[default/pod1] Served by the background task.", 10);
    // The probe results are cached (for 0.2 s here): poll until the new state shows.
    let health: { tasksCount: number; monitoredObjects: Record<string, string[]> } = empty;
    const deadline = Date.now() + 15_000;
    while (health.tasksCount !== 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      health = await (await fetch(url)).json();
    }
    assert.equal(health.tasksCount, 1);
    assert.deepEqual(health.monitoredObjects, { default: ["pod1"] });
    assert.equal((await fetch(url.replace("/healthz", "/other"))).status, 404);
    await (await fetch(url.replace("/healthz", "/other"))).body?.cancel();

    // A pod that lives through the stop: its task is stopped by the cleanup handler.
    assert.equal((await c.kubectl("run", "pod2", "--image=busybox")).code, 0);
    await runner.waitFor("[default/pod2] A background task is started.");

    // The memo's settings: only warnings of handlers become events (posting.level = "warning").
    assert.equal((await c.kubectl("delete", "pod", "pod1", "--wait=false")).code, 0);
    await runner.waitFor("[default/pod1] The pod is gone: its background task is stopped.");
    await runner.waitFor("[default/pod1] Serving is finished by request.");
    let posted: { type: string; message: string }[] = [];
    const posting = Date.now() + 10_000;
    while (!posted.length && Date.now() < posting) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      posted = await events(c, "pod1");
    }
    assert.deepEqual(posted.map((e) => [e.type, e.message]), [
      ["Warning", "The pod is gone: its background task is stopped."],
    ]);
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.equal(runner.exception, undefined);

  // Cleanup: at the stop, after the watching has ended.
  const output = runner.output;
  assert.match(output, /Cleaning up\.\.\./);
  assert.match(output, /All pod-tasks are requested to stop\.\.\./);
  assert.match(output, /\[default\/pod2\] Serving is finished by request\./);
  assert.match(output, /Activity 'cleanupFn' succeeded\./);
  assert.ok(
    output.indexOf("Stop-flag is raised. Operator is stopping.") < output.indexOf("Cleaning up..."),
  );
  // The liveness endpoint is closed with the operator.
  await assert.rejects(() => fetch(url));
});
