/**
 * The module as another project gets it: a scratch project in a temp folder, with an empty
 * `deno.json` (no import-map entries of ours), imports `mod.ts`, `on.ts` and `testing.ts` by path
 * and by URL, type-checks, and runs a tiny operator on the embedded API server; and
 * `deno publish --dry-run` passes in the repository.
 *
 * No network is needed: the npm packages come from the Deno cache that the repository's own
 * tests have filled (the scratch project resolves the same `npm:` ranges as `deno.json`).
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DECODER = new TextDecoder();

/** The scratch operator: one creation handler on ConfigMaps, run by `KopfRunner`. */
function scratchMain(base: string): string {
  return `
import * as kopf from "${base}mod.ts";
import * as on from "${base}on.ts";
import { KopfRunner, startApiServer } from "${base}testing.ts";

const registry = new kopf.OperatorRegistry();
const seen: string[] = [];
on.create("configmaps", { registry }, function created({ namespace, name }) {
  seen.push(\`\${namespace}/\${name}\`);
  return { greeting: \`hello \${name}\` };
});

await using api = await startApiServer();
await using runner = await KopfRunner.start(["run", "--standalone", "-A"], {
  registry,
  kubeconfig: api.kubeconfig.path,
});
const response = await fetch(\`\${api.url}/api/v1/namespaces/default/configmaps\`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm1" } }),
});
await response.body?.cancel();
await runner.waitFor("All handlers succeeded for creation.");
console.log(JSON.stringify({ created: response.status, seen }));
`;
}

async function deno(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: options.cwd,
    env: { NO_COLOR: "1", ...options.env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: DECODER.decode(out.stdout), stderr: DECODER.decode(out.stderr) };
}

async function scratchProject(base: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "kopf-scratch-" });
  await Deno.writeTextFile(`${dir}/deno.json`, "{}\n");
  await Deno.writeTextFile(`${dir}/main.ts`, scratchMain(base));
  return dir;
}

const EXPECTED = JSON.stringify({ created: 201, seen: ["default/cm1"] });

Deno.test("publishable: a project with an empty deno.json imports the module by path, type-checks and runs an operator", async () => {
  const dir = await scratchProject(ROOT);
  try {
    const checked = await deno(["check", "main.ts"], { cwd: dir });
    assert.equal(checked.code, 0, checked.stderr);
    const ran = await deno(["run", "-A", "main.ts"], { cwd: dir });
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout.trim(), EXPECTED);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("publishable: a project with an empty deno.json imports the module by URL and runs an operator", async () => {
  // The repository served over HTTP, as a raw file host would serve it.
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const path = decodeURIComponent(new URL(req.url).pathname).slice(1);
      if (path.split("/").includes("..")) return new Response("bad path", { status: 400 });
      try {
        const body = await Deno.readFile(`${ROOT}${path}`);
        return new Response(body, { headers: { "content-type": "application/typescript" } });
      } catch {
        return new Response("not found", { status: 404 });
      }
    },
  );
  const dir = await scratchProject(`http://127.0.0.1:${server.addr.port}/`);
  // The downloaded modules go to a DENO_DIR of the test's own (removed with it); the npm
  // packages are the shared cache's, linked in.
  const info = JSON.parse((await deno(["info", "--json"], { cwd: dir })).stdout) as {
    npmCache: string;
  };
  await Deno.mkdir(`${dir}/.deno`);
  await Deno.symlink(info.npmCache, `${dir}/.deno/npm`);
  try {
    const ran = await deno(["run", "-A", "main.ts"], {
      cwd: dir,
      env: { DENO_DIR: `${dir}/.deno` },
    });
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout.trim(), EXPECTED);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("publishable: `deno publish --dry-run` exits 0, ships no tests, tools or workspace members, warns only of the handler files' import", async () => {
  // Without the type check: it is the one `deno task check` runs (`deno check mod.ts on.ts …`
  // with this deno.json, before the tests in `deno task ci`), and the consumer's check is the
  // first test's. The slow-types check of the public API still runs (tried: a planted
  // function without a return type fails this dry run).
  const out = await deno(["publish", "--dry-run", "--allow-dirty", "--no-check"], { cwd: ROOT });
  assert.equal(out.code, 0, out.stderr);
  const text = out.stdout + out.stderr;
  assert.match(text, /Success Dry run complete/);
  // The root is a package itself, so a `deno publish` here publishes it alone; the members
  // (packages/*, e.g. @kopf/cli) are published from their folders (tests/cli/cli_package_test.ts).
  assert.deepEqual([...text.matchAll(/Simulating publish of (\S+) /g)].map((m) => m[1]), [
    `@kopf/kopf@${
      (JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)) as { version: string }).version
    }`,
  ]);
  const files = [...text.matchAll(/file:\/\/(\S+) \(/g)].map((m) => m[1]!.slice(ROOT.length));
  for (
    const f of ["LICENSE", "README.md", "mod.ts", "on.ts", "testing.ts", "cli.ts", "apiserver.ts"]
  ) {
    assert.ok(files.includes(f), `${f} is published`);
  }
  assert.deepEqual(files.filter((f) => /^(tests|tools|bench|deploy|packages)\//.test(f)), []);
  // The one warning: `kopf run` imports the user's handler files, which no analysis can know.
  const warnings = [...text.matchAll(/warning\[([\w-]+)\][^\n]*\n\s*--> ([^\s:]+):\d+/g)]
    .map((m) => `${m[1]} ${m[2]!.slice(ROOT.length)}`);
  assert.deepEqual(warnings, ["unanalyzable-dynamic-import src/cli/run.ts"]);
});
