/**
 * Peering from the command line: `kopf freeze`/`kopf resume` (what they write, and one line and
 * a non-zero exit for bad input), and `kopf run`'s peering modes on the embedded API server —
 * automatic (the `default` object if found, else standalone with Kopf's line), mandatory
 * (`--peering NAME`: paused until the object exists), `--dev` (priority 666, still peering),
 * the namespaced `KopfPeering` for `-n`, and the legacy zalando.org group.
 */

import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { applyPeering, createPeering, peeringPath, peeringStatus } from "../reactor/_peering.ts";
import { type Cluster, cluster, ROOT, until } from "../reactor/_setup.ts";

const HANDLERS = `${ROOT}examples/06-peering/example.ts`;

/** `deno run cli.ts …` to its end: exit code and the lines on stderr. */
async function kopf(c: Cluster, ...args: string[]): Promise<{ code: number; lines: string[] }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}cli.ts`, ...args],
    env: { KUBECONFIG: c.api.kubeconfig.path, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stderr);
  return { code: out.code, lines: text.split("\n").filter(Boolean) };
}

/** Exactly one line, `kopf: …`, matching the pattern. */
function oneLine(r: { code: number; lines: string[] }, code: number, pattern: RegExp): void {
  assert.equal(r.code, code, r.lines.join("\n"));
  assert.equal(r.lines.length, 1, r.lines.join("\n"));
  assert.match(r.lines[0]!, pattern);
}

Deno.test("kopf freeze/resume: bad input is one line and a non-zero exit", async (t) => {
  await using c = await cluster();
  await t.step("no --lifetime", async () => {
    oneLine(await kopf(c, "freeze", "-A"), 2, /^kopf: required option '-t, --lifetime/);
  });
  await t.step("a lifetime that is not a positive whole number", async () => {
    oneLine(
      await kopf(c, "freeze", "--lifetime", "soon"),
      2,
      /^kopf: -t\/--lifetime 'soon' is invalid: use a whole number of seconds in plain decimal digits, e\.g\. 60\.$/,
    );
    oneLine(await kopf(c, "freeze", "--lifetime", "0"), 2, /--lifetime '0' is invalid/);
  });
  await t.step("both -A and -n", async () => {
    oneLine(
      await kopf(c, "resume", "-A", "-n", "ns1"),
      2,
      /^kopf: The peering can be either cluster-wide or namespaced, not both/,
    );
  });
  await t.step("no peering CRDs", async () => {
    oneLine(
      await kopf(c, "freeze", "--lifetime", "10"),
      1,
      /^kopf: the peering CRD \(ClusterKopfPeering, kopf\.dev\/v1 or zalando\.org\/v1\) is not served: apply peering\.yaml first$/,
    );
  });
  await applyPeering(c);
  await t.step("no such peering object", async () => {
    oneLine(
      await kopf(c, "freeze", "--lifetime", "10", "--peering", "absent"),
      1,
      /^kopf: the peering 'absent' is not found cluster-wide: create it \(see peering\.yaml\) or name an existing one with --peering$/,
    );
    oneLine(
      await kopf(c, "resume", "-n", "ns-*"),
      1,
      /^kopf: the peering 'default' is not found in no namespace matching ns-\*/,
    );
  });
  await t.step("resume of an id that has no entry: nothing to resume, exit 1", async () => {
    const nothing = "kopf: nothing to resume: the peering 'default' has no entry 'nobody' " +
      "cluster-wide (it has no entries): give the --id that kopf freeze was given " +
      "(its default: user@host, or $POD_ID)";
    const r = await kopf(c, "resume", "--id", "nobody");
    assert.deepEqual([r.lines, r.code], [[nothing], 1]);
    assert.equal((await kopf(c, "freeze", "--id", "me", "--lifetime", "60")).code, 0);
    const other = await kopf(c, "resume", "--id", "nobody");
    assert.deepEqual([other.lines, other.code], [
      [nothing.replace("(it has no entries)", "(its entries: 'me')")],
      1,
    ]);
    assert.ok("me" in await peeringStatus(c), "the other entry stays");
    const resumed = await kopf(c, "resume", "--id", "me");
    assert.equal(resumed.code, 0, resumed.lines.join("\n"));
    assert.match(
      resumed.lines.at(-1)!,
      /Resumed the operators of the peering 'default' cluster-wide: 'me' removed\.$/,
    );
    assert.deepEqual(await peeringStatus(c), {});
  });
});

Deno.test("kopf freeze with credentials the server refuses (401): one line and exit 1, at once — not a wait for a login that never comes", async () => {
  await using c = await cluster({ token: "the-right-token" });
  const dir = await Deno.makeTempDir({ prefix: "kopf-freeze-401-" });
  try {
    const kubeconfig = `${dir}/kubeconfig`;
    const text = await Deno.readTextFile(c.api.kubeconfig.path);
    assert.match(text, /the-right-token/);
    await Deno.writeTextFile(kubeconfig, text.replaceAll("the-right-token", "a-wrong-token"));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${ROOT}cli.ts`, "freeze", "--id", "me", "-A", "--lifetime", "60"],
      env: { KUBECONFIG: kubeconfig, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000), // the old CLI waited here forever
    }).output();
    const lines = new TextDecoder().decode(out.stderr).split("\n").filter(Boolean);
    assert.deepEqual([out.code, lines.length], [1, 1], lines.join("\n"));
    assert.match(lines[0]!, /^kopf: Ran out of valid credentials: add a login handler/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kopf freeze/resume: the entry Kopf's freeze writes (priority, lifetime, --dev, -n), and its removal", async () => {
  await using c = await cluster();
  await applyPeering(c);
  await c.createNamespace("ns1");
  await createPeering(c, "default", "ns1");
  const frozen = await kopf(c, "freeze", "-A", "-i", "me", "-t", "30", "--dev", "-v");
  assert.equal(frozen.code, 0, frozen.lines.join("\n"));
  assert.ok(frozen.lines.some((l) => l.endsWith("Keep-alive in 'default' cluster-wide: ok.")));
  const status = await peeringStatus(c);
  assert.deepEqual(Object.keys(status.me).sort(), ["lastseen", "lifetime", "priority"]);
  assert.equal(status.me.priority, 666);
  assert.equal(status.me.lifetime, 30);
  // -n: the KopfPeering in each matching namespace ("default" and "ns1" match "*1,default").
  const ns = await kopf(c, "freeze", "-n", "ns1", "-n", "default", "--id", "me", "--lifetime", "9");
  assert.equal(ns.code, 0, ns.lines.join("\n"));
  assert.match(
    ns.lines.at(-1)!,
    /Frozen the operators of the peering 'default' in 'default', in 'ns1': 'me' with priority 100 for 9 seconds/,
  );
  assert.equal((await peeringStatus(c, "ns1")).me.priority, 100);
  assert.equal((await peeringStatus(c, "default")).me.lifetime, 9);
  assert.equal((await kopf(c, "resume", "-n", "ns1", "--id", "me")).code, 0);
  assert.deepEqual(await peeringStatus(c, "ns1"), {});
  assert.ok("me" in await peeringStatus(c, "default"), "other namespaces untouched");
  assert.equal((await kopf(c, "resume", "--id", "me")).code, 0);
  assert.deepEqual(await peeringStatus(c), {});
});

Deno.test("kopf run: automatic mode without the default object runs standalone, with Kopf's line", async (t) => {
  await using c = await cluster();
  for (
    const [what, prepare] of [
      ["without the peering CRDs", () => Promise.resolve()],
      ["with the CRDs, without the object", () => applyPeering(c, { objects: false })],
    ] as const
  ) {
    await t.step(what, async () => {
      await prepare();
      const runner = await KopfRunner.start(["run", "-A", HANDLERS], {
        kubeconfig: c.api.kubeconfig.path,
      });
      try {
        await runner.waitFor(
          "[WARNING ] Default peering object is not found, falling back to the standalone mode.",
        );
      } finally {
        await runner.stop();
      }
      assert.doesNotMatch(runner.output, /Keep-alive/);
    });
  }
});

Deno.test("kopf run --peering NAME: paused until the object exists; --dev still peers (priority 666)", async () => {
  await using c = await cluster();
  await applyPeering(c, { objects: false });
  const runner = await KopfRunner.start(
    ["run", "-A", "--verbose", "--dev", "--peering", "example", HANDLERS],
    { kubeconfig: c.api.kubeconfig.path },
  );
  try {
    await runner.waitFor(
      "The mandatory peering 'example' cluster-wide does not exist: pausing until it appears.",
    );
    await runner.waitFor("Keep-alive in 'example' cluster-wide: not found.");
    await c.createKex("default", "kex-1");
    await new Promise((r) => setTimeout(r, 500));
    assert.doesNotMatch(runner.output, /Handler 'create_fn' succeeded/);
    await createPeering(c, "example", null);
    await runner.waitFor("The mandatory peering 'example' cluster-wide exists now.");
    await runner.waitFor("[default/kex-1] Handler 'create_fn' succeeded.");
    // Announced at once, not at the next keep-alive; --dev is the priority 666 (not standalone).
    await until(
      async () => Object.keys(await peeringStatus(c, null, "example")).length === 1,
      "entry",
    );
    const [entry] = Object.values(await peeringStatus(c, null, "example"));
    assert.equal(entry.priority, 666);
  } finally {
    await runner.stop();
  }
  assert.deepEqual(await peeringStatus(c, null, "example"), {}, "left at exit");
});

Deno.test("kopf run -n: the KopfPeering of each served namespace; a freeze there pauses it", async () => {
  await using c = await cluster();
  await applyPeering(c);
  const runner = await KopfRunner.start(["run", "-n", "default", "--verbose", HANDLERS], {
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await runner.waitFor("Keep-alive in 'default' in 'default': ok.");
    assert.deepEqual(await peeringStatus(c), {}, "not the cluster-wide one");
    assert.equal(Object.keys(await peeringStatus(c, "default")).length, 1);
    const frozen = await kopf(c, "freeze", "-n", "default", "--lifetime", "30", "--id", "dev");
    assert.equal(frozen.code, 0, frozen.lines.join("\n"));
    await runner.waitFor("Pausing operations in favour of [<Peer dev: priority=100, lifetime=30");
    await c.createKex("default", "kex-1");
    await new Promise((r) => setTimeout(r, 500));
    assert.doesNotMatch(runner.output, /Handler 'create_fn' succeeded/);
    assert.equal((await kopf(c, "resume", "-n", "default", "--id", "dev")).code, 0);
    await runner.waitFor("[default/kex-1] Handler 'create_fn' succeeded.");
  } finally {
    await runner.stop();
  }
});

Deno.test("kopf run: the legacy zalando.org peering is used where it is the one served", async () => {
  await using c = await cluster();
  await applyPeering(c, { legacy: true });
  const runner = await KopfRunner.start(["run", "-A", "--verbose", HANDLERS], {
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await runner.waitFor("Keep-alive in 'default' cluster-wide: ok.");
    const r = await c.call("GET", peeringPath(null, "default", "zalando.org"));
    assert.equal(Object.keys(r.body.status ?? {}).length, 1);
  } finally {
    await runner.stop();
  }
});

Deno.test("kopf run --peering NAME without the peering CRDs: paused until they and the object appear", async () => {
  await using c = await cluster();
  const runner = await KopfRunner.start(["run", "-A", "--peering", "example", HANDLERS], {
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    await runner.waitFor(
      "The peering CRDs (ClusterKopfPeering) are not served: pausing until they are (apply peering.yaml).",
    );
    await c.createKex("default", "kex-1");
    await applyPeering(c, { objects: false });
    await runner.waitFor(
      "The mandatory peering 'example' cluster-wide does not exist: pausing until it appears.",
    );
    assert.doesNotMatch(runner.output, /Handler 'create_fn' succeeded/);
    await createPeering(c, "example", null);
    await runner.waitFor("[default/kex-1] Handler 'create_fn' succeeded.");
  } finally {
    await runner.stop();
  }
});
