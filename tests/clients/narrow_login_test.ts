/**
 * The default login (`loginViaClient()` without a `KubeConfig`) under narrow
 * Deno permissions, in subprocesses: a kubeconfig in `KUBECONFIG` is used
 * before the in-cluster token is probed (so no `--allow-read=/var/run/secrets/…`
 * is asked for), the exact flags suffice (`--allow-read=<kubeconfig>`,
 * `--allow-env=KUBECONFIG,HOME`, `--allow-net=<host>`), a missing one is named
 * with its exact path or host, and a malformed kubeconfig names its file.
 */
import assert from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { startApiServer } from "../../testing.ts";

const PROBE = fromFileUrl(new URL("./_permission_probe.ts", import.meta.url));
const ROOT = fromFileUrl(new URL("../../", import.meta.url));

async function probe(flags: string[], env: Record<string, string>): Promise<string[]> {
  const { stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...flags, PROBE, "client-default"],
    stdout: "piped",
    stderr: "inherit",
    env,
  }).output();
  return new TextDecoder().decode(stdout).trim().split("\n");
}

Deno.test("loginViaClient(): KUBECONFIG first; exactly --allow-read=<kubeconfig> --allow-env=KUBECONFIG,HOME --allow-net=<host> suffice", async () => {
  await using server = await startApiServer({ token: "narrow" });
  const kubeconfig = server.kubeconfig.path;
  const host = new URL(server.url).host;
  const read = `--allow-read=${ROOT},${kubeconfig}`;
  const env = { KUBECONFIG: kubeconfig };
  assert.deepEqual(
    await probe([read, "--allow-env=KUBECONFIG,HOME", `--allow-net=${host}`], env),
    ["OK"],
  );
  assert.deepEqual(await probe([`--allow-read=${ROOT}`, "--allow-env=KUBECONFIG,HOME"], env), [
    "LoginError",
    `Reading the kubeconfig ${kubeconfig} needs read access to "${kubeconfig}": ` +
    `run with --allow-read=${kubeconfig}`,
  ]);
  assert.deepEqual(await probe([read, "--allow-env=KUBECONFIG,HOME"], env), [
    "AccessError",
    `Connecting to ${server.url} needs net access to "${host}": run with --allow-net=${host}`,
  ]);
});

Deno.test("loginViaClient(): a malformed kubeconfig names its file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-narrow-" });
  try {
    const bad = `${dir}/config`;
    await Deno.writeTextFile(bad, "clusters: [this is: not valid\n");
    const [name, message] = await probe(
      [`--allow-read=${ROOT},${dir}`, "--allow-env=KUBECONFIG,HOME"],
      { KUBECONFIG: bad },
    );
    assert.equal(name, "LoginError");
    assert.match(message!, new RegExp(`^The kubeconfig ${bad} is not valid`));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loginViaClient(): outside a pod, allowed to read the service account's directory, the kubeconfig lookup still names its flag", async () => {
  // In a pod (the token exists and may be read), a kubeconfig that may not be looked for is taken
  // as absent and the login goes on in-cluster; outside one, the missing flag is named.
  const sa = "/var/run/secrets/kubernetes.io/serviceaccount";
  assert.deepEqual(await probe([`--allow-read=${ROOT},${sa}`], {}), [
    "LoginError",
    "Finding the kubeconfig needs env access to KUBECONFIG and HOME: " +
    "run with --allow-env=KUBECONFIG,HOME, or pass the kubeconfig's path",
  ]);
});
