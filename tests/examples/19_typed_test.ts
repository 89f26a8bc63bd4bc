import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, eventually, type Obj, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

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

testWithKubectl(
  "19-typed: Kopf's walkthrough, typed — kopf crd prints the CRD kubectl applies; the PVC child is created through api, adopted, resized, relabelled and collected with its parent",
  async () => {
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
    const getJson = async (...args: string[]): Promise<Obj> => {
      const r = await kubectl(["get", ...args, "-o", "json"]);
      return r.code === 0 ? JSON.parse(r.stdout) : undefined;
    };
    try {
      assert.equal((await kubectl(["apply", "-f", "-"], evc("1G"))).code, 0);
      await runner.waitFor("Handler 'create_fn' succeeded.");
      const created: Obj = await eventually(
        "the typed status",
        () => getJson("evc", "my-claim"),
        (o: Obj) => o?.status?.size === "1G",
      );
      assert.deepEqual(created.status.create_fn, { pvcName: "my-claim-pvc" });
      assert.match(runner.output, /PVC child is created: my-claim-pvc with 1G\./);

      // The child, created through the handler's api and adopted: owned by the claim.
      const pvc: Obj = await getJson("pvc", "my-claim-pvc");
      assert.equal(pvc.spec.resources.requests.storage, "1G");
      assert.deepEqual(
        pvc.metadata.ownerReferences.map((r: Obj) => [r.kind, r.name, r.uid]),
        [["EphemeralVolumeClaim", "my-claim", created.metadata.uid]],
      );

      // A new size is patched through to the child (the field handler: old and new are strings).
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
        "the PVC resized",
        () => getJson("pvc", "my-claim-pvc"),
        (o: Obj) => o?.spec?.resources?.requests?.storage === "2G",
      );
      assert.match(runner.output, /Resized from 1G to 2G\./);

      // Labels propagate to the child, and a removed label is removed there.
      assert.equal((await kubectl(["label", "evc", "my-claim", "application=some-app"])).code, 0);
      await eventually(
        "the label on the PVC",
        () => getJson("pvc", "my-claim-pvc"),
        (o: Obj) => o?.metadata?.labels?.application === "some-app",
      );
      assert.equal((await kubectl(["label", "evc", "my-claim", "application-"])).code, 0);
      await eventually(
        "the label gone from the PVC",
        () => getJson("pvc", "my-claim-pvc"),
        (o: Obj) => o !== undefined && o.metadata?.labels?.application === undefined,
      );

      // The printer columns of the definition.
      const table = await kubectl(["get", "evc"]);
      assert.match(table.stdout, /NAME\s+SIZE\s+PVC/);
      assert.match(table.stdout, /my-claim\s+2G\s+my-claim-pvc/);

      // Deleting the claim cascades to its child (the owner reference; the garbage collector).
      assert.equal((await kubectl(["delete", "evc", "my-claim"])).code, 0);
      await eventually("the PVC collected", () => getJson("pvc", "my-claim-pvc"), (o) => !o);
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
  },
);
