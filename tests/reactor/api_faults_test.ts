/**
 * Watching and "Retrying of API errors", end to end: while the embedded API
 * server closes watch streams, expires resourceVersions (410 Gone), answers
 * 429/503 with Retry-After, or stalls streams silently, the operator keeps
 * handling, and every object created during the faults is handled exactly
 * once. A 401 makes the operator re-run its login handlers and continue.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { type Cluster, cluster, delay, ROOT, spawnKopfRun, until } from "./_setup.ts";

/** Settings with short retries, so faults heal within a test's time. */
function quickSettings(): kopf.OperatorSettings {
  const settings = new kopf.OperatorSettings();
  settings.networking.errorBackoffs = Array(30).fill(0.05);
  settings.watching.reconnectBackoff = 0.05;
  return settings;
}

/** A creation handler that counts its calls per object. */
function counting(): { registry: kopf.OperatorRegistry; calls: Map<string, number> } {
  const registry = new kopf.OperatorRegistry();
  const calls = new Map<string, number>();
  kopf.on.create("kopfexamples", { registry }, function createFn({ name }) {
    calls.set(name!, (calls.get(name!) ?? 0) + 1);
    return { done: true };
  });
  return { registry, calls };
}

/** Creates an object, retrying the test's own request through injected errors. */
async function createDespiteFaults(c: Cluster, name: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await c.call(
      "POST",
      "/apis/kopf.dev/v1/namespaces/default/kopfexamples",
      { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name }, spec: { i } },
      [409, 429, 500, 503],
    );
    if (r.status === 201 || r.status === 409) return;
    await delay(10);
  }
  throw new Error(`cannot create ${name}`);
}

/** Waits until every object is handled (its result in the status), then checks exactly once. */
async function assertHandledOnce(
  c: Cluster,
  calls: Map<string, number>,
  names: string[],
  timeout = 15,
): Promise<void> {
  await until(() => names.every((n) => calls.has(n)), `handling of ${names.join(", ")}`, timeout);
  await until(
    async () => {
      for (const n of names) {
        let r;
        do { // the test's own reads get injected errors too
          r = await c.call(
            "GET",
            `/apis/kopf.dev/v1/namespaces/default/kopfexamples/${n}`,
            undefined,
            [429, 500, 503],
          );
        } while (r.status !== 200);
        if (r.body.status?.createFn?.done !== true) return false;
      }
      return true;
    },
    "the results in the status",
    timeout,
  );
  await delay(300); // a duplicate would show up here
  for (const n of names) assert.equal(calls.get(n), 1, `${n} handled ${calls.get(n)} times`);
}

Deno.test("watching: watch streams closed every 0.3 s — reconnects, nothing lost, nothing repeated", async () => {
  await using c = await cluster({ faults: { closeWatchesEvery: 0.3 } });
  const { registry, calls } = counting();
  const runner = await KopfRunner.start(["run", "--standalone", "-A", "-v"], {
    registry,
    settings: quickSettings(),
    kubeconfig: c.api.kubeconfig.path,
  });
  const names: string[] = [];
  try {
    for (let i = 0; i < 12; i++) {
      names.push(`closed-${i}`);
      await createDespiteFaults(c, `closed-${i}`);
      await delay(100);
    }
    await assertHandledOnce(c, calls, names);
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.ok(c.api.faultCounts.watchClosed >= 3, JSON.stringify(c.api.faultCounts));
  assert.ok(c.api.countRequests({ verb: "watch", resource: "kopfexamples.kopf.dev" }) >= 3);
});

Deno.test("watching: expired resourceVersions (410 Gone) — relist, nothing lost, nothing repeated", async () => {
  await using c = await cluster({ requestLog: true });
  const { registry, calls } = counting();
  const runner = await KopfRunner.start(["run", "--standalone", "-A", "-v"], {
    registry,
    settings: quickSettings(),
    kubeconfig: c.api.kubeconfig.path,
  });
  const names: string[] = [];
  try {
    for (let round = 0; round < 3; round++) {
      const batch: string[] = [];
      for (let i = 0; i < 3; i++) {
        batch.push(`gone-${round}-${i}`);
        await createDespiteFaults(c, `gone-${round}-${i}`);
      }
      names.push(...batch);
      // The operator's own writes for these objects come first (lone events are handled at once),
      // so that the write below is the newest and every watcher's resourceVersion is expired.
      await assertHandledOnce(c, calls, batch);
      // Something newer than any kopfexample, so that every watcher's resourceVersion is expired.
      await c.call("POST", "/api/v1/namespaces/default/configmaps", {
        metadata: { name: `bump-${round}` },
      });
      c.api.expireResourceVersions();
      await delay(150);
    }
    await assertHandledOnce(c, calls, names);
    await runner.waitFor(
      /Restarting the watch-stream for kopfexamples\.v1\.kopf\.dev .*\(410 Gone\)/,
    );
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.ok(c.api.faultCounts.expired >= 1, JSON.stringify(c.api.faultCounts));
  // Relisting: more than the initial listing of kopfexamples — streamed over a watch
  // (sendInitialEvents=true) where the server offers it, as here; a LIST elsewhere.
  const listings = c.requests.filter((line) =>
    /^GET \/apis\/kopf\.dev\/v1\/kopfexamples\?/.test(line) &&
    (/sendInitialEvents=true/.test(line) || !/watch=true/.test(line))
  );
  assert.ok(listings.length >= 2, listings.join("\n"));
});

Deno.test("retrying: 429 and 503 answers are retried, honouring Retry-After", async () => {
  await using c = await cluster();
  const { registry, calls } = counting();
  const settings = quickSettings();
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    settings,
    kubeconfig: c.api.kubeconfig.path,
  });
  const names: string[] = [];
  try {
    // Retry-After (0.4 s) is longer than the backoff (0.05 s): the client waits the longer one.
    c.api.setFaults({ rate429: 0.25, rate503: 0.25, retryAfterSeconds: 0.4 });
    for (let i = 0; i < 8; i++) {
      names.push(`busy-${i}`);
      await createDespiteFaults(c, `busy-${i}`);
    }
    await until(() => c.api.faultCounts.error429 + c.api.faultCounts.error503 >= 6, "faults", 15);
    await assertHandledOnce(c, calls, names, 30);
  } finally {
    c.api.setFaults({ rate429: null, rate503: null });
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.ok(c.api.faultCounts.error429 > 0 && c.api.faultCounts.error503 > 0);
  // Retries are logged with the server's delay, not the 0.05 s backoff.
  assert.match(runner.output, /Request attempt #\d+\/31 failed; will retry in 0\.4s: .* 429/);
  assert.match(runner.output, /Request attempt #\d+\/31 failed; will retry in 0\.4s: .* 503/);
  assert.doesNotMatch(runner.output, /will retry in 0\.05s/);
});

Deno.test("watching: silently stalled streams are reopened after settings.watching.inactivityTimeout", async () => {
  await using c = await cluster();
  const { registry, calls } = counting();
  const settings = quickSettings();
  settings.watching.inactivityTimeout = 1;
  const runner = await KopfRunner.start(["run", "--standalone", "-A", "-v"], {
    registry,
    settings,
    kubeconfig: c.api.kubeconfig.path,
  });
  const names = ["stalled-0", "stalled-1", "stalled-2"];
  try {
    c.api.setFaults({ stallWatches: true });
    for (const n of names) await createDespiteFaults(c, n);
    // Silent for longer than the inactivity timeout: reconnected, but still stalled.
    await runner.waitFor(
      /The watch-stream for kopfexamples\.v1\.kopf\.dev is silent; reconnecting\./,
    );
    assert.equal(calls.size, 0, "nothing can arrive through stalled streams");
    c.api.setFaults({ stallWatches: null });
    // The next reconnect (within ~1 s) resumes from the last resourceVersion.
    await assertHandledOnce(c, calls, names, 5);
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.ok(c.api.faultCounts.watchStalled >= 1, JSON.stringify(c.api.faultCounts));
});

Deno.test("authentication: a 401 re-runs the login handlers; the operator continues with the new token", async () => {
  await using c = await cluster({ token: "right-token" });
  const { registry, calls } = counting();
  const tokens: string[] = [];
  kopf.on.login({ registry }, function loginFn() {
    const token = tokens.length === 0 ? "wrong-token" : "right-token";
    tokens.push(token);
    return new kopf.ConnectionInfo({ server: c.api.url, token, defaultNamespace: "default" });
  });
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    settings: quickSettings(),
  });
  try {
    await createDespiteFaults(c, "auth-1");
    await assertHandledOnce(c, calls, ["auth-1"]);
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.deepEqual(tokens, ["wrong-token", "right-token"]);
  assert.match(runner.output, /401 Unauthorized; re-authenticating/);
  assert.ok(c.api.countRequests({ code: 401 }) >= 1);
});

Deno.test("authentication: a login handler that keeps returning a rejected token is a fatal one-liner", async () => {
  await using c = await cluster({ token: "right-token" });
  const { registry } = counting();
  let logins = 0;
  kopf.on.login({ registry }, function loginFn() {
    logins++;
    return new kopf.ConnectionInfo({ server: c.api.url, token: "wrong-token" });
  });
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    settings: quickSettings(),
    reraise: false,
  });
  await runner.stop();
  assert.equal(runner.exitCode, 1);
  const message = (runner.exception as Error).message;
  assert.doesNotMatch(message, /\n/);
  assert.match(message, /credentials/i);
  assert.ok(logins >= 2 && logins <= 3, `logins: ${logins}`);
});

Deno.test("authentication: a login that gives no credentials is a fatal one-liner, and nothing says it finished", async () => {
  await using c = await cluster({ token: "right-token" });
  const { registry } = counting();
  kopf.on.login({ registry }, function loginFn() {
    throw new kopf.PermanentError("no way in");
  });
  const runner = await KopfRunner.start(["run", "--standalone", "-A", "-v"], {
    registry,
    settings: quickSettings(),
    kubeconfig: c.api.kubeconfig.path,
    reraise: false,
  });
  await runner.stop();
  assert.equal(runner.exitCode, 1);
  const message = (runner.exception as Error).message;
  assert.doesNotMatch(message, /\n/);
  assert.match(message, /credentials|login/i);
  assert.match(runner.output, /Initial authentication has been initiated\./);
  assert.doesNotMatch(runner.output, /Initial authentication has finished\./);
});

Deno.test("backlog: a burst behind 2 request slots (the backlog's worker limit holding and lifting) under 429s, closed watches and latency — every object handled once", async () => {
  await using c = await cluster({
    faults: { rate429: 0.05, closeWatchesRandomly: 1, latencyMs: 5, latencyJitterMs: 5 },
  });
  const { registry, calls } = counting();
  const settings = quickSettings();
  settings.networking.maxConcurrentRequests = 2; // a backlog from the first objects on
  const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
    registry,
    settings,
    kubeconfig: c.api.kubeconfig.path,
  });
  const names = Array.from({ length: 40 }, (_, i) => `burst-${i}`);
  try {
    await Promise.all(names.map((name) => createDespiteFaults(c, name)));
    await assertHandledOnce(c, calls, names, 30);
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  const faults = c.api.faultCounts;
  assert.ok(faults.error429 > 0 && faults.watchClosed > 0, JSON.stringify(faults));
});

/**
 * Whether an object counts as handled, read through injected errors: its diff base (Kopf's
 * last-handled-configuration annotation) is stored — true, false, or null once it is gone.
 */
async function handledOf(c: Cluster, name: string): Promise<boolean | null> {
  for (;;) {
    const r = await c.call(
      "GET",
      `/apis/kopf.dev/v1/namespaces/default/kopfexamples/${name}`,
      undefined,
      [404, 429, 500, 503],
    );
    if (r.status === 404) return null;
    if (r.status === 200) {
      return !!r.body.metadata?.annotations?.["kopf.zalando.org/last-handled-configuration"];
    }
    await delay(10);
  }
}

Deno.test("backlog: an operator killed with SIGKILL amid a burst behind 2 request slots, under 500s and closed watches — the next one handles the rest, nothing whose handling was stored runs again, every finalizer released", async () => {
  await using c = await cluster();
  c.api.setFaults({ rate500: 0.05, closeWatchesRandomly: 1, latencyMs: 5 }); // after the CRD
  const dir = await Deno.makeTempDir({ prefix: "kopf-backlog-kill-" });
  const file = `${dir}/handlers.ts`;
  await Deno.writeTextFile(
    file,
    `import * as kopf from "${ROOT}mod.ts";
kopf.on.startup(({ settings }) => {
  settings.posting.enabled = false;
  settings.networking.maxConcurrentRequests = 2; // a backlog from the first objects on
  settings.networking.errorBackoffs = Array(30).fill(0.05);
  settings.watching.reconnectBackoff = 0.05;
});
kopf.on.create("kopfexamples", function createFn({ name }) {
  console.log("HANDLED " + name);
  return { done: true };
});
kopf.on.delete("kopfexamples", function deleteFn() {});
`,
  );
  const start = () => {
    const child = spawnKopfRun(file, c.api.kubeconfig.path, "null");
    const handled: string[] = [];
    const pumped = (async () => {
      let buffer = "";
      for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
        buffer += chunk;
        const lines = buffer.split("\n");
        buffer = lines.pop()!;
        for (const line of lines) if (line.startsWith("HANDLED ")) handled.push(line.slice(8));
      }
    })();
    return { child, handled, pumped };
  };
  const names = Array.from({ length: 40 }, (_, i) => `kill-${i}`);
  const first = start();
  let second: ReturnType<typeof start> | undefined;
  try {
    await Promise.all(names.map((name) => createDespiteFaults(c, name)));
    await until(() => first.handled.length >= 15, "the first operator handling", 30);
    first.child.kill("SIGKILL");
    await first.child.status;
    await first.pumped;
    // What the killed one stored as handled (the diff base): those must not run again. (Its
    // result goes to /status in a second write, after the diff base, as in Kopf: a kill between
    // the two loses the result of a handler that ran, not the handling.)
    const stored = new Set<string>();
    for (const name of names) if (await handledOf(c, name)) stored.add(name);
    assert.ok(stored.size >= 1 && stored.size < names.length, `${stored.size} stored at the kill`);
    second = start();
    await until(
      async () => {
        for (const name of names) if (!(await handledOf(c, name))) return false;
        return true;
      },
      "every object handled, the rest by the second operator",
      30,
    );
    await delay(300); // a repeat would show up here
    const again = second.handled.filter((name) => stored.has(name));
    assert.deepEqual(again, [], "handled again after their handling was stored");
    const rest = names.filter((name) => !stored.has(name));
    assert.deepEqual([...second.handled].sort(), rest.sort(), "the rest, each once");
    for (const name of stored) assert.ok(first.handled.includes(name), `${name} by the first`);
    // The deletions: every finalizer released by the second operator.
    await Promise.all(
      names.map((name) =>
        c.call("DELETE", `/apis/kopf.dev/v1/namespaces/default/kopfexamples/${name}`, undefined, [
          404,
          429,
          500,
          503,
        ])
      ),
    );
    await until(
      async () => {
        for (const name of names) {
          if (await handledOf(c, name) !== null) {
            await c.call(
              "DELETE",
              `/apis/kopf.dev/v1/namespaces/default/kopfexamples/${name}`,
              undefined,
              [404, 429, 500, 503],
            );
            return false;
          }
        }
        return true;
      },
      "every object gone",
      30,
    );
  } finally {
    if (second) {
      second.child.kill("SIGTERM");
      await second.child.status;
      await second.pumped;
    }
    try {
      first.child.kill("SIGKILL");
    } catch { /* already gone */ }
    await Deno.remove(dir, { recursive: true });
  }
  const faults = c.api.faultCounts;
  assert.ok(faults.error500 > 0 && faults.watchClosed > 0, JSON.stringify(faults));
});
