/**
 * Peering between operator processes (`kopf run` in child processes) on the embedded API
 * server, with short lifetimes: a higher priority pauses a lower one — its daemons stop with
 * "operator pausing", objects created meanwhile are handled by the higher one only — and the
 * lower one resumes when the higher one exits (gracefully, or killed: then when its entry
 * expires), its daemons spawned again; changes made while nobody handles them (`kopf freeze`)
 * are handled once, with the latest body, on resume; the status is Python Kopf's, byte for byte.
 */

import assert from "node:assert/strict";
import { OperatorProcess } from "../examples/_process.ts";
import { applyPeering, peeringStatus } from "./_peering.ts";
import { call, type Cluster, cluster, ROOT, until } from "./_setup.ts";

const MOD = `${ROOT}mod.ts`;

/** A handlers file: lifetime 2 s, a create/update handler and a daemon that say who they are. */
async function handlers(): Promise<{ path: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "kopf-peering-" });
  const path = `${dir}/handlers.ts`;
  await Deno.writeTextFile(
    path,
    `import * as kopf from "${MOD}";
const me = Deno.env.get("POD_ID");
kopf.on.startup(({ settings }) => {
  settings.peering.lifetime = 2;
  settings.posting.enabled = false;
});
kopf.on.create("kopfexamples", ({ name, spec }) => {
  console.log(\`CREATED \${name} field=\${spec.field} BY \${me}\`);
});
kopf.on.update("kopfexamples", ({ name, spec }) => {
  console.log(\`UPDATED \${name} field=\${spec.field} BY \${me}\`);
});
kopf.daemon("kopfexamples", async ({ name, stopped }) => {
  console.log(\`DAEMON STARTED \${name} IN \${me}\`);
  await stopped.wait();
  console.log(\`DAEMON STOPPED \${name} IN \${me}: \${stopped.reason}\`);
});
`,
  );
  return { path, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

/** `kopf run` in a child process with its own POD_ID (its peering identity). */
function operator(c: Cluster, file: string, id: string, ...flags: string[]): OperatorProcess {
  return new OperatorProcess(["run", "-A", "--verbose", ...flags, file], {
    KUBECONFIG: c.api.kubeconfig.path,
    POD_ID: id,
    NO_COLOR: "1",
  });
}

/** `kopf freeze`/`kopf resume` in a child process; returns its exit code and output. */
async function cli(c: Cluster, ...args: string[]): Promise<{ code: number; output: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}cli.ts`, ...args],
    env: { KUBECONFIG: c.api.kubeconfig.path, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, output: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

const count = (text: string, what: string) => text.split(what).length - 1;

/** A merge patch of a KopfExample in `default`. */
async function patchKex(c: Cluster, name: string, patch: unknown): Promise<void> {
  await call(c.api, "PATCH", `/apis/kopf.dev/v1/namespaces/default/kopfexamples/${name}`, patch, {
    contentType: "application/merge-patch+json",
  });
}

Deno.test("peering: a higher priority pauses a lower one (daemons stop), which resumes when it exits", async () => {
  await using c = await cluster();
  await applyPeering(c);
  await using file = await handlers();
  const low = operator(c, file.path, "op-low", "--priority", "10");
  let high: OperatorProcess | undefined;
  try {
    await c.createKex("default", "kex-1");
    await low.waitFor("DAEMON STARTED kex-1 IN op-low", 30);
    await low.waitFor("CREATED kex-1 field=value BY op-low");

    // Python Kopf's status layout exactly: {identity: {priority, lifetime, lastseen}}.
    const status = await peeringStatus(c);
    assert.deepEqual(Object.keys(status), ["op-low"]);
    assert.deepEqual(Object.keys(status["op-low"]).sort(), ["lastseen", "lifetime", "priority"]);
    assert.equal(status["op-low"].priority, 10);
    assert.equal(status["op-low"].lifetime, 2);
    assert.match(status["op-low"].lastseen, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/);

    high = operator(c, file.path, "op-high", "--priority", "20");
    await low.waitFor(
      "Pausing operations in favour of [<Peer op-high: priority=20, lifetime=2, lastseen='",
      30,
    );
    await low.waitFor("DAEMON STOPPED kex-1 IN op-low: operator pausing");
    await high.waitFor("DAEMON STARTED kex-1 IN op-high");
    const both = await peeringStatus(c);
    assert.deepEqual(Object.keys(both).sort(), ["op-high", "op-low"]);
    assert.equal(both["op-high"].priority, 20);

    // While paused, the lower one handles nothing: the higher one does.
    await c.createKex("default", "kex-2");
    await high.waitFor("CREATED kex-2 field=value BY op-high");
    await high.waitFor("DAEMON STARTED kex-2 IN op-high");
    await patchKex(c, "kex-1", { spec: { field: "changed" } });
    await high.waitFor("UPDATED kex-1 field=changed BY op-high");

    // The higher one exits gracefully: it leaves the peering, the lower one resumes at once.
    assert.equal(await high.stop(), 0);
    assert.match(high.output, /DAEMON STOPPED kex-1 IN op-high: operator exiting/);
    await low.waitFor("Resuming operations after the pause.", 10);
    await low.waitFor("DAEMON STARTED kex-2 IN op-low");
    await until(() => count(low.output, "DAEMON STARTED kex-1 IN op-low") === 2, "kex-1 respawned");
    assert.deepEqual(Object.keys(await peeringStatus(c)), ["op-low"]);
    // What the higher one handled is not handled again by the lower one.
    await new Promise((r) => setTimeout(r, 500));
    assert.doesNotMatch(low.output, /CREATED kex-2|UPDATED kex-1/);
    assert.equal(count(low.output, "DAEMON STARTED kex-1 IN op-low"), 2);
  } finally {
    await high?.stop();
    await low.stop();
  }
  assert.deepEqual(await peeringStatus(c), {}, "both left the peering");
});

Deno.test("peering: a killed higher-priority operator expires; the lower one resumes then and cleans it", async () => {
  await using c = await cluster();
  await applyPeering(c);
  await using file = await handlers();
  const low = operator(c, file.path, "op-low");
  const high = operator(c, file.path, "op-high", "--dev");
  try {
    await low.waitFor("Pausing operations in favour of [<Peer op-high: priority=666", 30);
    await c.createKex("default", "kex-1");
    await high.waitFor("CREATED kex-1 field=value BY op-high");
    // Killed once the creation is stored as handled (a kill between a handler and its patch
    // would make the next operator run it again, as in Kopf).
    await until(async () => {
      const kex = await c.getKex("default", "kex-1");
      return !!kex?.metadata?.annotations?.["kopf.zalando.org/last-handled-configuration"];
    }, "the creation stored as handled");
    await high.stop("SIGKILL");
    const killed = Date.now();
    await low.waitFor("Resuming operations after the pause.", 30);
    const waited = (Date.now() - killed) / 1000;
    // Real processes and a kill -9: the real clock. The bound tells a resumption at the peer's
    // expiry (lifetime 2 s, then the next check) from one that never comes or waits for
    // something else; 8 s leaves room for two processes on a loaded 2-core machine.
    assert.ok(waited < 8, `resumed ${waited}s after the kill (lifetime 2 s)`);
    await low.waitFor("DAEMON STARTED kex-1 IN op-low");
    await until(async () => !("op-high" in await peeringStatus(c)), "op-high cleaned");
    assert.doesNotMatch(low.output, /CREATED kex-1/);
  } finally {
    await high.stop();
    await low.stop();
  }
});

Deno.test("peering: kopf freeze pauses a running operator; changes made meanwhile are handled once on resume", async () => {
  await using c = await cluster();
  await applyPeering(c);
  await using file = await handlers();
  const op = operator(c, file.path, "op-1");
  try {
    await c.createKex("default", "kex-1");
    await op.waitFor("DAEMON STARTED kex-1 IN op-1", 30);
    await op.waitFor("CREATED kex-1 field=value BY op-1");

    const frozen = await cli(
      c,
      "freeze",
      "-A",
      "--id",
      "maintenance",
      "--lifetime",
      "60",
      "--message",
      "Upgrading the database",
    );
    assert.equal(frozen.code, 0, frozen.output);
    assert.match(frozen.output, /Frozen the operators of the peering 'default' cluster-wide/);
    const status = await peeringStatus(c);
    assert.deepEqual(Object.keys(status.maintenance).sort(), [
      "lastseen",
      "lifetime",
      "message",
      "priority",
    ]);
    assert.equal(status.maintenance.priority, 100);
    assert.equal(status.maintenance.lifetime, 60);
    await op.waitFor(
      "Pausing operations in favour of [<Peer maintenance: priority=100, lifetime=60",
    );
    await op.waitFor("DAEMON STOPPED kex-1 IN op-1: operator pausing");

    // While frozen, nobody handles anything: several changes of one object, a new object.
    for (const field of ["one", "two", "three"]) await patchKex(c, "kex-1", { spec: { field } });
    await c.createKex("default", "kex-2");
    await new Promise((r) => setTimeout(r, 700));
    assert.doesNotMatch(op.output, /UPDATED|CREATED kex-2/);

    const resumed = await cli(c, "resume", "-A", "--id", "maintenance");
    assert.equal(resumed.code, 0, resumed.output);
    assert.match(resumed.output, /Resumed the operators of the peering 'default' cluster-wide/);
    await op.waitFor("Resuming operations after the pause.");
    await op.waitFor("UPDATED kex-1 field=three BY op-1");
    await op.waitFor("CREATED kex-2 field=value BY op-1");
    await until(() => count(op.output, "DAEMON STARTED kex-1 IN op-1") === 2, "kex-1 respawned");
    await op.waitFor("DAEMON STARTED kex-2 IN op-1");
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(count(op.output, "UPDATED kex-1"), 1, "the latest body, once");
    assert.equal(count(op.output, "CREATED kex-2"), 1);
    assert.deepEqual(Object.keys(await peeringStatus(c)), ["op-1"]);
  } finally {
    await op.stop();
  }
});
