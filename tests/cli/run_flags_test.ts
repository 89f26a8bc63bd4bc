/**
 * Flags of `kopf run` that nothing else would notice broken (issue 26), run in-process through
 * the real command line (`KopfRunner.start`) against the embedded API server: `-m/--module`
 * imports a module whose handlers then handle objects, and `--leader-election-namespace` puts
 * the leader-election Lease in that namespace (and not in the default one).
 */

import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, ROOT, until } from "../reactor/_setup.ts";

const LEASES = (ns: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;

Deno.test("kopf run -m: the module's handlers are loaded and handle objects; --leader-election-namespace places the Lease", async () => {
  await using c = await cluster();
  await c.createNamespace("elect");
  const dir = await Deno.makeTempDir({ prefix: "kopf-run-flags-" });
  try {
    const module = `${dir}/handlers_module.ts`;
    await Deno.writeTextFile(
      module,
      `import * as kopf from "${ROOT}mod.ts";
kopf.on.create("kopfexamples", function fromModule({ name }) {
  return { loadedBy: "-m", name };
});
`,
    );
    await using runner = await KopfRunner.start([
      "run",
      "--standalone",
      "-A",
      "--leader-election",
      "--leader-election-namespace",
      "elect",
      "-m",
      module,
    ], { kubeconfig: c.api.kubeconfig.path });
    await c.createKex("default", "k1");
    await until(
      async () => (await c.getKex("default", "k1"))?.status?.fromModule?.loadedBy === "-m",
      "the module's handler ran on k1",
    );
    const elect = (await c.call("GET", LEASES("elect"))).body.items;
    assert.deepEqual(elect.map((l: { metadata: { name: string } }) => l.metadata.name), [
      "kopf-leader-default",
    ]);
    assert.ok(elect[0].spec.holderIdentity, "held by this operator");
    const inDefault = (await c.call("GET", LEASES("default"))).body.items;
    assert.deepEqual(inDefault.map((l: { metadata: { name: string } }) => l.metadata.name), []);
    await runner.stop();
    assert.equal(runner.exitCode, 0, runner.output);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
