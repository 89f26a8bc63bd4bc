/**
 * 17-admission, end to end: the operator serves its validating and mutating handlers over
 * HTTPS and manages the webhook configurations; the embedded API server calls them as a real
 * one does; kubectl shows the denials and the warnings; a persistent webhook outlives the
 * operator.
 */
import assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { KopfRunner } from "../../testing.ts";
import { Kubectl, kubectlMatrix, testWithKubectl } from "../apiserver/_kubectl.ts";
import { cluster, eventually, type Obj, ROOT } from "./_setup.ts";

const MANAGED = "auto.kopf.dev";

testWithKubectl(
  "17-admission: managed webhooks validate and mutate; kubectl sees denials, warnings, dry runs",
  async (t) => {
    await using c = await cluster();
    const getJson = async (...args: string[]): Promise<Obj> => {
      const r = await c.kubectl("get", ...args, "-o", "json");
      return r.code === 0 ? JSON.parse(r.stdout) : undefined;
    };
    const runner = await KopfRunner.start(
      ["run", "-A", "--verbose", `${ROOT}examples/17-admission/example.ts`],
      { kubeconfig: c.api.kubeconfig.path },
    );
    try {
      // The managed configurations: one webhook per handler, pointing at the operator's server.
      const validating = await eventually(
        "the validating configuration",
        () => getJson("validatingwebhookconfiguration", MANAGED),
        (x) => x?.webhooks?.length === 4,
      );
      assert.deepEqual(validating.webhooks.map((w: Obj) => w.name).sort(), [
        "authhook.auto.kopf.dev",
        "validate1.auto.kopf.dev",
        "validate2.auto.kopf.dev",
        "validatewhenaway.auto.kopf.dev",
      ]);
      const mutating = await eventually(
        "the mutating configuration",
        () => getJson("mutatingwebhookconfiguration", MANAGED),
        (x) => x?.webhooks?.length === 1,
      );
      assert.equal(mutating.webhooks[0].name, "mutate1.auto.kopf.dev");
      assert.deepEqual(mutating.webhooks[0].objectSelector, {
        matchExpressions: [{ key: "somelabel", operator: "In", values: ["somevalue"] }],
      });
      assert.match(mutating.webhooks[0].clientConfig.url, /^https:\/\/[^/]+\/mutate1$/);
      assert.ok(mutating.webhooks[0].clientConfig.caBundle, "the operator's CA");

      // Admitted: mutated (the label matches), with the validating handler's warning.
      const applied = await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`);
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stderr, /^Warning: Admitted for \S+\.$/m);
      const stored = await getJson("kopfexample", "kopf-example-1");
      assert.equal(stored.spec.injected, 123, "mutate1's patch is in the stored object");

      // Denied, with the handler's message, as kubectl prints it.
      const denied = await c.kubectl(
        "patch",
        "kopfexample",
        "kopf-example-1",
        "--type=merge",
        "-p",
        '{"spec":{"field":"wrong"}}',
      );
      assert.notEqual(denied.code, 0);
      assert.match(
        denied.stderr,
        /admission webhook "validate1\.auto\.kopf\.dev" denied the request: Meh! I don't like it\. Change the field\./,
      );
      const lazy = await c.kubectl(
        "patch",
        "kopfexample",
        "kopf-example-1",
        "--type=merge",
        "-p",
        '{"spec":{"field":"not-allowed"}}',
      );
      assert.match(
        lazy.stderr,
        /admission webhook "validate2\.auto\.kopf\.dev" denied the request: I'm too lazy anyway\. Go away!/,
      );

      // The same with each kubectl version at hand (1.27 and 1.33 where installed), one step each;
      // a version not at hand is a step that says it did not run.
      const { binaries, notRun } = kubectlMatrix(["1.27", "1.33"]);
      for (const { version, why } of notRun) {
        await t.step({ name: `kubectl ${version} (not run: ${why})`, ignore: true, fn() {} });
      }
      for (const binary of binaries) {
        await t.step(binary.label, async () => {
          await using k = await Kubectl.create(binary, c.api.kubeconfig.path);
          const r = await k.run([
            "patch",
            "kopfexample",
            "kopf-example-1",
            "--type=merge",
            "-p",
            '{"spec":{"field":"wrong","n":1}}',
          ]);
          assert.notEqual(r.code, 0, binary.label);
          assert.match(
            r.stderr,
            /^Error from server: admission webhook "validate1\.auto\.kopf\.dev" denied the request: Meh! I don't like it\. Change the field\.$/m,
            binary.label,
          );
          const labelled = await k.run([
            "label",
            "--overwrite",
            "kopfexample",
            "kopf-example-1",
            `by=${binary.label.replace(/\W+/g, "-")}`,
          ]);
          assert.equal(labelled.code, 0, `${binary.label}: ${labelled.stderr}`);
          assert.match(labelled.stderr, /^Warning: Admitted for \S+\.$/m, binary.label);
        });
      }

      // The same through @kubernetes/client-node: a create (mutated), an update (denied).
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(c.api.kubeconfig.path);
      const custom = kc.makeApiClient(k8s.CustomObjectsApi);
      const where = {
        group: "kopf.dev",
        version: "v1",
        namespace: "default",
        plural: "kopfexamples",
      };
      const made = await custom.createNamespacedCustomObject({
        ...where,
        body: {
          apiVersion: "kopf.dev/v1",
          kind: "KopfExample",
          metadata: { name: "by-client-node", labels: { somelabel: "somevalue" } },
          spec: { field: "value" },
        },
      }) as Obj;
      assert.equal(made.spec.injected, 123);
      const refusal = await custom.replaceNamespacedCustomObject({
        ...where,
        name: "by-client-node",
        body: { ...made, spec: { ...made.spec, field: "wrong" } },
      }).then(() => undefined, (e: unknown) => e as { code?: number; body?: string });
      assert.equal(refusal?.code, 400);
      assert.match(
        String(refusal?.body),
        /admission webhook \\?"validate1\.auto\.kopf\.dev\\?" denied the request: Meh!/,
      );

      // A server-side dry run reaches the handlers with dryrun=true (validate1 lets it pass),
      // and stores nothing.
      const dry = await c.kubectl(
        "patch",
        "kopfexample",
        "kopf-example-1",
        "--type=merge",
        "--dry-run=server",
        "-p",
        '{"spec":{"field":"wrong"}}',
      );
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal((await getJson("kopfexample", "kopf-example-1")).spec.field, "value");

      // A delete goes through every webhook (mutate1 is registered for all operations) with the
      // stored object as oldObject; the operator admits it and the object goes.
      const deleted = await c.kubectl("delete", "kopfexample", "kopf-example-1");
      assert.equal(deleted.code, 0, deleted.stderr);
      assert.match(deleted.stdout, /kopfexample\.kopf\.dev "kopf-example-1" deleted/);
      assert.equal(await getJson("kopfexample", "kopf-example-1"), undefined);
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.match(runner.output, /Handler 'validate1' failed permanently: Meh!/);

    // The operator is gone: only the persistent webhook stays, and its ignoreFailures admits.
    const left = await getJson("validatingwebhookconfiguration", MANAGED);
    assert.deepEqual(left.webhooks.map((w: Obj) => w.name), ["validatewhenaway.auto.kopf.dev"]);
    assert.equal(left.webhooks[0].failurePolicy, "Ignore");
    const obj = (name: string) =>
      JSON.stringify({ apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name } });
    const admitted = await create(c.api.kubeconfig.path, obj("while-away"));
    assert.equal(admitted.code, 0, admitted.stderr);
    // With the default failurePolicy (Fail), the same webhook refuses while nobody answers.
    left.webhooks[0].failurePolicy = "Fail";
    const replaced = await replace(c.api.kubeconfig.path, JSON.stringify(left));
    assert.equal(replaced.code, 0, replaced.stderr);
    const refused = await create(c.api.kubeconfig.path, obj("refused"));
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stderr,
      /Internal error occurred: failed calling webhook "validatewhenaway\.auto\.kopf\.dev": failed to call webhook: Post "https:\/\/[^"]+\/validateWhenAway\?timeout=30s": dial tcp [^:]+:\d+: connect: connection refused/,
    );
  },
);

async function kubectlStdin(kubeconfig: string, args: string[], input: string) {
  const child = new Deno.Command("kubectl", {
    args: ["--kubeconfig", kubeconfig, ...args, "-f", "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

function create(kubeconfig: string, input: string) {
  return kubectlStdin(kubeconfig, ["create"], input);
}

function replace(kubeconfig: string, input: string) {
  return kubectlStdin(kubeconfig, ["replace"], input);
}
