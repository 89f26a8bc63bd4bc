import assert from "node:assert/strict";
import { OperatorProcess } from "./_process.ts";
import { cluster, eventually, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const EXAMPLE = `${ROOT}examples/06-peering/example.ts`;

testWithKubectl(
  "06-peering: same priority — both warn and freeze; --dev pauses the other; freeze/resume by hand",
  async () => {
    await using c = await cluster();
    assert.equal((await c.kubectl("apply", "-f", `${ROOT}peering.yaml`)).code, 0);
    const objects = await c.kubectl("apply", "-f", `${ROOT}examples/06-peering/default.yaml`);
    assert.equal(objects.code, 0, objects.stderr);
    const env = { KUBECONFIG: c.api.kubeconfig.path, NO_COLOR: "1" };
    const run = (id: string, ...flags: string[]) =>
      new OperatorProcess(["run", "-A", "--verbose", ...flags, EXAMPLE], { ...env, POD_ID: id });
    const a = run("operator-a");
    let b = run("operator-b");
    try {
      // Shells A and B: the same priority — both warn about the other, and both freeze.
      for (const [me, other] of [[a, "operator-b"], [b, "operator-a"]] as const) {
        await me.waitFor(
          `[WARNING ] Possibly conflicting operators with the same priority: [<Peer ${other}: priority=0, lifetime=60`,
          30,
        );
        await me.waitFor("[WARNING ] Pausing all operators, including self: [<Peer");
      }
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await new Promise((r) => setTimeout(r, 1000));
      assert.doesNotMatch(a.output + b.output, /Handler 'create_fn' succeeded/, "nobody handles");

      // B stops: A resumes and handles what was created meanwhile.
      assert.equal(await b.stop("SIGINT"), 0);
      await a.waitFor("Resuming operations after the pause.");
      await a.waitFor("[default/kopf-example-1] Handler 'create_fn' succeeded.");

      // B again, with --dev (the priority 666): A pauses in favour of B until B exits.
      b = run("operator-b", "--dev");
      await a.waitFor(
        "Pausing operations in favour of [<Peer operator-b: priority=666, lifetime=60",
      );
      await b.waitFor("Keep-alive in 'default' cluster-wide: ok.");
      assert.doesNotMatch(b.output, /Pausing/, "the highest priority runs");
      assert.equal(await b.stop("SIGINT"), 0);
      await eventually(
        "A resumed twice",
        () => a.output.split("Resuming operations").length - 1 === 2,
      );

      // The same by hand: `kopf freeze`, then `kopf resume`.
      const kopf = async (...args: string[]) => {
        const out = await new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", `${ROOT}cli.ts`, ...args],
          env,
          stdout: "piped",
          stderr: "piped",
        }).output();
        return { code: out.code, text: new TextDecoder().decode(out.stderr) };
      };
      const frozen = await kopf("freeze", "-A", "--lifetime", "60", "--priority", "100");
      assert.equal(frozen.code, 0, frozen.text);
      await a.waitFor(": priority=100, lifetime=60, lastseen='");
      const resumed = await kopf("resume", "-A");
      assert.equal(resumed.code, 0, resumed.text);
      await eventually(
        "A resumed again",
        () => a.output.split("Resuming operations").length - 1 === 3,
      );
    } finally {
      await b.stop();
      await a.stop();
    }
    assert.equal(
      a.output.split("Handler 'create_fn' succeeded.").length - 1,
      1,
      "A handled it once",
    );
    const peers = await c.kubectl("get", "clusterkopfpeering.kopf.dev", "default", "-o", "json");
    assert.deepEqual(JSON.parse(peers.stdout).status ?? {}, {}, "everybody left");
  },
);
