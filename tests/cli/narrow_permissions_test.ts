/**
 * docs/deployment.md "Narrow Deno permissions", as written: an operator runs
 * from a subprocess with exactly the documented `--allow-*` flags for a
 * kubeconfig against the embedded API server, serves an object (its handler
 * runs), and logs its API traffic with `--debug` (never the token); with
 * `--verbose`, no traffic lines.
 */
import assert from "node:assert/strict";
import { cluster } from "../reactor/_setup.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Runs the CLI until `done` is seen in its stderr (or the timeout), then stops it with SIGTERM. */
async function runUntil(
  args: string[],
  perms: string[],
  env: Record<string, string>,
  done: RegExp,
  act: () => Promise<unknown>,
): Promise<{ code: number; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      ...perms,
      "--config",
      `${ROOT}deno.json`,
      `${ROOT}cli.ts`,
      ...args,
    ],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  let acted = false;
  let stopped = false;
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const dec = new TextDecoder();
  for await (const chunk of child.stderr) {
    stderr += dec.decode(chunk, { stream: true });
    if (!acted && /Starting the watch-stream for kopfexamples/.test(stderr)) {
      acted = true;
      await act();
    }
    if (!stopped && done.test(stderr)) {
      stopped = true;
      child.kill("SIGTERM");
    }
  }
  clearTimeout(timer);
  return { code: (await child.status).code, stderr };
}

Deno.test("The docs' narrow flags for a kubeconfig run an operator: a handler runs; --debug logs the API traffic without the token", async () => {
  await using c = await cluster({ token: "n4rrow-s3cret" });
  const dir = await Deno.makeTempDir({ prefix: "kopf-narrow-" });
  try {
    const handlers = `${dir}/handlers.ts`;
    await Deno.writeTextFile(
      handlers,
      `import * as kopf from "${ROOT}mod.ts";
kopf.on.create("kopfexamples", function createFn({ logger }) { logger.info("created in a narrow sandbox"); });
`,
    );
    const kubeconfig = c.api.kubeconfig.path;
    const host = new URL(c.api.url).host;
    // The docs' flags for a kubeconfig: the handler files and the local modules they import
    // (here: this module by its path), the kubeconfig, its two env vars, the API host.
    const perms = [
      `--allow-read=${dir},${ROOT},${kubeconfig}`,
      "--allow-env=KUBECONFIG,HOME",
      `--allow-net=${host}`,
    ];
    const env = { KUBECONFIG: kubeconfig };
    const debug = await runUntil(
      ["run", "--standalone", "-A", "--debug", handlers],
      perms,
      env,
      /Handler 'createFn' succeeded\./,
      () => c.createKex("default", "narrow1"),
    );
    assert.equal(debug.code, 0, debug.stderr);
    assert.match(debug.stderr, /\[default\/narrow1\] created in a narrow sandbox/);
    assert.match(debug.stderr, /\[DEBUG +\] API: GET \/apis -> 200 in \d+ms$/m);
    assert.match(
      debug.stderr,
      // The state of kopfexamples, streamed over the watch (settings.watching.streamingLists).
      /\[DEBUG +\] API: GET \/apis\/kopf\.dev\/v1\/kopfexamples\?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan -> 200 in \d+ms$/m,
    );
    assert.match(
      debug.stderr,
      /\[DEBUG +\] API: PATCH \/apis\/kopf\.dev\/v1\/namespaces\/default\/kopfexamples\/narrow1 -> 200 in \d+ms$/m,
    );
    assert.doesNotMatch(debug.stderr, /n4rrow-s3cret|authorization:|Bearer /i);
    assert.doesNotMatch(debug.stderr, /NotCapable|permission|^\s+at /m);

    // One flag less: the line names the exact flag to add.
    const denied = await runUntil(
      ["run", "--standalone", "-A", handlers],
      [
        `--allow-read=${dir},${kubeconfig}`,
        ...perms.slice(1),
      ],
      env,
      /$^/,
      () => Promise.resolve(),
    );
    assert.equal(denied.code, 1);
    assert.equal(
      denied.stderr.trim(),
      `kopf: cannot load handlers from ${handlers}: needs read access to "${ROOT}mod.ts": ` +
        `run with --allow-read=${ROOT}mod.ts`,
    );

    const verbose = await runUntil(
      ["run", "--standalone", "-A", "--verbose", handlers],
      perms,
      env,
      /Handler 'createFn' succeeded\./,
      () => c.createKex("default", "narrow2"),
    );
    assert.equal(verbose.code, 0, verbose.stderr);
    assert.match(verbose.stderr, /\[default\/narrow2\] created in a narrow sandbox/);
    assert.match(verbose.stderr, /\[DEBUG /);
    assert.doesNotMatch(verbose.stderr, /API: /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
