/**
 * `import * as kopf from "mod.ts"`, an operator run from a kubeconfig, and `kopf run` load no
 * CommonJS package.
 *
 * Why it matters: the first CommonJS package that Deno loads brings in its CommonJS loader, and
 * with it and the packages an operator's idle memory grew by ≈19 MiB (prom-client, yaml and
 * commander, measured together); commander alone, the command line's parser before it had its
 * own, cost an idle `kopf run` ≈1.7 MiB (73.1 → 71.5 MiB, medians of three). The YAML printing
 * of `kopf crd` and the embedded API server stay out of `mod.ts`'s and `cli.ts`'s static graphs;
 * they load on demand.
 *
 * Two checks: the static graphs of `mod.ts`, `on.ts` and `cli.ts` as `deno info --json` gives
 * them (imports marked `isDynamic` are lazy and not followed), judged by each npm package's
 * `package.json` (which file an `import` resolves to, and whether that file is CommonJS); and
 * processes — one that imports `mod.ts` and runs an operator from a kubeconfig file, and
 * `kopf run` of a handlers file — which report the CommonJS modules they have loaded
 * (`require.cache`, which lists every module the CommonJS loader has evaluated).
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startApiServer } from "../../testing.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Packages that must never be in the operator's static graph, CommonJS or not; js-yaml loads when
 * a kubeconfig is read (an operator in a pod reads none); commander was the command line's parser;
 * @opentelemetry/api loads only with `OTEL_DENO=true` (cogs/tracing/tracing.ts: off means free).
 */
const FORBIDDEN = [
  "yaml",
  "commander",
  "prom-client",
  "@kubernetes/client-node",
  "js-yaml",
  "@opentelemetry/api",
];

interface InfoModule {
  specifier: string;
  kind?: string;
  npmPackage?: string;
  dependencies?: Array<{ code?: { specifier: string }; isDynamic?: boolean }>;
}
interface Info {
  roots: string[];
  modules: InfoModule[];
  redirects: Record<string, string>;
  npmPackages: Record<string, { name: string; localPath?: string }>;
}

async function info(root: string): Promise<Info> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", root],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** Every specifier a root imports statically, resolved (its own modules, npm modules, `node:` ones). */
function staticSpecifiers(graph: Info): Set<string> {
  const modules = new Map(graph.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [...graph.roots];
  while (stack.length) {
    const specifier = stack.pop()!;
    const resolved = graph.redirects[specifier] ?? specifier;
    if (seen.has(resolved)) continue;
    seen.add(resolved);
    for (const dependency of modules.get(resolved)?.dependencies ?? []) {
      if (dependency.code && !dependency.isDynamic) stack.push(dependency.code.specifier);
    }
  }
  return seen;
}

/** The npm modules (`npm:/name@version/subpath`) that a root imports statically. */
function staticNpmModules(graph: Info): InfoModule[] {
  const modules = new Map(graph.modules.map((m) => [m.specifier, m]));
  return [...staticSpecifiers(graph)].flatMap((s) => {
    const module = modules.get(s);
    return module?.kind === "npm" ? [module] : [];
  });
}

type Exports = string | null | Exports[] | { [key: string]: Exports };

/** Deno's conditions for an `import` of an npm package, in its order of preference. */
const CONDITIONS = ["deno", "node", "import", "default"];

/** The file a subpath of a package's `exports` resolves to for an `import`, if any. */
function exportTarget(exports: Exports, subpath: string): string | undefined {
  if (typeof exports === "string" || Array.isArray(exports) || exports === null) {
    return subpath === "." ? conditional(exports) : undefined;
  }
  const keys = Object.keys(exports);
  if (!keys.some((k) => k.startsWith("."))) {
    return subpath === "." ? conditional(exports) : undefined;
  }
  if (subpath in exports) return conditional(exports[subpath]!);
  for (const key of keys) {
    const [prefix, suffix = ""] = key.split("*");
    if (!key.includes("*") || !subpath.startsWith(prefix!) || !subpath.endsWith(suffix)) continue;
    const star = subpath.slice(prefix!.length, subpath.length - suffix.length);
    return conditional(exports[key]!)?.replaceAll("*", star);
  }
  return undefined;
}

function conditional(target: Exports): string | undefined {
  if (typeof target === "string") return target;
  if (target === null) return undefined;
  if (Array.isArray(target)) {
    for (const t of target) {
      const found = conditional(t);
      if (found) return found;
    }
    return undefined;
  }
  for (const [condition, value] of Object.entries(target)) {
    if (CONDITIONS.includes(condition)) {
      const found = conditional(value);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Whether an `import` of this npm module loads CommonJS: the file it resolves to, or a file of the
 * package that one imports (an ES module wrapper such as commander's `esm.mjs` imports its
 * CommonJS `index.js`). Other packages that it imports are not followed: the run below sees them.
 */
async function isCommonJs(graph: Info, module: InfoModule): Promise<boolean> {
  const dir = graph.npmPackages[module.npmPackage!]?.localPath;
  assert.ok(dir, `no local copy of ${module.npmPackage} (run deno info --json mod.ts once)`);
  const manifest = JSON.parse(await Deno.readTextFile(`${dir}/package.json`));
  const rest = module.specifier.replace(/^npm:\/(@[^/]+\/)?[^/@]+@[^/]+/, "");
  const subpath = rest ? `.${rest}` : ".";
  const entry = manifest.exports !== undefined
    ? exportTarget(manifest.exports, subpath)
    : subpath === "."
    ? manifest.main ?? "index.js"
    : subpath;
  if (entry === undefined) return true; // unknown: say so rather than pass
  const seen = new Set<string>();
  const files = [new URL(entry, `file://${dir}/`).pathname];
  while (files.length) {
    const file = files.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (file.endsWith(".cjs") || !file.endsWith(".mjs") && manifest.type !== "module") return true;
    const text = await Deno.readTextFile(file);
    for (
      const [, relative] of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)
    ) {
      files.push(new URL(relative!, `file://${file}`).pathname);
    }
  }
  return false;
}

/** What is wrong with the npm packages of a root's static graph: one line per package. */
async function problems(root: string): Promise<string[]> {
  const graph = await info(root);
  const out = new Set<string>();
  for (const module of staticNpmModules(graph)) {
    const name = graph.npmPackages[module.npmPackage!]?.name ?? module.npmPackage!;
    if (FORBIDDEN.includes(name)) out.add(`${name}: must be imported on demand, not statically`);
    else if (await isCommonJs(graph, module)) {
      out.add(
        `${name}: CommonJS (brings Deno's CommonJS loader); import it on demand or not at all`,
      );
    }
  }
  return [...out];
}

Deno.test("mod.ts's static graph has no CommonJS package, nor yaml, commander, prom-client or client-node", async () => {
  assert.deepEqual(await problems("mod.ts"), []);
});

/**
 * Node's HTTP and TLS stack in Deno (node:https, node:http, node:tls, node:net) and node:crypto
 * cost an operator memory at start (V8's heap after importing mod.ts: 9.45 → 8.48 MiB when the
 * webhook server's modules became lazy); only a webhook server (kits/webhooks.ts) needs them,
 * and it imports them when it starts.
 */
const NODE_ON_DEMAND = ["node:https", "node:http", "node:tls", "node:net", "node:crypto"];

Deno.test("mod.ts's static graph has no node:https, node:http, node:tls, node:net or node:crypto", async () => {
  const reached = staticSpecifiers(await info("mod.ts"));
  assert.deepEqual(NODE_ON_DEMAND.filter((s) => reached.has(s)), []);
  assert.ok(reached.has("node:async_hooks"), "the check sees node: modules (AsyncLocalStorage)");
});

/** Every module a root's graph holds, its dynamic imports followed too: what Deno prepares. */
function preparedSpecifiers(graph: Info): Set<string> {
  const modules = new Map(graph.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [...graph.roots];
  while (stack.length) {
    const specifier = stack.pop()!;
    const resolved = graph.redirects[specifier] ?? specifier;
    if (seen.has(resolved)) continue;
    seen.add(resolved);
    for (const dependency of modules.get(resolved)?.dependencies ?? []) {
      if (dependency.code) stack.push(dependency.code.specifier);
    }
  }
  return seen;
}

/**
 * What an operator imports only when it runs it (reactor/optional_parts.ts, processing.ts's
 * loadDaemons, startup.ts, the tunnels, the CLI's commands): sharding, peering's wiring and
 * policy, leader election, admission and conversion, daemons and timers, reconcilers, the
 * Lease clients, the ngrok agent, the flags of `kopf rbac`/`kopf manifests`. An idle operator
 * with none of them: RSS 70.9 → 68.2 MiB (three interleaved runs each).
 */
const LOADED_WHEN_WANTED = [
  "src/core/reactor/sharding.ts",
  "src/core/reactor/peering.ts",
  "src/core/reactor/leader_election.ts",
  "src/core/reactor/webhooking.ts",
  "src/core/engines/sharding.ts",
  "src/core/engines/shard_leases.ts",
  "src/core/engines/peering.ts",
  "src/core/engines/peers.ts",
  "src/core/engines/leader_election.ts",
  "src/core/engines/admission.ts",
  "src/core/engines/conversion.ts",
  "src/core/engines/daemons.ts",
  "src/core/engines/reconciling.ts",
  "src/cogs/clients/lease_lock.ts",
  "src/cogs/structs/rendezvous.ts",
  "src/kits/_ngrok_agent.ts",
  "src/cli/_operator_flags.ts",
];

for (const root of ["mod.ts", "cli.ts"]) {
  Deno.test(`${root}: the parts an operator runs only when wanted are in its graph as dynamic imports, not static ones`, async () => {
    const graph = await info(root);
    const path = (s: string) => s.startsWith("file://") ? fileURLToPath(s).slice(ROOT.length) : s;
    const statics = new Set([...staticSpecifiers(graph)].map(path));
    const prepared = new Set([...preparedSpecifiers(graph)].map(path));
    assert.ok(statics.has("src/core/reactor/running.ts"), "the check sees the operator's modules");
    assert.deepEqual(LOADED_WHEN_WANTED.filter((m) => statics.has(m)), [], "imported statically");
    // Dynamic, but a string literal: deno compile, deno cache and JSR find them (mod.ts reaches
    // every one; cli.ts all but the tunnels' agent, which only the handlers' kopf.* reach).
    const reachable = root === "mod.ts"
      ? LOADED_WHEN_WANTED
      : LOADED_WHEN_WANTED.filter((m) => !m.startsWith("src/kits/"));
    assert.deepEqual(reachable.filter((m) => !prepared.has(m)), [], "not found at all");
  });
}

/**
 * What an idle operator does not use, kept out of `mod.ts`'s static graph (issue 28, an idle
 * operator's memory): LogTape is imported when `kopf.logtapeSink()` makes a sink; `@noble/hashes`
 * only with sharding (its rendezvous hashing's SHA-256; the long annotation keys' BLAKE2b is our
 * own, cogs/configs/_blake2b.ts); `node:path` not at all in an operator (cogs/clients/_paths.ts),
 * `node:os` only with peering (engines/peers.ts). With the first three out, RSS after
 * `import * as kopf from "mod.ts"` 60.3 → 59.0 MiB, of an idle operator from a kubeconfig
 * 67.9 → 67.2 MiB (medians of six interleaved runs; TypeBox, for `kopf.Type`, keeps npm's
 * resolution loaded, and js-yaml is loaded to read the kubeconfig).
 */
const IDLE_UNNEEDED_PACKAGES = ["@logtape/logtape", "@noble/hashes"];
const IDLE_UNNEEDED_NODE = ["node:path", "node:os"];

Deno.test("mod.ts's static graph has no LogTape, @noble/hashes, node:path or node:os; LogTape is still found (a literal dynamic import)", async () => {
  const graph = await info("mod.ts");
  const reached = staticSpecifiers(graph);
  const packages = new Set(
    staticNpmModules(graph).map((m) => graph.npmPackages[m.npmPackage!]?.name ?? m.npmPackage!),
  );
  assert.ok(packages.has("@sinclair/typebox"), "the check sees npm packages (kopf.Type)");
  assert.deepEqual(IDLE_UNNEEDED_PACKAGES.filter((p) => packages.has(p)), [], "npm packages");
  assert.deepEqual(IDLE_UNNEEDED_NODE.filter((s) => reached.has(s)), [], "node: modules");
  // TypedResource.validate() walks TypeBox's errors alone, not all of Value's modules (≈0.6 MiB).
  assert.ok([...reached].some((s) => /^npm:\/@sinclair\/typebox@[^/]+\/errors$/.test(s)));
  assert.deepEqual(
    [...reached].filter((s) => /^npm:\/@sinclair\/typebox@[^/]+\/value$/.test(s)),
    [],
  );
  const prepared = [...preparedSpecifiers(graph)];
  assert.ok(prepared.some((s) => s.startsWith("npm:/@logtape/logtape@")), "LogTape not found");
});

Deno.test("on.ts's static graph has no CommonJS package either", async () => {
  assert.deepEqual(await problems("on.ts"), []);
});

Deno.test("cli.ts's static graph has no CommonJS package either, and no commander", async () => {
  assert.deepEqual(await problems("cli.ts"), []);
});

Deno.test("cli.ts's static graph has no node:path or node:url (kopf run's file URLs are its own on POSIX systems)", async () => {
  // Both cost every kopf run ≈2.5 MiB for as long as it runs (src/cli/_file_urls.ts).
  const reached = staticSpecifiers(await info("cli.ts"));
  assert.ok(reached.has("node:async_hooks"), "the check sees node: modules");
  assert.deepEqual(["node:path", "node:url"].filter((s) => reached.has(s)), []);
});

Deno.test("the check tells CommonJS from ES modules (reflect-metadata in a fixture; js-yaml, CommonJS and ES both, in the CLI's YAML)", async () => {
  const fixture = "tests/fixtures/lean_graph/commonjs.ts";
  const judged = new Map<string, boolean>();
  for (const root of [fixture, "src/cli/_yaml.ts"]) {
    const graph = await info(root);
    for (const module of staticNpmModules(graph)) {
      judged.set(graph.npmPackages[module.npmPackage!]!.name, await isCommonJs(graph, module));
    }
  }
  assert.equal(judged.get("reflect-metadata"), true, "reflect-metadata is CommonJS");
  assert.equal(judged.get("js-yaml"), false, "js-yaml is imported as dist/js-yaml.mjs");
  assert.deepEqual(await problems(fixture), [
    "reflect-metadata: CommonJS (brings Deno's CommonJS loader); import it on demand or not at all",
  ]);
});

Deno.test("an operator run from a kubeconfig loads no CommonJS module", async () => {
  await using api = await startApiServer();
  const probe = `
import * as kopf from ${JSON.stringify(new URL("mod.ts", `file://${ROOT}`).href)};
const registry = new kopf.OperatorRegistry();
kopf.on.event("configmaps", { registry }, () => {});
const stop = new AbortController();
await kopf.operator({
  registry,
  kubeconfig: ${JSON.stringify(api.kubeconfig.path)},
  clusterwide: true,
  standalone: true,
  signal: stop.signal,
  logging: { level: "warning" },
  onReady: () => setTimeout(() => stop.abort(), 300),
});
const { createRequire } = await import("node:module");
const loaded = Object.keys(createRequire(import.meta.url).cache);
console.log(JSON.stringify(loaded));
`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "-"],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const writer = out.stdin.getWriter();
  await writer.write(new TextEncoder().encode(probe));
  await writer.close();
  const { code, stdout, stderr } = await out.output();
  const text = new TextDecoder().decode(stdout);
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const loaded: string[] = JSON.parse(text.trim().split("\n").at(-1)!);
  assert.deepEqual(packagesOf(loaded), [], loaded.join("\n"));
});

/** The npm packages of the paths in `require.cache`. */
function packagesOf(loaded: string[]): string[] {
  return [
    ...new Set(
      loaded.map((path) =>
        path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)|npmjs\.org\/((?:@[^/]+\/)?[^/]+)\//)
      ).map((m) => m?.[1] ?? m?.[2] ?? "?"),
    ),
  ];
}

Deno.test("kopf run of a handlers file loads no CommonJS module (its parser is no npm package)", async () => {
  await using api = await startApiServer();
  // An object for the create handler, there before the operator starts.
  const created = await fetch(`${api.url}/api/v1/namespaces/default/configmaps`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "lean" } }),
  });
  assert.equal(created.status, 201, await created.text());
  const dir = await Deno.makeTempDir({ prefix: "kopf-lean-run-" });
  try {
    const handlers = `${dir}/handlers.ts`;
    // Once the create handler's outcome is patched (the object has its last-handled annotation),
    // the operator has watched, handled and patched: the handlers file reports and stops it.
    await Deno.writeTextFile(
      handlers,
      `
import * as kopf from ${JSON.stringify(new URL("mod.ts", `file://${ROOT}`).href)};
kopf.on.create("configmaps", function created() {});
let reported = false;
kopf.on.event("configmaps", async function seen({ body }) {
  const annotations = body.metadata?.annotations ?? {};
  if (reported || !annotations["kopf.zalando.org/last-handled-configuration"]) return;
  reported = true;
  const { createRequire } = await import("node:module");
  console.log("LOADED " + JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));
  Deno.kill(Deno.pid, "SIGTERM");
});
`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "cli.ts", "run", "--standalone", "-A", "--quiet", handlers],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1", KUBECONFIG: api.kubeconfig.path },
      signal: AbortSignal.timeout(60_000),
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const line = text.split("\n").find((l) => l.startsWith("LOADED "));
    assert.ok(line, `no report from the handlers file:\n${text}\n${stderr}`);
    const loaded: string[] = JSON.parse(line.slice("LOADED ".length));
    assert.deepEqual(packagesOf(loaded), [], loaded.join("\n"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
