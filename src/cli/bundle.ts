/**
 * `kopf bundle handlers.ts [-o DIR]`: the handler files, kopf and `kopf run` in a few minified
 * JavaScript files (`deno bundle`), for a process that starts leaner. Run the bundle as `kopf
 * run` is run, with `kopf run`'s flags: `deno run --cached-only … DIR/main.js -A handlers.ts`.
 *
 * Why: Deno holds the source of every module it loads (and a module graph of them), and reads
 * every module that an analysable `import()` names when the process starts. An operator from
 * its ~180 source modules idles at ≈66 MiB here; from this bundle at ≈50 (docs/deployment.md).
 *
 * What is done, in order:
 * 1. an entry module, written aside and removed after: `kopf.main()` with each file as a
 *    loader (`RunControls.bundled`), so that `kopf run` loads it as it loads a file from the
 *    disk — after its logging is set up, into the run's registry;
 * 2. `deno bundle --minify --keep-names --code-splitting --platform deno`: the names kept, since
 *    a handler's id is its function's name (renamed functions would be new handlers to the
 *    objects' annotations); the chunks split, so that what an operator does not use (the
 *    webhook servers, the client library's login, …) is loaded on its first use, as from the
 *    sources;
 * 3. each `import("./chunk.js")` between the bundle's files is made one that Deno does not
 *    analyse (`import(String("./chunk.js"))`): Deno would read them all at the start;
 * 4. `deno cache` of every file written: Deno analyses a module the first time it loads it and
 *    keeps the result in its cache (`DENO_DIR`); a first start without it takes ≈3× the memory.
 *
 * The bundle is built in a temporary directory beside DIR and moved in when whole: a failed
 * bundling leaves DIR as it was.
 *
 * @module
 */

/** The bundle could not be written: one line that names what and why. */
export class BundleError extends Error {
  override name = "BundleError";
}

/** The flags of `deno bundle` for an operator (see the module's doc). */
export const BUNDLE_FLAGS: readonly string[] = [
  "--minify",
  "--keep-names",
  "--code-splitting",
  "--platform",
  "deno",
];

/** The file in a bundle's directory that lists what `kopf bundle` wrote there. */
const MARKER = ".kopf-bundle.json";

/** What a bundle is: its entry and its files. */
export interface Bundle {
  /** The entry to run (absolute path). */
  entry: string;
  /** The files written (names in the directory). */
  files: string[];
  /** Their size in all, in bytes. */
  bytes: number;
}

/**
 * A handler file's key in a bundle: the path as named on the command line, without `./` and
 * `..` steps, so that `./handlers.ts` and `handlers.ts` are one file.
 *
 * @param path The path as given.
 * @returns The key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bundleKey } from "./bundle.ts";
 * assert.equal(bundleKey("./handlers.ts"), "handlers.ts");
 * assert.equal(bundleKey("ops/../handlers.ts"), "handlers.ts");
 * assert.equal(bundleKey("/app/handlers.ts"), "/app/handlers.ts");
 * ```
 */
export function bundleKey(path: string): string {
  const absolute = path.startsWith("/");
  const steps: string[] = [];
  for (const step of path.split("/")) {
    if (step === "" || step === ".") continue;
    if (step === ".." && steps.length && steps.at(-1) !== "..") steps.pop();
    else if (step !== ".." || !absolute) steps.push(step);
  }
  return (absolute ? "/" : "") + steps.join("/");
}

/**
 * Bundles a module and what it imports into a directory, as `kopf bundle` does (steps 2–4 of the
 * module's doc): `deno bundle` with {@link BUNDLE_FLAGS}, the bundle's own `import()`s made
 * unanalysable, every file cached. It is built aside (a temporary directory beside it) and moved
 * in only when whole: a failed bundling leaves the directory as it was. An earlier bundle's files
 * there are replaced; a directory with other files is refused.
 *
 * @param module The entry module's path.
 * @param outdir The directory (created if missing).
 * @param deno The `deno` executable (default: this one).
 * @returns The bundle.
 * @throws {BundleError} If the directory holds other files, or `deno bundle` or `deno cache` fails.
 */
export async function bundleModule(
  module: string,
  outdir: string,
  deno: string = Deno.execPath(),
): Promise<Bundle> {
  const previous = await earlier(outdir);
  const name = module.split("/").pop()!.replace(/\.[cm]?[jt]sx?$/, "");
  await Deno.mkdir(outdir, { recursive: true });
  const aside = await Deno.makeTempDir({ dir: parentOf(outdir), prefix: ".kopf-bundle-" });
  try {
    const built = await command(deno, ["bundle", ...BUNDLE_FLAGS, "--outdir", aside, module]);
    if (built) throw new BundleError(`deno bundle of ${module} failed: ${built}`);
    const files: string[] = [];
    for await (const entry of Deno.readDir(aside)) {
      if (entry.isFile && entry.name.endsWith(".js")) files.push(entry.name);
    }
    files.sort();
    const own = new Set(files);
    if (!own.has(`${name}.js`)) {
      throw new BundleError(`deno bundle wrote no ${name}.js for ${module}: ${files.join(", ")}`);
    }
    let bytes = 0;
    for (const file of files) {
      const path = `${aside}/${file}`;
      const text = await Deno.readTextFile(path);
      const rewritten = text.replace(
        /\bimport\((["'])\.\/([\w.-]+\.js)\1\)/g,
        (whole, quote: string, chunk: string) =>
          own.has(chunk) ? `import(String(${quote}./${chunk}${quote}))` : whole,
      );
      if (rewritten !== text) await Deno.writeTextFile(path, rewritten);
      bytes += new TextEncoder().encode(rewritten).length;
    }
    // Whole now: the earlier bundle out, this one in, then its list (what a next bundle replaces).
    for (const file of previous) await Deno.remove(`${outdir}/${file}`).catch(() => {});
    for (const file of files) await Deno.rename(`${aside}/${file}`, `${outdir}/${file}`);
    await Deno.writeTextFile(`${outdir}/${MARKER}`, JSON.stringify({ files }) + "\n");
    const cached = await command(deno, ["cache", ...files.map((f) => `${outdir}/${f}`)]);
    if (cached) throw new BundleError(`deno cache of the bundle in ${outdir} failed: ${cached}`);
    return { entry: `${await Deno.realPath(outdir)}/${name}.js`, files, bytes };
  } finally {
    await Deno.remove(aside, { recursive: true }).catch(() => {});
  }
}

/**
 * `kopf bundle`: bundles handler files with `kopf run` into `outdir/main.js`.
 *
 * @param paths The handler files.
 * @param outdir The directory.
 * @param write Where the summary line goes (default stdout).
 * @returns The exit code (0).
 * @throws {BundleError} For a missing file, a directory of other files, or a failed bundling.
 */
export async function runBundle(
  paths: string[],
  outdir: string,
  write: (line: string) => void = console.log,
): Promise<number> {
  const loaders: string[] = [];
  const seen = new Set<string>();
  for (const path of paths) {
    const key = bundleKey(path);
    if (seen.has(key)) continue;
    seen.add(key);
    let real: string;
    try {
      real = await Deno.realPath(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        throw new BundleError(`cannot bundle ${path}: no such file (check the path)`);
      }
      throw e;
    }
    if (!(await Deno.stat(real)).isFile) {
      throw new BundleError(`cannot bundle ${path}: it is not a file (name the handlers file)`);
    }
    loaders.push(`  ${JSON.stringify(key)}: () => import(${JSON.stringify(fileUrl(real))}),`);
  }
  const entryDir = await Deno.makeTempDir({ dir: parentOf(outdir), prefix: ".kopf-entry-" });
  try {
    const main = `${entryDir}/main.ts`;
    await Deno.writeTextFile(
      main,
      [
        "// The entry of a bundle, written by `kopf bundle` (and removed after it).",
        `import { main } from ${JSON.stringify(new URL("./entry.ts", import.meta.url).href)};`,
        "const bundled = {",
        ...loaders,
        "};",
        "Deno.exit(await main(Deno.args, { bundled }));",
        "",
      ].join("\n"),
    );
    const bundle = await bundleModule(main, outdir).catch((e) => {
      // The entry is ours and temporary: the files are what the user named.
      throw e instanceof BundleError
        ? new BundleError(e.message.replace(`of ${main} `, `of ${[...seen].join(", ")} `))
        : e;
    });
    write(
      `Bundled ${[...seen].join(", ")} with kopf into ${outdir}/main.js ` +
        `(${bundle.files.length} files, ${Math.round(bundle.bytes / 1024)} KiB): run it with ` +
        `kopf run's flags, e.g. deno run --cached-only -A ${outdir}/main.js -A ${[...seen][0]}`,
    );
    return 0;
  } finally {
    await Deno.remove(entryDir, { recursive: true }).catch(() => {});
  }
}

/** The directory a path is in (`.` for a bare name), where the bundle is built aside. */
function parentOf(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  const at = trimmed.lastIndexOf("/");
  return at > 0 ? trimmed.slice(0, at) : at === 0 ? "/" : ".";
}

/** A file's URL (POSIX paths: `kopf bundle` runs where the image is built). */
function fileUrl(path: string): string {
  return new URL(`file://${path.split("/").map(encodeURIComponent).join("/")}`).href;
}

/**
 * The files of an earlier bundle in a directory (none if it is new or empty).
 *
 * @throws {BundleError} If it holds anything else.
 */
async function earlier(outdir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(outdir)) names.push(e.name);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  let previous: string[] = [];
  try {
    const listed = JSON.parse(await Deno.readTextFile(`${outdir}/${MARKER}`)) as { files: unknown };
    if (Array.isArray(listed.files)) {
      previous = listed.files.filter((f): f is string =>
        typeof f === "string" && f !== "" && !f.includes("/") && f !== "." && f !== ".."
      );
    }
  } catch {
    // No list (or an unreadable one): then only an empty directory is taken.
  }
  const known = new Set([...previous, MARKER]);
  const other = names.filter((n) => !known.has(n));
  if (other.length) {
    throw new BundleError(
      `${outdir} holds files that kopf bundle did not write (${other.slice(0, 3).join(", ")}` +
        `${other.length > 3 ? ", …" : ""}): give an empty or new directory with -o`,
    );
  }
  return previous.filter((f) => names.includes(f));
}

/** Runs a command; returns "" on success, or the first lines of its output on failure. */
async function command(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  if (out.success) return "";
  const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
  // deno-lint-ignore no-control-regex
  const lines = text.replace(/\x1b\[[0-9;]*m/g, "").split("\n").map((l) => l.trim());
  // Its first error and where it is; not its notices, the source excerpt, nor its backtrace.
  const error = lines.find((l) => /^error: /.test(l))?.replace(/^error: /, "");
  const at = lines.find((l) => /^at \S+:\d+:\d+$/.test(l))?.replace(/^at (file:\/\/)?/, "");
  return error ? (at ? `${error} (at ${at})` : error) : `exit code ${out.code}`;
}
