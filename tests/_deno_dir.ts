/**
 * Where this Deno keeps its cache (`DENO_DIR`), for a test that runs `deno` in a subprocess with
 * a `HOME` of its own: the cache is under `HOME` by default, and an empty one would mean
 * downloading the npm packages and compiling every module again (seconds of CPU and a network
 * dependency, per process).
 *
 * @module
 */

let asked: Promise<string> | undefined;

/**
 * This Deno's cache folder, as `deno info --json` names it (asked once per test module).
 *
 * @returns The folder's path.
 */
export function denoDir(): Promise<string> {
  asked ??= (async () => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(`deno info --json: ${new TextDecoder().decode(out.stderr)}`);
    return (JSON.parse(new TextDecoder().decode(out.stdout)) as { denoDir: string }).denoDir;
  })();
  return asked;
}
