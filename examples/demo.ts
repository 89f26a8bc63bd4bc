/**
 * The demo: the embedded Kubernetes API server at work, driven by kubectl.
 *
 * It starts the server, applies the example CRD and an object, lists them with
 * their printer columns, watches while the object is patched and deleted, and
 * stops — no cluster needed. Run it with `deno task demo`.
 *
 * Without kubectl on the PATH, the same steps run through plain HTTP requests.
 *
 * @module
 */

import { startApiServer } from "../testing.ts";

const here = new URL(".", import.meta.url).pathname;

async function kubectlAvailable(): Promise<boolean> {
  try {
    const out = await new Deno.Command("kubectl", {
      args: ["version", "--client"],
      stdout: "null",
      stderr: "null",
    })
      .output();
    return out.success;
  } catch {
    return false;
  }
}

await using api = await startApiServer();
console.log(`# The embedded API server is up at ${api.url}`);
console.log(`# export KUBECONFIG=${api.kubeconfig.path}\n`);

const home = await Deno.makeTempDir({ prefix: "kopf-demo-home-" });
const env = { KUBECONFIG: api.kubeconfig.path, HOME: home };

async function kubectl(...args: string[]): Promise<void> {
  console.log(`$ kubectl ${args.join(" ")}`);
  const out = await new Deno.Command("kubectl", { args, env, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  console.log(text.trimEnd().replace(/^/gm, "  "));
  if (!out.success) throw new Error(`kubectl ${args[0]} failed (exit ${out.code})`);
}

try {
  if (await kubectlAvailable()) {
    await kubectl("apply", "-f", `${here}crd.yaml`);
    await kubectl(
      "wait",
      "--for=condition=Established",
      "crd/kopfexamples.kopf.dev",
      "--timeout=10s",
    );
    await kubectl("apply", "-f", `${here}obj.yaml`);
    await kubectl("get", "kopfexamples");

    const watchArgs = ["get", "kopfexamples", "--watch-only", "--output-watch-events"];
    console.log(`$ kubectl ${watchArgs.join(" ")}   (in the background)`);
    const watcher = new Deno.Command("kubectl", {
      args: watchArgs,
      env,
      stdout: "piped",
      stderr: "null",
    })
      .spawn();
    await new Promise((r) => setTimeout(r, 500));

    await kubectl(
      "patch",
      "kopfexample",
      "kopf-example-1",
      "--type=merge",
      "-p",
      '{"spec":{"duration":"2m"}}',
    );
    await kubectl("label", "kopfexample", "kopf-example-1", "stage=demo");
    await kubectl("delete", "kopfexample", "kopf-example-1");
    await new Promise((r) => setTimeout(r, 500));
    watcher.kill("SIGTERM");
    const seen = new TextDecoder().decode((await watcher.output()).stdout);
    console.log("  what the watch saw:");
    console.log(seen.trimEnd().replace(/^/gm, "    "));
    await kubectl("get", "kopfexamples");
  } else {
    console.log(
      "# kubectl is not installed (apt-get install kubernetes-client); doing the same over HTTP.\n",
    );
    const { parse } = await import("yaml");
    const send = async (
      method: string,
      path: string,
      body?: unknown,
      type = "application/json",
    ) => {
      const res = await fetch(`${api.url}${path}`, {
        method,
        ...(body ? { body: JSON.stringify(body), headers: { "content-type": type } } : {}),
      });
      const json = await res.json();
      console.log(`${method} ${path} → ${res.status}`);
      return json;
    };
    await send(
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      parse(await Deno.readTextFile(`${here}crd.yaml`)),
    );
    const base = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";
    await send("POST", base, parse(await Deno.readTextFile(`${here}obj.yaml`)));
    const list = await send("GET", base);
    console.log(
      `  objects: ${
        list.items.map((o: { metadata: { name: string } }) => o.metadata.name).join(", ")
      }`,
    );
    const patched = await send(
      "PATCH",
      `${base}/kopf-example-1`,
      { spec: { duration: "2m" } },
      "application/merge-patch+json",
    );
    console.log(
      `  duration is now ${patched.spec.duration}, generation ${patched.metadata.generation}`,
    );
    await send("DELETE", `${base}/kopf-example-1`);
  }
  console.log("\n# Stopping the API server. Done.");
} finally {
  await Deno.remove(home, { recursive: true }).catch(() => {});
}
