/**
 * `deno check` of the type-level fixtures under tests/fixtures/typed/ (which the repository's
 * `deno task check` excludes: some of them must fail), with the repository's imports and
 * compiler options. One process checks several files; the output names each failing file.
 *
 * A check costs seconds of CPU (the module's whole graph is type-checked each time, and a
 * fixture that fails is never in Deno's check cache), so a test file checks its good and bad
 * fixtures in one process ({@link sharedCheck}): the bad ones must fail with their errors, the
 * good ones must have none ({@link strayErrors}).
 *
 * @module
 */

/** The repository root (with a trailing slash). */
export const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * Type-checks files as the repository would, were they not excluded.
 *
 * @param files Paths relative to the repository root.
 * @returns deno check's exit code and its combined output (without colours).
 */
export async function denoCheck(...files: string[]): Promise<{ code: number; output: string }> {
  const dir = await Deno.makeTempDir({ prefix: "kopf-typed-" });
  try {
    const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
    const { imports, compilerOptions } = config;
    await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify({ imports, compilerOptions }));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--config", `${dir}/deno.json`, "--no-lock", ...files],
      cwd: ROOT,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    return { code: out.code, output: dec.decode(out.stdout) + dec.decode(out.stderr) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * The TS errors of a check's output, by the fixture file they are in.
 *
 * @param output deno check's output.
 * @returns File name (e.g. `typo.ts`) → the error lines (`TS2339 [ERROR]: …`) found in it.
 */
export function errorsByFile(output: string): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  // Each error: "TSnnnn [ERROR]: message", source lines, then "    at file:///…/name.ts:l:c".
  for (const block of output.split(/\n(?=TS\d+ \[ERROR\])/)) {
    const error = /^TS\d+ \[ERROR\]: .*$/m.exec(block)?.[0];
    const file = /at file:\/\/\S*\/([^/\s]+\.ts):\d+:\d+/.exec(block)?.[1];
    if (!error || !file) continue;
    byFile.set(file, [...(byFile.get(file) ?? []), error]);
  }
  return byFile;
}

/**
 * One `deno check` of `files`, run at the first call and shared by every later one (by the tests
 * of one file).
 *
 * @param files Paths relative to the repository root.
 * @returns A function that returns the one check's result.
 */
export function sharedCheck(...files: string[]): () => Promise<{ code: number; output: string }> {
  let result: Promise<{ code: number; output: string }> | undefined;
  return () => result ??= denoCheck(...files);
}

/**
 * What in a check's output is not an error of the fixtures meant to fail: a TS error in any
 * other file (a good fixture, a shared one, the module) or in none named, and any `error:` line
 * but the closing "Type checking failed.".
 *
 * @param output deno check's output.
 * @param bad The fixtures that are meant to fail (file names, e.g. `typo.ts`).
 * @returns The stray errors' lines; empty when the other files type-check.
 */
export function strayErrors(output: string, bad: string[]): string[] {
  const stray: string[] = [];
  for (const block of output.split(/\n(?=TS\d+ \[ERROR\])/)) {
    const error = /^TS\d+ \[ERROR\]: .*$/m.exec(block)?.[0];
    if (!error) continue;
    const file = /at file:\/\/\S*\/([^/\s]+\.ts):\d+:\d+/.exec(block)?.[1];
    if (!file || !bad.includes(file)) stray.push(`${file ?? "?"}: ${error}`);
  }
  for (const line of output.split("\n")) {
    if (/^error: /.test(line) && line !== "error: Type checking failed.") stray.push(line);
  }
  return stray;
}
