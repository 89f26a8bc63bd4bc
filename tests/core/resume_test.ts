import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { cluster, ROOT } from "../examples/_setup.ts";

Deno.test("an object created while the operator was down is created and resumed, a shared function runs once", async () => {
  await using c = await cluster();
  assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
  const registry = new kopf.OperatorRegistry();
  const calls: string[] = [];
  function both({ reason }: kopf.ChangingContext) {
    calls.push(`both:${reason}`);
  }
  kopf.on.resume("kopfexamples", { registry }, both);
  kopf.on.create("kopfexamples", { registry }, both);
  kopf.on.resume("kopfexamples", { registry }, function resumeOnly() {
    calls.push("resumeOnly");
  });
  {
    await using runner = await KopfRunner.start(["run", "-A"], {
      registry,
      kubeconfig: c.api.kubeconfig.path,
    });
    await runner.waitFor("All handlers succeeded for creation.");
  }
  assert.deepEqual(calls, ["both:create", "resumeOnly"]);

  // Created while the operator runs: creation only, no resuming.
  calls.length = 0;
  {
    await using runner = await KopfRunner.start(["run", "-A"], {
      registry,
      kubeconfig: c.api.kubeconfig.path,
    });
    await runner.waitFor("All handlers succeeded for resuming.");
    assert.deepEqual(
      calls,
      ["both:resume", "resumeOnly"],
      "an already handled object is only resumed",
    );
    calls.length = 0;
    const manifest = (await Deno.readTextFile(`${ROOT}examples/obj.yaml`)).replace(
      "kopf-example-1",
      "kopf-example-2",
    );
    const file = await Deno.makeTempFile({ suffix: ".yaml" });
    await Deno.writeTextFile(file, manifest);
    assert.equal((await c.kubectl("apply", "-f", file)).code, 0);
    await runner.waitFor(/kopf-example-2\] All handlers succeeded for creation/);
    await Deno.remove(file);
  }
  assert.deepEqual(calls, ["both:create"]);
});
