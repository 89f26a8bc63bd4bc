/**
 * Lease leader election between operator processes (`kopf run --leader-election` in child
 * processes) on the embedded API server, with short durations (lease 2 s, renew deadline
 * 1.5 s, retry 0.3 s): the standby takes over within the lease duration when the leader is
 * killed (-9) — the failover time is printed —, at its next try when the leader exits
 * gracefully (the Lease is released), and a leader whose Lease requests hang abdicates before
 * its lease can expire: the handlers' ledger (a file outside the API, with times and pids)
 * shows no two replicas handling at once. The role is on /metrics and /readyz.
 */

import assert from "node:assert/strict";
import { OperatorProcess } from "../examples/_process.ts";
import { applyPeering } from "./_peering.ts";
import { type Cluster, cluster, delay, ROOT, until } from "./_setup.ts";
import { servedAt } from "../engines/_metrics.ts";

const MOD = `${ROOT}mod.ts`;
const LEASE = "default/kopf-leader-default";

/** Prints a measured figure only when KOPF_TEST_REPORT is set: the suite prints no post-test output. */
function reportFigure(line: string): void {
  if (Deno.env.get("KOPF_TEST_REPORT")) console.log(line);
}

/** One handler run as the ledger records it. */
interface Run {
  name: string;
  who: string;
  pid: number;
  start: number;
  end: number;
}

/** A handlers file whose creation handler records each run in a ledger file. */
async function handlers(): Promise<
  {
    path: string;
    ledger: string;
    runs(): Promise<Run[]>;
    run(name: string): Promise<Run>;
    [Symbol.asyncDispose](): Promise<void>;
  }
> {
  const dir = await Deno.makeTempDir({ prefix: "kopf-leader-" });
  const path = `${dir}/handlers.ts`;
  const ledger = `${dir}/ledger.jsonl`;
  await Deno.writeTextFile(ledger, "");
  await Deno.writeTextFile(
    path,
    `import * as kopf from "${MOD}";
const me = Deno.env.get("POD_ID");
const num = (name: string, dflt: number) => Number(Deno.env.get(name) ?? dflt);
kopf.on.startup(({ settings }) => {
  settings.leaderElection.leaseDuration = num("LEASE", 2);
  settings.leaderElection.renewDeadline = num("RENEW", 1.5);
  settings.leaderElection.retryPeriod = num("RETRY", 0.3);
  settings.posting.enabled = false;
});
kopf.on.create("kopfexamples", async ({ name }) => {
  const start = Date.now();
  console.log(\`CREATED \${name} BY \${me}\`);
  await new Promise((r) => setTimeout(r, num("WORK_MS", 0)));
  const run = { name, who: me, pid: Deno.pid, start, end: Date.now() };
  await Deno.writeTextFile(${
      JSON.stringify(ledger)
    }, JSON.stringify(run) + "\\n", { append: true });
});
`,
  );
  const runs = async () => {
    const text = await Deno.readTextFile(ledger);
    return text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Run);
  };
  return {
    path,
    ledger,
    runs,
    async run(name: string) {
      let found: Run | undefined;
      await until(async () => !!(found = (await runs()).find((r) => r.name === name)), name);
      return found!;
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** `kopf run --leader-election` in a child process with its own identity (POD_ID). */
function operator(
  kubeconfig: string,
  file: string,
  id: string,
  env: Record<string, string> = {},
  ...flags: string[]
): OperatorProcess {
  const peering = flags.includes("--peering") ? [] : ["--standalone"];
  return new OperatorProcess(
    ["run", "-A", ...peering, "--leader-election", ...flags.filter((f) => f !== "--peering"), file],
    { KUBECONFIG: kubeconfig, POD_ID: id, NO_COLOR: "1", ...env },
  );
}

/** `-L` on a port the system picks: the operator names it in its log. */
const LIVENESS = ["-L", "http://127.0.0.1:0/healthz"];

/** The base URL of an operator's health server, from its log line. */
async function healthOf(operator: OperatorProcess): Promise<string> {
  await operator.waitFor("Serving health status at ", 30);
  const url = servedAt(operator.output);
  assert.ok(url, operator.output);
  return new URL(url).origin;
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

/** Whether the object's creation is stored as handled (so a kill now does not redo it). */
async function handled(c: Cluster, name: string): Promise<boolean> {
  const body = await c.getKex("default", name);
  return !!body?.metadata?.annotations?.["kopf.zalando.org/last-handled-configuration"];
}

Deno.test("leader election: kill -9 the leader; the standby handles a new object within the lease duration", async () => {
  await using c = await cluster();
  await using file = await handlers();
  const a = operator(c.api.kubeconfig.path, file.path, "op-a", {}, ...LIVENESS);
  let b: OperatorProcess | undefined;
  try {
    await a.waitFor(`successfully acquired lease ${LEASE}`, 30);
    const healthA = await healthOf(a);
    b = operator(c.api.kubeconfig.path, file.path, "op-b", {}, ...LIVENESS);
    const healthB = await healthOf(b);
    await b.waitFor(`attempting to acquire leader lease ${LEASE}...`, 30);
    await b.waitFor("new leader elected: op-a");

    // The roles: on /metrics and /readyz (both ready: a standby serves webhooks too).
    await until(
      async () => (await get(`${healthB}/readyz`)).status === 200,
      "b ready",
    );
    assert.deepEqual(JSON.parse((await get(`${healthA}/readyz`)).text), {
      ready: true,
      role: "leader",
    });
    assert.deepEqual(JSON.parse((await get(`${healthB}/readyz`)).text), {
      ready: true,
      role: "standby",
    });
    const metricsB = (await get(`${healthB}/metrics`)).text;
    assert.match(metricsB, /kopf_operator_role\{role="standby"\} 1/);
    assert.match(metricsB, /kopf_operator_role\{role="leader"\} 0/);
    assert.match(metricsB, /kopf_leader_transitions_total 1/);
    assert.match(
      (await get(`${healthA}/metrics`)).text,
      /kopf_operator_role\{role="leader"\} 1/,
    );
    assert.equal((await get(`${healthB}/healthz`)).status, 200); // live on standby

    await c.createKex("default", "kex-1");
    await a.waitFor("CREATED kex-1 BY op-a");
    await until(() => handled(c, "kex-1"), "kex-1 stored as handled");

    await a.stop("SIGKILL");
    const killed = Date.now();
    await c.createKex("default", "kex-2");
    await b.waitFor("CREATED kex-2 BY op-b", 30);
    const run = await file.run("kex-2");
    const failover = (run.start - killed) / 1000;
    reportFigure(
      `leader election failover after kill -9: ${failover.toFixed(2)} s ` +
        "(lease 2 s, renew deadline 1.5 s, retry 0.3 s)",
    );
    assert.ok(b.output.includes(`successfully acquired lease ${LEASE}`));
    // Real processes and a kill -9: the real clock. Not before the lease could expire (the
    // leader renewed at most one retry before the kill) — the guarantee, which load cannot
    // break. The upper bound only tells a standby that takes over at the expiry (lease 2 s plus
    // its jittered retry) from one that waits much longer; its 6 s of room is for starting the
    // handler in a child process on a loaded 2-core machine.
    assert.ok(failover >= 2 - 0.3 - 0.1, `took over too early: ${failover} s`);
    assert.ok(failover <= 2 + 0.3 * 2.2 + 6, `took over too late: ${failover} s`);
    await until(
      async () =>
        /kopf_operator_role\{role="leader"\} 1/.test(
          (await get(`${healthB}/metrics`)).text,
        ),
      "b's role is leader",
    );
    assert.match(
      (await get(`${healthB}/metrics`)).text,
      /kopf_leader_transitions_total 2/,
    );
    assert.equal((await file.runs()).filter((r) => r.name === "kex-1").length, 1);
  } finally {
    await b?.stop();
    await a.stop();
  }
  const lease = (await c.call(
    "GET",
    "/apis/coordination.k8s.io/v1/namespaces/default/leases/kopf-leader-default",
  )).body;
  assert.equal(lease.spec.holderIdentity, "", "released at b's graceful exit");
  assert.equal(lease.spec.leaseTransitions, 1);
});

Deno.test("leader election: a graceful exit releases the Lease; the standby takes over at its next try", async () => {
  await using c = await cluster();
  await using file = await handlers();
  const env = { LEASE: "5", RENEW: "4", RETRY: "0.3" }; // a long lease: only a release is this fast
  const a = operator(c.api.kubeconfig.path, file.path, "op-a", env);
  let b: OperatorProcess | undefined;
  try {
    await a.waitFor(`successfully acquired lease default/kopf-leader-default`, 30);
    b = operator(c.api.kubeconfig.path, file.path, "op-b", env);
    await b.waitFor("new leader elected: op-a", 30);
    assert.equal(await a.stop(), 0);
    const exited = Date.now();
    assert.match(a.output, /released lease default\/kopf-leader-default/);
    await c.createKex("default", "kex-1");
    await b.waitFor("CREATED kex-1 BY op-b", 10);
    const run = await file.run("kex-1");
    const takeover = (run.start - exited) / 1000;
    reportFigure(
      `leader election takeover after a graceful exit: ${takeover.toFixed(2)} s (lease 5 s)`,
    );
    assert.ok(takeover < 2, `took ${takeover} s: the release was not used`);
  } finally {
    await b?.stop();
    await a.stop();
  }
});

/**
 * An HTTP proxy to the API server for one replica: `stall(true)` holds its Lease requests
 * (the others go on: its watches and patches work), as a connection to the API that can no
 * longer renew — the hardest case, a leader that still sees events.
 */
function leaseStaller(target: string) {
  let stalled = false;
  let release: () => void = () => {};
  let released = Promise.resolve();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    // Held until the stall ends, then sent on — late, as a slow network delivers: a renewal
    // that lands after the take-over must be refused by the Lease's resourceVersion.
    if (stalled && url.pathname.includes("/leases")) await released;
    try {
      const upstream = await fetch(`${target}${url.pathname}${url.search}`, {
        method: req.method,
        headers: req.headers,
        body: req.body,
      });
      return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
    } catch {
      return new Response(null, { status: 502 });
    }
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    stall(on: boolean) {
      stalled = on;
      if (on) released = new Promise((r) => (release = r));
      else release();
    },
    async [Symbol.asyncDispose]() {
      release();
      await server.shutdown();
    },
  };
}

Deno.test("leader election: a leader whose Lease requests hang abdicates before its lease expires; never two leaders handling at once", async () => {
  await using c = await cluster();
  await using file = await handlers();
  await using proxy = leaseStaller(c.api.url);
  const dir = await Deno.makeTempDir({ prefix: "kopf-leader-proxy-" });
  const kubeconfigA = `${dir}/kubeconfig`;
  await Deno.writeTextFile(kubeconfigA, c.api.kubeconfig.yaml.replaceAll(c.api.url, proxy.url));
  const env = { WORK_MS: "50" };
  const a = operator(kubeconfigA, file.path, "op-a", env);
  let b: OperatorProcess | undefined;
  let creating = true;
  let made = 0;
  const creator = (async () => {
    while (creating) {
      await c.createKex("default", `kex-${++made}`);
      await delay(100);
    }
  })();
  try {
    await a.waitFor(`successfully acquired lease ${LEASE}`, 30);
    b = operator(c.api.kubeconfig.path, file.path, "op-b", env);
    await b.waitFor("new leader elected: op-a", 30);
    await until(async () => (await file.runs()).length >= 3, "a few handled by a");

    proxy.stall(true); // a's renewals hang from now on; its watches and patches go on
    await a.waitFor(`failed to renew lease ${LEASE}: timed out waiting for the condition`, 5);
    await b.waitFor(`successfully acquired lease ${LEASE}`, 5);
    await b.waitFor("CREATED", 5);
    await delay(1000);
    proxy.stall(false); // a's connection is back: it sees b as the leader and stays a standby
    await a.waitFor("new leader elected: op-b", 5);
    await delay(1000);
    creating = false;
    await creator;
    await until(
      async () => new Set((await file.runs()).map((r) => r.name)).size === made,
      "every object handled",
    );
  } finally {
    creating = false;
    await creator.catch(() => {});
    await b?.stop();
    await a.stop();
    await Deno.remove(dir, { recursive: true });
  }
  const runs = (await file.runs()).sort((x, y) => x.start - y.start);
  const byA = runs.filter((r) => r.who === "op-a");
  const byB = runs.filter((r) => r.who === "op-b");
  assert.ok(byA.length >= 3 && byB.length >= 3, `a: ${byA.length}, b: ${byB.length}`);
  // No overlap of two replicas' handler runs, ever.
  for (let i = 1; i < runs.length; i++) {
    const [prev, next] = [runs[i - 1]!, runs[i]!];
    if (prev.pid !== next.pid) {
      assert.ok(
        prev.end <= next.start,
        `overlap: ${JSON.stringify(prev)} and ${JSON.stringify(next)}`,
      );
    }
  }
  // a handled nothing once b started: a stopped handling before b could begin.
  const lastA = Math.max(...byA.map((r) => r.end));
  const firstB = Math.min(...byB.map((r) => r.start));
  assert.ok(lastA < firstB, `a ran until ${lastA}, b from ${firstB}`);
  const twice = new Set(byA.map((r) => r.name).filter((n) => byB.some((r) => r.name === n)));
  reportFigure(
    `leader election with a hung leader: ${byA.length} runs by a, then ${byB.length} by b ` +
      `${firstB - lastA} ms later; ${twice.size} handled again by b, ${made} objects`,
  );
});

/** `kopf run` to its end (a failure at start): its exit code and output. */
async function runToEnd(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}cli.ts`, "run", ...args],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, output: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

Deno.test("leader election: bad durations or a bad Lease name are one line and exit 1", async () => {
  await using c = await cluster();
  await using file = await handlers();
  const kubeconfig = c.api.kubeconfig.path;
  const bad = await runToEnd(["-A", "--standalone", "--leader-election", file.path], {
    KUBECONFIG: kubeconfig,
    LEASE: "2",
    RENEW: "2",
  });
  assert.equal(bad.code, 1, bad.output);
  const lines = bad.output.trim().split("\n").filter((l) => l.includes("leaseDuration"));
  assert.equal(lines.length, 1, bad.output);
  assert.match(
    lines[0]!,
    /settings\.leaderElection\.leaseDuration \(2s\) must be greater than renewDeadline \(2s\)\./,
  );
  const name = await runToEnd(["-A", "--standalone", "--leader-election=Bad_Name", file.path], {
    KUBECONFIG: kubeconfig,
  });
  assert.equal(name.code, 1, name.output);
  assert.match(name.output, /The leader-election Lease name 'Bad_Name' is not a valid object name/);
  assert.doesNotMatch(name.output, /\n\s+at /); // no stack trace
});

Deno.test("leader election with peering: kopf freeze pauses the Lease holder (role paused; nothing handled) until kopf resume", async () => {
  await using c = await cluster();
  await applyPeering(c);
  await using file = await handlers();
  const a = operator(c.api.kubeconfig.path, file.path, "op-a", {}, "--peering", ...LIVENESS);
  try {
    const health = await healthOf(a);
    const role = async () => JSON.parse((await get(`${health}/readyz`)).text).role;
    await a.waitFor(`successfully acquired lease ${LEASE}`, 30);
    await until(
      async () => (await get(`${health}/readyz`).catch(() => ({ status: 0 }))).status === 200,
      "ready",
    );
    await until(async () => (await role()) === "leader", "the peering read: leader");
    const freeze = await runCli(
      c,
      "freeze",
      "--lifetime",
      "30",
      "--priority",
      "100",
      "-A",
      "--id",
      "human",
    );
    assert.equal(freeze.code, 0, freeze.output);
    await a.waitFor("Pausing operations in favour of [<Peer human: priority=100", 10);
    assert.equal(await role(), "paused"); // the Lease is still held: paused, not standby
    await c.createKex("default", "kex-1");
    await delay(1000);
    assert.doesNotMatch(a.output, /CREATED kex-1/);
    const resume = await runCli(c, "resume", "-A", "--id", "human");
    assert.equal(resume.code, 0, resume.output);
    await a.waitFor("CREATED kex-1 BY op-a", 10);
    assert.equal(await role(), "leader");
    assert.ok(!a.output.includes("failed to renew lease"), "the Lease was renewed all along");
  } finally {
    await a.stop();
  }
});

/** `kopf freeze`/`kopf resume` in a child process. */
async function runCli(c: Cluster, ...args: string[]): Promise<{ code: number; output: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}cli.ts`, ...args],
    env: { KUBECONFIG: c.api.kubeconfig.path, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, output: dec.decode(out.stdout) + dec.decode(out.stderr) };
}
