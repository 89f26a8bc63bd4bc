/**
 * `deno check` of the type-level fixtures under tests/fixtures/typed/ (which the repository's
 * `deno task check` excludes: some of them must fail), with the repository's imports and
 * compiler options. One process checks several files; the output names each failing file.
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
