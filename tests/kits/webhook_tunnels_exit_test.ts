/**
 * The ngrok tunnel in an operator process of its own: a missing --allow-run is one line, and an
 * exit that skips the graceful stop (Deno.exit) still stops the agent.
 */
import assert from "node:assert/strict";
import { fakeNgrok } from "./_ngrok.ts";

const MOD = new URL("../../mod.ts", import.meta.url).href;

/** Runs a script that starts a tunnel with the fake agent, with the given permissions. */
async function runScript(
  dir: string,
  body: string,
  permissions: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = `${dir}/operator.ts`;
  await Deno.writeTextFile(
    script,
    `import * as kopf from ${JSON.stringify(MOD)};\n` +
      `const fn: kopf.WebhookFn = () => Promise.resolve({});\n${body}\n`,
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...permissions, script],
    stdin: "null",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

Deno.test("WebhookNgrokTunnel: without --allow-run, one line naming the permission", async () => {
  await using ngrok = await fakeNgrok("http");
  const result = await runScript(
    ngrok.dir,
    `const tunnel = new kopf.WebhookNgrokTunnel({ binary: ${JSON.stringify(ngrok.binary)} });
try {
  await tunnel.serve(fn, { signal: new AbortController().signal }).next();
} catch (e) {
  console.log(String(e));
}`,
    ["--allow-read", "--allow-net=127.0.0.1", "--allow-env"],
  );
  assert.equal(
    result.stdout,
    `WebhookServerError: Running the ngrok agent needs a permission: --allow-run=${ngrok.binary}.\n`,
    result.stderr,
  );
  assert.deepEqual(await ngrok.events(), []);
});

Deno.test("WebhookNgrokTunnel: Deno.exit() while the tunnel runs still stops the agent", async () => {
  await using ngrok = await fakeNgrok("http");
  const result = await runScript(
    ngrok.dir,
    `const tunnel = new kopf.WebhookNgrokTunnel({ binary: ${JSON.stringify(ngrok.binary)} });
const first = await tunnel.serve(fn, { signal: new AbortController().signal }).next();
console.log(first.value.url);
Deno.exit(0);`,
    ["-A"],
  );
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^http:\/\/127\.0\.0\.1:\d+\n$/);
  const deadline = Date.now() + 10_000;
  try {
    while ((await ngrok.events()).at(-1)?.event !== "stopped") {
      assert.ok(Date.now() < deadline, "timed out waiting for the agent to be stopped");
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (e) {
    // Not left behind when the test fails: the agent's own pid, as it recorded it.
    const pid = (await ngrok.events()).find((e) => e.event === "started")?.pid;
    if (typeof pid === "number") Deno.kill(pid, "SIGKILL");
    throw e;
  }
});
