/**
 * `kopf bundle` as a user runs it (`deno run … cli.ts bundle`), and the bundle run as `kopf run`
 * is, against the embedded API server: the handlers keep their ids (their functions' names), the
 * bundle's own imports are not analysable by Deno (it would read them all at the start), every
 * file is cached, a second bundle into the same directory replaces the first; and what can only
 * be a mistake is refused with one line — a file or module from outside the bundle (it would load
 * a second kopf), a command that reads handler files, a missing file, a directory of other files,
 * a file that does not compile.
 */
import assert from "node:assert/strict";
import { load as parseYaml } from "js-yaml";
import { startApiServer } from "../../testing.ts";
import { collect } from "./_stderr.ts";
import { bundleKey } from "../../src/cli/bundle.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function deno(args: string[], cwd: string, timeout = 60): Promise<{
  code: number;
  stdout: string;
  stderr: string;
}> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), timeout * 1000);
  try {
    const out = await child.output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  } finally {
    clearTimeout(timer);
  }
}

const bundle = (cwd: string, ...args: string[]) =>
  deno(["run", "-A", "--config", `${ROOT}deno.json`, `${ROOT}cli.ts`, "bundle", ...args], cwd);

Deno.test("bundleKey: a path as named, without ./ and .. steps", () => {
  assert.equal(bundleKey("handlers.ts"), "handlers.ts");
  assert.equal(bundleKey("./ops//handlers.ts"), "ops/handlers.ts");
  assert.equal(bundleKey("ops/../handlers.ts"), "handlers.ts");
  assert.equal(bundleKey("../x/handlers.ts"), "../x/handlers.ts");
  assert.equal(bundleKey("/app/./ops/../handlers.ts"), "/app/handlers.ts");
  assert.equal(bundleKey("/../handlers.ts"), "/handlers.ts");
});

Deno.test("kopf bundle: the bundled operator handles objects under its handlers' own ids, and refuses files from outside", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-bundle-" });
  try {
    await Deno.mkdir(`${dir}/ops`);
    await Deno.writeTextFile(
      `${dir}/ops/handlers.ts`,
      [
        `import * as kopf from "${ROOT}mod.ts";`,
        `kopf.on.create("kopfexamples", function create_fn({ name }) {`,
        `  return { made: name };`,
        `});`,
        `const tagged = async () => ({ tagged: true });`,
        `kopf.on.create("kopfexamples", tagged);`,
        ``,
      ].join("\n"),
    );
    await Deno.writeTextFile(`${dir}/other.ts`, `import "${ROOT}mod.ts";\n`);

    const made = await bundle(dir, "-o", "dist", "./ops/handlers.ts");
    assert.equal(made.code, 0, made.stderr);
    assert.match(
      made.stdout,
      /^Bundled ops\/handlers\.ts with kopf into dist\/main\.js \(\d+ files/,
    );
    const files = [...Deno.readDirSync(`${dir}/dist`)].map((e) => e.name).sort();
    assert.ok(files.includes("main.js") && !files.includes("main.ts"), String(files));
    // The bundle's own dynamic imports are not analysable: Deno would read every chunk at start.
    for (const file of files.filter((f) => f.endsWith(".js"))) {
      const text = await Deno.readTextFile(`${dir}/dist/${file}`);
      assert.doesNotMatch(text, /\bimport\(["']\.\/[\w.-]+\.js["']\)/, file);
    }
    // A second bundle into the same directory replaces the first: no file of it is left over
    // (here one that an earlier bundle listed as its own), and none is left as it was.
    const marker = `${dir}/dist/.kopf-bundle.json`;
    const listed = JSON.parse(await Deno.readTextFile(marker)) as { files: string[] };
    assert.deepEqual(listed.files, files.filter((f) => f.endsWith(".js")));
    await Deno.writeTextFile(marker, JSON.stringify({ files: [...listed.files, "chunk-OLD.js"] }));
    await Deno.writeTextFile(`${dir}/dist/chunk-OLD.js`, "old");
    await Deno.writeTextFile(`${dir}/dist/main.js`, "old");
    const again = await bundle(dir, "-o", "dist", "ops/handlers.ts");
    assert.equal(again.code, 0, again.stderr);
    const after = [...Deno.readDirSync(`${dir}/dist`)].map((e) => e.name).sort();
    assert.deepEqual(after, files);
    assert.notEqual(await Deno.readTextFile(`${dir}/dist/main.js`), "old");

    await using api = await startApiServer();
    const crd = parseYaml(await Deno.readTextFile(`${ROOT}examples/crd.yaml`));
    const created = await fetch(
      `${api.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(crd),
      },
    );
    assert.equal(created.status, 201, await created.text());
    const run = (...args: string[]) =>
      deno(
        [
          "run",
          "--cached-only",
          "-A",
          "dist/main.js",
          ...args,
        ],
        dir,
        30,
      );

    // What can only be a mistake, refused before anything runs.
    const outside = await run("--standalone", "-A", "other.ts");
    assert.equal(outside.code, 1);
    assert.deepEqual(outside.stderr.trim().split("\n"), [
      "kopf: cannot load handlers from other.ts: this program is a bundle of ops/handlers.ts, " +
      "and a file from the disk would load a second kopf: bundle it in (kopf bundle)",
    ]);
    const module = await run("--standalone", "-A", "-m", "npm:left-pad");
    assert.equal(module.code, 1);
    assert.match(
      module.stderr.trim(),
      /^kopf: cannot load handlers from npm:left-pad: this program is a bundle \(of ops\/handlers\.ts\)/,
    );
    const crdCommand = await run("crd", "ops/handlers.ts");
    assert.equal(crdCommand.code, 2);
    assert.match(
      crdCommand.stderr.trim(),
      /^kopf: this program is a bundle for kopf run: run kopf crd with the handler files themselves/,
    );

    // The operator from the bundle, with the file named as on the command line of the bundling.
    await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig.yaml);
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--cached-only",
        "-A",
        "dist/main.js",
        "--standalone",
        "-n",
        "default",
        "./ops/handlers.ts",
      ],
      cwd: dir,
      env: { NO_COLOR: "1", KUBECONFIG: `${dir}/kubeconfig` },
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const { logs, reading } = collect(child.stderr);
    try {
      const post = await fetch(`${api.url}/apis/kopf.dev/v1/namespaces/default/kopfexamples`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          apiVersion: "kopf.dev/v1",
          kind: "KopfExample",
          metadata: { name: "bundled" },
          spec: {},
        }),
      });
      assert.equal(post.status, 201, await post.text());
      const deadline = Date.now() + 20_000;
      // deno-lint-ignore no-explicit-any
      let status: any;
      while (Date.now() < deadline) {
        const res = await fetch(
          `${api.url}/apis/kopf.dev/v1/namespaces/default/kopfexamples/bundled`,
        );
        status = (await res.json()).status;
        if (status?.create_fn && status?.tagged) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      // The ids are the functions' names, as from the sources (not the minifier's).
      assert.deepEqual(
        status,
        { create_fn: { made: "bundled" }, tagged: { tagged: true } },
        logs.join(""),
      );
    } finally {
      child.kill("SIGTERM");
      assert.equal((await child.status).code, 0, logs.join(""));
      await reading;
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kopf bundle: a missing file, a directory of other files, a file that does not compile: one line, exit 1", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-bundle-" });
  try {
    const missing = await bundle(dir, "nope.ts");
    assert.equal(missing.code, 1);
    assert.equal(
      missing.stderr.trim(),
      "kopf: cannot bundle nope.ts: no such file (check the path)",
    );
    await Deno.mkdir(`${dir}/ops`);
    const folder = await bundle(dir, "ops");
    assert.equal(folder.code, 1);
    assert.equal(
      folder.stderr.trim(),
      "kopf: cannot bundle ops: it is not a file (name the handlers file)",
    );

    await Deno.writeTextFile(`${dir}/handlers.ts`, `import "${ROOT}mod.ts";\n`);
    await Deno.mkdir(`${dir}/out`);
    await Deno.writeTextFile(`${dir}/out/notes.txt`, "mine");
    const other = await bundle(dir, "-o", "out", "handlers.ts");
    assert.equal(other.code, 1);
    assert.equal(
      other.stderr.trim(),
      "kopf: out holds files that kopf bundle did not write (notes.txt): " +
        "give an empty or new directory with -o",
    );
    assert.equal(await Deno.readTextFile(`${dir}/out/notes.txt`), "mine");

    // A bundle that fails leaves the directory as it was: here an earlier bundle, still whole.
    const good = await bundle(dir, "handlers.ts");
    assert.equal(good.code, 0, good.stderr);
    const before = [...Deno.readDirSync(`${dir}/dist`)].map((e) => e.name).sort();
    await Deno.writeTextFile(`${dir}/broken.ts`, `import "${ROOT}mod.ts";\nconst = 1;\n`);
    const broken = await bundle(dir, "broken.ts");
    assert.equal(broken.code, 1);
    const lines = broken.stderr.trim().split("\n");
    assert.equal(lines.length, 1, broken.stderr);
    assert.deepEqual([...Deno.readDirSync(`${dir}/dist`)].map((e) => e.name).sort(), before);
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.startsWith(".")),
      [],
    );
    assert.match(
      lines[0]!,
      /^kopf: deno bundle of broken\.ts failed: SyntaxError: Unexpected token `=`.* \(at \/\S+\/broken\.ts:2:7\)$/,
    );

    const none = await bundle(dir);
    assert.equal(none.code, 2);
    assert.equal(
      none.stderr.trim(),
      "kopf: no handlers file to bundle: give one, e.g. kopf bundle handlers.ts",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
