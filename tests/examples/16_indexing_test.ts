import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, eventually, type Obj, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

testWithKubectl(
  "16-indexing: handlers of kopfexamples find pods by labels in the index, pre-existing ones included",
  async () => {
    await using c = await cluster();
    // A pod that exists before the operator starts: the readiness rule makes it visible at once.
    assert.equal(
      (await c.kubectl("run", "pod-a", "--image=nginx", "--labels=somelabel=somevalue")).code,
      0,
    );
    assert.equal(
      (await c.kubectl("run", "pod-b", "--image=nginx", "--labels=somelabel=other")).code,
      0,
    );
    assert.equal(
      (await c.kubectl("run", "pod-c", "--image=nginx", "--labels=somelabel=somevalue")).code,
      0,
    );
    const runner = await KopfRunner.start(
      ["run", "-A", "--verbose", `${ROOT}examples/16-indexing/example.ts`],
      { kubeconfig: c.api.kubeconfig.path },
    );
    try {
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await runner.waitFor("All handlers succeeded for creation.");
      const obj: Obj = await eventually(
        "the result in the status",
        async () =>
          JSON.parse(
            (await c.kubectl("get", "kopfexample", "kopf-example-1", "-o", "json")).stdout,
          ),
        (o: Obj) => o.status?.create_fn !== undefined,
      );
      assert.deepEqual(obj.status.create_fn, {
        pods: { "somelabel=somevalue": ["pod-a", "pod-c"] },
      });
      assert.match(runner.output, /Pod pod-a shares a label; running: (true|false)\./);

      // Changes while running: a deleted pod leaves the index, a new one joins it; the next
      // event of the object sees both.
      assert.equal((await c.kubectl("delete", "pod", "pod-a")).code, 0);
      assert.equal(
        (await c.kubectl("run", "pod-d", "--image=nginx", "--labels=somelabel=somevalue")).code,
        0,
      );
      let touch = 0;
      await eventually(
        "the index follows the pods",
        async () => {
          await c.kubectl(
            "annotate",
            "kopfexample",
            "kopf-example-1",
            `touch=${touch++}`,
            "--overwrite",
          );
          return runner.output;
        },
        (out: string) =>
          out.includes('Pods sharing the labels: {"somelabel=somevalue":["pod-c","pod-d"]'),
      );
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
  },
);
