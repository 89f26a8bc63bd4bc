/**
 * The package `@kopf/cli` (`packages/cli/`, a workspace member) as a user runs it:
 * - `deno run -A jsr:@kopf/cli …` in a project whose `deno.json` `links` this workspace (so the
 *   `jsr:` specifiers resolve to these files with no registry): `--help` names `kopf` (as does
 *   the module's own `jsr:@kopf/kopf/cli`), `apiserver` serves, and `run handlers.ts` — a handler file importing `@kopf/kopf` through
 *   the project's import map — fires its handler: one copy of the module is loaded;
 * - `deno run -A <repo>/packages/cli/main.ts run handlers.ts` from a folder with no `deno.json`,
 *   the handler file importing `<repo>/mod.ts` by path: the same;
 * - `deno install -g -A -n kopf --config <repo>/deno.json <repo>/packages/cli/main.ts` into a
 *   temporary root: the installed `kopf` runs;
 * - `deno publish --dry-run` in `packages/cli/`: the member alone is published (a `deno publish`
 *   at the root publishes the root package only: tests/tools/publishable_test.ts), with its two
 *   files, no warnings, no slow types.
 *
 * No network: `links` substitutes the local packages for JSR's, and the npm packages come from
 * the Deno cache that the repository's own tests fill. (`deno install -g jsr:@kopf/cli` itself
 * cannot be run here: a global install ignores a project's `links` and asks jsr.io.)
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startApiServer } from "../../testing.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MEMBER = `${ROOT}packages/cli/`;
const VERSION = (JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)) as { version: string })
  .version;
const DECODER = new TextDecoder();

/** A handler that leaves a mark on the object: proof that it ran in the operator's process. */
const HANDLER = `
kopf.on.create("configmaps", function greet({ name, patch }) {
  patch.metadata.annotations["kopf.test/greeting"] = \`hello \${name}\`;
});
`;

interface Output {
  code: number;
  stdout: string;
  stderr: string;
}

function command(args: string[], cwd: string, env: Record<string, string> = {}): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/** Runs `deno <args>` to its end; killed (and failing the test by name) after the timeout. */
async function deno(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  timeout = 60,
): Promise<Output> {
  const child = command(args, cwd, env).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, timeout * 1000);
  try {
    const out = await child.output();
    const result = {
      code: out.code,
      stdout: DECODER.decode(out.stdout),
      stderr: DECODER.decode(out.stderr),
    };
    if (timedOut) {
      throw new Error(`deno ${args.join(" ")} ran over ${timeout}s; stderr:\n${result.stderr}`);
    }
    return result;
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a ConfigMap's greeting annotation until it is there; fails by name after the timeout. */
async function greeting(url: string, name: string, timeout = 30): Promise<string> {
  const deadline = Date.now() + timeout * 1000;
  while (Date.now() < deadline) {
    const res = await fetch(`${url}/api/v1/namespaces/default/configmaps/${name}`);
    const cm = await res.json() as { metadata?: { annotations?: Record<string, string> } };
    const value = cm.metadata?.annotations?.["kopf.test/greeting"];
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the handler 'greet' did not annotate configmap ${name} within ${timeout}s`);
}

async function createConfigMap(url: string, name: string): Promise<void> {
  const res = await fetch(`${url}/api/v1/namespaces/default/configmaps`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name } }),
  });
  await res.body?.cancel();
  assert.equal(res.status, 201, `creating configmap ${name}`);
}

/**
 * Runs `kopf run` (the given command line) until the handler has annotated a new ConfigMap,
 * then stops it with SIGTERM: exit code 0, and the handler's success in its log.
 */
async function operatorRuns(args: string[], cwd: string, url: string, kubeconfig: string) {
  const name = `cm-${crypto.randomUUID().slice(0, 8)}`;
  const child = command(args, cwd, { KUBECONFIG: kubeconfig }).spawn();
  const output = child.output();
  try {
    await createConfigMap(url, name);
    assert.equal(await greeting(url, name), `hello ${name}`);
  } finally {
    child.kill("SIGTERM");
  }
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  const out = await output;
  clearTimeout(timer);
  const stderr = DECODER.decode(out.stderr);
  assert.equal(out.code, 0, `kopf run exits 0 on SIGTERM; stderr:\n${stderr}`);
  assert.match(stderr, new RegExp(`\\[default/${name}\\] Handler 'greet' succeeded\\.`));
  assert.doesNotMatch(stderr, /ERROR|^\s+at /m);
}

/** `--help`: exit code 0, and the usage names the command `kopf`. */
function assertHelp(out: Output): void {
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /^Usage: kopf \[options\] \[command\]\n/);
  assert.match(out.stdout, /\n {2}run \[options\] \[paths\.\.\.\]/);
}

Deno.test("@kopf/cli: `deno run -A jsr:@kopf/cli` (linked to this workspace) — --help names kopf, `apiserver` serves, `run handlers.ts` fires a handler", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-cli-package-" });
  try {
    await Deno.writeTextFile(
      `${dir}/deno.json`,
      JSON.stringify({
        links: [ROOT, MEMBER],
        imports: { "@kopf/kopf": `jsr:@kopf/kopf@^${VERSION}` },
      }),
    );
    await Deno.writeTextFile(
      `${dir}/handlers.ts`,
      `import * as kopf from "@kopf/kopf";\n${HANDLER}`,
    );
    assertHelp(await deno(["run", "-A", "jsr:@kopf/cli", "--help"], dir));
    const version = await deno(["run", "-A", "jsr:@kopf/cli", "--version"], dir);
    assert.equal(version.stdout.trim(), VERSION, version.stderr);
    // The module's own `./cli` export stays the same command.
    assertHelp(await deno(["run", "-A", "jsr:@kopf/kopf/cli", "--help"], dir));

    // The embedded API server, through the package.
    const server = command(
      ["run", "-A", "jsr:@kopf/cli", "apiserver", "--port", "0", "--kubeconfig", `${dir}/kc`],
      dir,
    ).spawn();
    const serverStderr = server.stderr.cancel();
    const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      let text = "";
      const deadline = setTimeout(() => server.kill("SIGKILL"), 30_000);
      while (!text.includes("export KUBECONFIG=")) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`jsr:@kopf/cli apiserver ended before it served:\n${text}`);
        text += value;
      }
      clearTimeout(deadline);
      const url = /listening at (http:\/\/\S+)/.exec(text)?.[1];
      assert.ok(url, text);
      await operatorRuns(
        ["run", "-A", "jsr:@kopf/cli", "run", "--standalone", "-A", "handlers.ts"],
        dir,
        url,
        `${dir}/kc`,
      );
    } finally {
      server.kill("SIGTERM");
      while (!(await reader.read()).done) { /* drain */ }
      await serverStderr;
      assert.equal((await server.status).code, 0, "the API server stops cleanly");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("@kopf/cli by path: `deno run -A <repo>/packages/cli/main.ts run handlers.ts` from a folder with no deno.json fires a handler", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-cli-package-" });
  await using api = await startApiServer();
  try {
    await Deno.writeTextFile(
      `${dir}/handlers.ts`,
      `import * as kopf from "${ROOT}mod.ts";\n${HANDLER}`,
    );
    assertHelp(await deno(["run", "-A", `${MEMBER}main.ts`, "--help"], dir));
    await operatorRuns(
      ["run", "-A", `${MEMBER}main.ts`, "run", "--standalone", "-A", "handlers.ts"],
      dir,
      api.url,
      api.kubeconfig.path,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("@kopf/cli: `deno install -g -A -n kopf --config <repo>/deno.json <repo>/packages/cli/main.ts` installs a `kopf` that runs", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-cli-install-" });
  try {
    const installed = await deno(
      [
        "install",
        "-g",
        "-A",
        "-n",
        "kopf",
        "--root",
        `${dir}/root`,
        "--config",
        `${ROOT}deno.json`,
        `${MEMBER}main.ts`,
      ],
      dir,
    );
    assert.equal(installed.code, 0, installed.stderr);
    const script = await Deno.readTextFile(`${dir}/root/bin/kopf`);
    assert.match(script, new RegExp(`deno run --allow-all .*'file://${MEMBER}main\\.ts' "\\$@"`));
    const run = (args: string[]) =>
      new Deno.Command(`${dir}/root/bin/kopf`, {
        args,
        cwd: dir,
        env: { NO_COLOR: "1", PATH: `${Deno.execPath().replace(/\/[^/]*$/, "")}:/usr/bin:/bin` },
        stdout: "piped",
        stderr: "piped",
      }).output();
    const help = await run(["--help"]);
    assertHelp({
      code: help.code,
      stdout: DECODER.decode(help.stdout),
      stderr: DECODER.decode(help.stderr),
    });
    const version = await run(["--version"]);
    assert.equal(DECODER.decode(version.stdout).trim(), VERSION);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("@kopf/cli: `deno publish --dry-run` in packages/cli publishes the member alone: its deno.json and main.ts, no warnings", async () => {
  // Without the type check, which `deno task check` runs (`deno check 'packages/**/*.ts'`):
  // the slow-types check of the member's API still runs.
  const out = await deno(["publish", "--dry-run", "--allow-dirty", "--no-check"], MEMBER, {}, 180);
  assert.equal(out.code, 0, out.stderr);
  const text = out.stdout + out.stderr;
  assert.match(
    text,
    new RegExp(`Simulating publish of @kopf/cli@${VERSION.replaceAll(".", "\\.")} `),
  );
  assert.doesNotMatch(text, /@kopf\/kopf@/, "the root package is not published from here");
  const files = [...text.matchAll(/file:\/\/(\S+) \(/g)].map((m) => m[1]!.slice(ROOT.length));
  assert.deepEqual(files.sort(), ["packages/cli/deno.json", "packages/cli/main.ts"]);
  assert.doesNotMatch(text, /warning\[|error\[/);
  assert.match(text, /Success Dry run complete/);
});
