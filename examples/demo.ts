/**
 * The demo: an operator at work on the embedded Kubernetes API server.
 *
 * It starts the API server, applies the example CRD, runs the minimal example
 * operator (plus update and deletion handlers) in this process, creates,
 * updates and deletes an object with kubectl, shows the operator's log lines,
 * and stops — no cluster needed. Run it with `deno task demo`.
 *
 * Without kubectl on the PATH, the same steps go through plain HTTP requests.
 *
 * @module
 */

import { load as parse } from "npm:js-yaml@^5";
import { KopfRunner, startApiServer } from "../testing.ts";

const here = new URL(".", import.meta.url).pathname;
const home = await Deno.makeTempDir({ prefix: "kopf-demo-home-" });

async function hasKubectl(): Promise<boolean> {
  try {
    return (await new Deno.Command("kubectl", {
      args: ["version", "--client"],
      stdout: "null",
      stderr: "null",
    }).output())
      .success;
  } catch {
    return false;
  }
}

await using api = await startApiServer();
console.log(`# The embedded Kubernetes API server is up at ${api.url}`);
console.log(`# export KUBECONFIG=${api.kubeconfig.path}\n`);
const useKubectl = await hasKubectl();
if (!useKubectl) {
  console.log(
    "# kubectl is not installed (apt-get install kubernetes-client): using plain HTTP.\n",
  );
}

const base = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";
async function step(
  description: string,
  args: string[],
  http: () => Promise<Response>,
): Promise<void> {
  if (useKubectl) {
    console.log(`$ kubectl ${args.join(" ")}`);
    const out = await new Deno.Command("kubectl", {
      args,
      env: { KUBECONFIG: api.kubeconfig.path, HOME: home },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    console.log(text.trimEnd().replace(/^/gm, "  "));
    if (!out.success) throw new Error(`kubectl ${args[0]} failed (exit ${out.code})`);
  } else {
    const res = await http();
    console.log(`${description} → HTTP ${res.status}`);
    await res.body?.cancel();
  }
}
const post = (path: string, yamlFile: string) => () =>
  Deno.readTextFile(yamlFile).then((text) =>
    fetch(`${api.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(parse(text)),
    })
  );

try {
  await step(
    "create the CRD",
    ["apply", "-f", `${here}crd.yaml`],
    post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", `${here}crd.yaml`),
  );

  console.log(
    `\n$ kopf run -A examples/01-minimal/example.ts examples/demo/lifecycle.ts   (in this process)`,
  );
  const runner = await KopfRunner.start(
    [
      "run",
      "-A",
      "--log-format",
      "plain",
      `${here}01-minimal/example.ts`,
      `${here}demo/lifecycle.ts`,
    ],
    { kubeconfig: api.kubeconfig.path, echo: false },
  );
  let shown = 0;
  const show = () => {
    const lines = runner.output.split("\n").filter(Boolean);
    for (const line of lines.slice(shown)) console.log(`  | ${line}`);
    shown = lines.length;
  };

  console.log();
  await step("create an object", ["apply", "-f", `${here}obj.yaml`], post(base, `${here}obj.yaml`));
  await runner.waitFor("All handlers succeeded for creation.");
  show();

  console.log();
  await step(
    "update the object",
    ["patch", "kopfexample", "kopf-example-1", "--type=merge", "-p", '{"spec":{"duration":"2m"}}'],
    () =>
      fetch(`${api.url}${base}/kopf-example-1`, {
        method: "PATCH",
        headers: { "content-type": "application/merge-patch+json" },
        body: JSON.stringify({ spec: { duration: "2m" } }),
      }),
  );
  await runner.waitFor("All handlers succeeded for update.");
  show();

  console.log();
  await step(
    "delete the object",
    ["delete", "kopfexample", "kopf-example-1"],
    () => fetch(`${api.url}${base}/kopf-example-1`, { method: "DELETE" }),
  );
  await runner.waitFor("All handlers succeeded for deletion.");
  show();

  console.log("\n# Stopping the operator and the API server.");
  await runner.stop();
  show();
  console.log(`# Done: the operator exited with code ${runner.exitCode}.`);
  if (runner.exitCode !== 0) Deno.exitCode = 1;
} finally {
  await Deno.remove(home, { recursive: true }).catch(() => {});
}
