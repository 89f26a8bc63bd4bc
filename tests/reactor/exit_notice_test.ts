/**
 * The exit's notices (issue 24): a stop that waits for a stuck handler says what it waits for,
 * for how long at most, and — when a process signal stopped it — that a second one exits now;
 * the second Ctrl-C does exit at once. The timing on a fake clock; the signals in a child process.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { FakeClock } from "../../testing.ts";
import { SignalledExit } from "../../src/core/reactor/running.ts";
import { cluster, ROOT, spawnKopfRun, until } from "./_setup.ts";

Deno.test("exit notice: a stuck handler — what is awaited, for how long at most, and that a second Ctrl-C exits now", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  let started = false;
  let release!: () => void;
  const hung = new Promise<void>((resolve) => (release = resolve));
  kopf.on.create("kopfexamples", { registry }, async function stuck() {
    started = true;
    await hung; // ignores the exit
  });
  const clock = new FakeClock();
  const lines: string[] = [];
  const stop = new AbortController();
  let ready = false;
  let exited = false;
  const running = kopf.operator({
    registry,
    clock,
    standalone: true,
    kubeconfig: c.api.kubeconfig.path,
    logging: { write: (l) => lines.push(l), format: "plain" },
    signal: stop.signal,
    onReady: () => (ready = true),
  }).finally(() => (exited = true));
  try {
    await until(() => ready, "the operator is ready");
    await c.createKex("default", "kex-1");
    await until(() => started, "the handler runs");
    await clock.advance(3);
    stop.abort(new SignalledExit("SIGINT"));
    const notices = () => lines.filter((l) => /^(Still )?[Ss]topping/.test(l));
    await until(() => notices().length === 1, "the notice at the stop");
    assert.deepEqual(notices(), [
      "Stopping: waiting for the handlers in progress: Handler 'stuck' of [default/kex-1] " +
      "(running for 3s), for at most 600s more (process.ultimateExitingTimeout 600s), then " +
      "exiting anyway. A second Ctrl-C (SIGINT) exits now, without waiting.",
    ]);
    await clock.advance(4.9);
    assert.equal(notices().length, 1, "nothing more before 5 s");
    await clock.advance(0.1);
    await until(() => notices().length === 2, "the notice after 5 s");
    assert.equal(
      notices()[1],
      "Still stopping after 5s: waiting for the handlers in progress: Handler 'stuck' of " +
        "[default/kex-1] (running for 8s), for at most 595s more (process.ultimateExitingTimeout " +
        "600s), then exiting anyway. A second Ctrl-C (SIGINT) exits now, without waiting.",
    );
    await clock.advance(59.9);
    assert.equal(notices().length, 2, "then once a minute");
    await clock.advance(0.1);
    await until(() => notices().length === 3, "the notice after 65 s");
    assert.match(notices()[2]!, /^Still stopping after 65s: .* for at most 535s more/);
    release();
    assert.ok(await clock.advanceUntil(() => exited, 10, 0.1), "the operator exits");
    const after = notices().length;
    await clock.advance(120);
    assert.equal(notices().length, after, "no notice after the exit");
  } finally {
    release();
    stop.abort();
    await running;
  }
});

Deno.test("exit notice: a prompt stop by the program's own signal says nothing of a second Ctrl-C", async () => {
  await using c = await cluster();
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, function quick() {});
  const lines: string[] = [];
  const stop = new AbortController();
  await kopf.operator({
    registry,
    standalone: true,
    kubeconfig: c.api.kubeconfig.path,
    logging: { write: (l) => lines.push(l), format: "plain" },
    signal: stop.signal,
    onReady: () => stop.abort(),
  });
  assert.ok(lines.includes("Stop-flag is raised. Operator is stopping."), lines.join("\n"));
  assert.ok(!lines.some((l) => /Ctrl-C|Still stopping|^Stopping:/.test(l)), lines.join("\n"));
});

Deno.test("exit notice: kopf run — the first Ctrl-C says what it waits for; the second exits at once", async () => {
  await using c = await cluster();
  const dir = await Deno.makeTempDir({ prefix: "kopf-exit-" });
  try {
    const file = `${dir}/handlers.ts`;
    await Deno.writeTextFile(
      file,
      `import * as kopf from "${ROOT}mod.ts";
kopf.on.startup(({ settings }) => { settings.posting.enabled = false; });
kopf.on.create("kopfexamples", async function stuck() {
  console.log("STUCK HANDLER STARTED");
  await new Promise(() => setInterval(() => {}, 1000)); // never returns, ignores the exit
});
`,
    );
    await c.createKex("default", "kex-1");
    const child = spawnKopfRun(file, c.api.kubeconfig.path);
    let text = "";
    const pump = async (s: ReadableStream<Uint8Array>) => {
      for await (const chunk of s.pipeThrough(new TextDecoderStream())) text += chunk;
    };
    const pumps = [pump(child.stdout), pump(child.stderr)];
    let code: number | undefined;
    void child.status.then((s) => (code = s.code));
    try {
      await until(() => text.includes("STUCK HANDLER STARTED"), "the stuck handler runs", 30);
      child.kill("SIGINT");
      await until(
        () => text.includes("A second Ctrl-C (SIGINT) exits now, without waiting."),
        "the notice after the first Ctrl-C",
      );
      assert.match(
        text,
        /Stopping: waiting for the handlers in progress: Handler 'stuck' of \[default\/kex-1\] \(running for \d+s\), for at most 600s more/,
      );
      assert.equal(code, undefined, "still waiting for the handler");
      const second = Date.now();
      child.kill("SIGINT");
      await until(() => code !== undefined, "the exit after the second Ctrl-C", 5);
      assert.equal(code, 130);
      assert.ok(Date.now() - second < 3000, `exited ${Date.now() - second} ms after the second`);
    } finally {
      if (code === undefined) child.kill("SIGKILL");
      await child.status;
      await Promise.all(pumps);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
