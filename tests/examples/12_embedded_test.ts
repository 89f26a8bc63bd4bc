/**
 * 12-embedded: an application of its own (not `kopf run`) starts the operator
 * with `kopf.spawnTasks()`/`kopf.runTasks()`, does its main job while the
 * operator handles objects, and stops the operator through an AbortSignal.
 */
import assert from "node:assert/strict";
import { cluster, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const EXAMPLE = `${ROOT}examples/12-embedded/example.ts`;

testWithKubectl(
  "12-embedded: the application starts the operator, does its main job next to it, and stops it cleanly",
  async () => {
    await using c = await cluster();
    assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", EXAMPLE],
      env: { KUBECONFIG: c.api.kubeconfig.path, STEPS: "3" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const out = await child.output();
    clearTimeout(timer);
    const dec = new TextDecoder();
    const stdout = dec.decode(out.stdout);
    const output = stdout + dec.decode(out.stderr);
    assert.equal(out.code, 0, output);

    // The main job runs after the operator is ready, step by step, next to the handling.
    const lines = stdout.split("\n");
    assert.equal(lines[0], "Ready to do the main job.");
    assert.match(stdout, /Doing the main job on step 0;/);
    assert.match(
      stdout,
      /Doing the main job on step 2; the operator has handled: kopf-example-1\./,
    );
    assert.match(output, /\[default\/kopf-example-1\] Handled by the embedded operator\./);
    assert.match(output, /\[default\/kopf-example-1\] Handler 'createFn' succeeded\./);
    // Stopped cleanly when the main job was done: the operator's own stop, then the application's.
    assert.match(output, /Stop-flag is raised\. Operator is stopping\./);
    assert.equal(lines.at(-2), "The operator has stopped. Exiting.");
    assert.doesNotMatch(output, /step 3/);
  },
);
