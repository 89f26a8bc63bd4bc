import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, eventually, type Obj, ROOT } from "./_setup.ts";

const EXAMPLE = `${ROOT}examples/19-typed/example.ts`;

/** Runs a command, optionally with stdin, and returns its code and output. */
async function run(
  cmd: string,
  args: string[],
  stdin?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(cmd, {
    args,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("19-typed: kopf crd prints a CRD that kubectl applies; the operator's typed handlers run", async () => {
  await using c = await cluster();
  const kubeconfig = c.api.kubeconfig.path;
  const kubectl = (args: string[], stdin?: string) =>
    run("kubectl", ["--kubeconfig", kubeconfig, ...args], stdin);

  // The CRD from the definition in the code, applied as a user would: `kopf crd … | kubectl apply -f -`.
  const crd = await run(Deno.execPath(), ["run", "-A", `${ROOT}cli.ts`, "crd", EXAMPLE]);
  assert.equal(crd.code, 0, crd.stderr);
  assert.match(
    crd.stdout,
    /^apiVersion: apiextensions\.k8s\.io\/v1\nkind: CustomResourceDefinition/,
  );
  const applied = await kubectl(["apply", "-f", "-"], crd.stdout);
  assert.equal(applied.code, 0, applied.stderr);
  assert.match(
    applied.stdout,
    /customresourcedefinition\.apiextensions\.k8s\.io\/ephemeralvolumeclaims\.kopf\.dev created/,
  );

  // The API server validates objects against the generated schema: a number is not a size.
  const evc = (size: unknown) =>
    JSON.stringify({
      apiVersion: "kopf.dev/v1",
      kind: "EphemeralVolumeClaim",
      metadata: { name: "my-claim", namespace: "default" },
      spec: { size },
    });
  const refused = await kubectl(["apply", "-f", "-"], evc(1));
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /spec\.size/);

  const runner = await KopfRunner.start(["run", "-A", "--verbose", EXAMPLE], { kubeconfig });
  try {
    assert.equal((await kubectl(["apply", "-f", "-"], evc("1G"))).code, 0);
    await runner.waitFor("Handler 'create_fn' succeeded.");
    const created: Obj = await eventually(
      "the typed status",
      async () =>
        JSON.parse((await kubectl(["get", "evc", "my-claim", "-o", "json"])).stdout || "{}"),
      (o: Obj) => o.status?.size === "1G",
    );
    assert.equal(created.status.pvcName, "my-claim-pvc");
    assert.match(runner.output, /Claimed 1G for my-claim\./);

    // The field handler: old and new are the field's values.
    const patched = await kubectl([
      "patch",
      "evc",
      "my-claim",
      "--type=merge",
      "-p",
      '{"spec":{"size":"2G"}}',
    ]);
    assert.equal(patched.code, 0, patched.stderr);
    await eventually(
      "the resize",
      async () =>
        JSON.parse((await kubectl(["get", "evc", "my-claim", "-o", "json"])).stdout || "{}"),
      (o: Obj) => o.status?.size === "2G",
    );
    assert.match(runner.output, /Resized from 1G to 2G\./);

    // The printer columns of the definition.
    const table = await kubectl(["get", "evc"]);
    assert.match(table.stdout, /NAME\s+SIZE\s+PVC/);
    assert.match(table.stdout, /my-claim\s+2G\s+my-claim-pvc/);
  } finally {
    await runner.stop();
  }
  assert.equal(runner.exitCode, 0);
  assert.equal(runner.exception, undefined);
});
