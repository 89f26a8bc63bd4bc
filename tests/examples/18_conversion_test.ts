/**
 * 18-conversion, end to end: KopfExample is upgraded from v1 to v2 while objects exist, with
 * the example operator as the CRD's conversion webhook. kubectl 1.27 and 1.33 read both
 * versions; a watch of either version sees the other's writes; a v2 handler sees objects
 * created at v1; a v2 validating handler guards v1 writes too; the stored objects are migrated
 * to v2 as the example's header says — proven by reading them at v2 after the operator (the
 * only converter) has gone.
 */
import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { findKubectls, Kubectl, testWithKubectl } from "../apiserver/_kubectl.ts";
import { cluster, eventually, type Obj, ROOT } from "./_setup.ts";

const V1 = "kopfexamples.v1.kopf.dev";
const V2 = "kopfexamples.v2.kopf.dev";
const DIR = `${ROOT}examples/18-conversion`;
const LINE = '{.apiVersion} {.metadata.name} {.spec.field}{.spec.message}{"\\n"}';

testWithKubectl(
  "18-conversion: a CRD upgraded from v1 to v2 while objects exist, converted by the operator",
  async () => {
    await using c = await cluster();
    const [older, newer] = findKubectls(["1.27", "1.33"]);
    assert.ok(older && newer, "two kubectl binaries (or the plain one for both)");
    await using k27 = await Kubectl.create(older, c.api.kubeconfig.path);
    await using k33 = await Kubectl.create(newer ?? older, c.api.kubeconfig.path);
    const json = async (k: Kubectl, ...args: string[]): Promise<Obj> =>
      JSON.parse(await k.ok(["get", ...args, "-o", "json"]));

    // Before the upgrade: an object at v1, the only version.
    await k33.ok(["apply", "-f", `${ROOT}examples/obj.yaml`]);

    const runner = await KopfRunner.start(
      ["run", "-A", "--verbose", `${DIR}/example.ts`],
      { kubeconfig: c.api.kubeconfig.path },
    );
    try {
      await eventually(
        "the CRD's conversion set to the operator's webhook",
        () => json(k33, "crd", "kopfexamples.kopf.dev"),
        (crd) => crd.spec.conversion?.strategy === "Webhook",
      );

      // 1. v2 is served beside v1 (still stored at v1): both versions read, by both clients.
      await k33.ok(["apply", "-f", `${DIR}/crd-v2.yaml`]);
      for (const k of [k27, k33]) {
        const atV1 = await json(k, V1, "kopf-example-1");
        assert.equal(atV1.apiVersion, "kopf.dev/v1");
        assert.equal(atV1.spec.field, "value");
        assert.equal(atV1.spec.message, undefined);
        const atV2 = await json(k, V2, "kopf-example-1");
        assert.equal(atV2.apiVersion, "kopf.dev/v2");
        assert.equal(atV2.spec.message, "value");
        assert.equal(atV2.spec.field, undefined);
        assert.match(await k.ok(["get", V2]), /^kopf-example-1\s+value\s/m, "v2's printer columns");
      }
      // The v2 handler handled the object created at v1, at v2.
      const greeted = await eventually(
        "the v2 create handler's result",
        () => json(k33, V2, "kopf-example-1"),
        (o) => o.status?.greet !== undefined,
      );
      assert.deepEqual(greeted.status.greet, { greeting: "hello, value" });

      // Watches of either version see the other's writes (each client watches one version).
      await using watchV2 = k27.watch(["get", V2, "-w", "-o", `jsonpath=${LINE}`]);
      await using watchV1 = k33.watch(["get", V1, "-w", "-o", `jsonpath=${LINE}`]);
      await watchV2.until((lines) => lines.includes("kopf.dev/v2 kopf-example-1 value"));
      await watchV1.until((lines) => lines.includes("kopf.dev/v1 kopf-example-1 value"));
      await k27.ok([
        "patch",
        V1,
        "kopf-example-1",
        "--type=merge",
        "-p",
        '{"spec":{"field":"written at v1"}}',
      ]);
      await watchV2.until((lines) => lines.includes("kopf.dev/v2 kopf-example-1 written at v1"));
      await k33.ok(["apply", "-f", "-"], {
        stdin: JSON.stringify({
          apiVersion: "kopf.dev/v2",
          kind: "KopfExample",
          metadata: { name: "kopf-example-2", namespace: "default" },
          spec: { message: "written at v2" },
        }),
      });
      await watchV1.until((lines) => lines.includes("kopf.dev/v1 kopf-example-2 written at v2"));
      await eventually(
        "the v2 handler on the object created at v2",
        () => json(k33, V2, "kopf-example-2"),
        (o) => o.status?.greet?.greeting === "hello, written at v2",
      );

      // Admission at v2 guards writes at v1 too (the request converted for the webhook).
      for (
        const [k, version, patch] of [[k27, V1, { field: "" }], [k33, V2, { message: "" }]] as const
      ) {
        const denied = await k.fails([
          "patch",
          version,
          "kopf-example-1",
          "--type=merge",
          "-p",
          JSON.stringify({ spec: patch }),
        ]);
        assert.match(
          denied.stderr,
          /admission webhook "nonempty\.conversion\.kopf\.dev" denied the request: spec\.message must not be empty\./,
        );
      }

      // 2. New writes are stored at v2; 3. every object is written back unchanged (migrated).
      await k33.ok(["apply", "-f", `${DIR}/crd-v2-storage.yaml`]);
      const crd = await json(k33, "crd", "kopfexamples.kopf.dev");
      assert.deepEqual(crd.status.storedVersions, ["v1", "v2"]);
      const all = await k33.ok(["get", V2, "-A", "-o", "json"]);
      const replaced = await k33.ok(["replace", "-f", "-"], { stdin: all });
      assert.match(replaced, /kopf-example-1 replaced/);
      assert.match(replaced, /kopf-example-2 replaced/);
      // 4. Nothing is stored at v1 any more.
      const trimmed = await k33.ok([
        "patch",
        "crd",
        "kopfexamples.kopf.dev",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"storedVersions":["v2"]}}',
        "-o",
        "jsonpath={.status.storedVersions}",
      ]);
      assert.equal(trimmed, '["v2"]');
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0, runner.output);
    // Each object was greeted once (the migration's writes changed nothing the handlers see).
    assert.equal(runner.output.match(/Handler 'greet' succeeded/g)?.length, 2, runner.output);

    // The operator is gone, and with it the only converter: objects stored at v2 still read at
    // v2 (no conversion needed — the migration is complete); reads at v1 fail as on a real server.
    const listed = await json(k27, V2);
    assert.deepEqual(
      listed.items.map((o: Obj) => [o.metadata.name, o.spec.message]),
      [["kopf-example-1", "written at v1"], ["kopf-example-2", "written at v2"]],
    );
    const failed = await k27.fails(["get", V1]);
    assert.match(
      failed.stderr,
      /conversion webhook for kopf\.dev\/v2, Kind=KopfExampleList failed: Post "https:\/\/[^"]+\/convert\/kopfexamples\.kopf\.dev\?timeout=30s": dial tcp [^:]+:\d+: connect: connection refused/,
    );
  },
);
