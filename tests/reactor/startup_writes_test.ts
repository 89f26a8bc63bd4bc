/**
 * Start-up over objects an operator handled before (issue 15 item 4): each
 * one carries Kopf's finalizer and a diff base that matches it, and has no
 * pending handlers — so the first cycle must cost no API write at all, with
 * the state read streamed over the watch or listed in pages alike. The
 * server's request log counts every write; a new object afterwards proves the
 * operator was live and the count would have seen writes.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KopfRunner } from "../../testing.ts";
import { cluster, until } from "./_setup.ts";

const OBJECTS = 1_000;
const FINALIZER = "kopf.zalando.org/KopfFinalizerMarker";
const LAST_HANDLED = "kopf.zalando.org/last-handled-configuration";
const WRITE = /^(POST|PUT|PATCH|DELETE) /;

for (const streamingLists of ["auto", "never"] as const) {
  const how = streamingLists === "auto" ? "streamed over the watch" : "listed in pages";
  Deno.test(`start-up over ${OBJECTS} already-handled objects (${how}): every object seen, zero writes`, async () => {
    await using c = await cluster({ requestLog: true });
    const def = c.api.server.registry.find("kopf.dev", "v1", "kopfexamples")!;
    const storage = new kopf.AnnotationsDiffBaseStorage();
    for (let i = 0; i < OBJECTS; i++) {
      const body = {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: { name: `handled-${i}`, namespace: "default", labels: { app: "x" } },
        spec: { field: "value", i },
      };
      const essence = storage.build(body);
      c.api.server.objects.create(def, "default", {
        ...body,
        metadata: {
          ...body.metadata,
          finalizers: [FINALIZER],
          annotations: { [LAST_HANDLED]: `${JSON.stringify(essence)}\n` },
        },
      });
    }

    const registry = new kopf.OperatorRegistry();
    let listed = 0;
    const created: string[] = [];
    kopf.on.event("kopfexamples", { registry }, ({ type }) => {
      if (type === null) listed++;
    });
    kopf.on.create("kopfexamples", { registry }, ({ name }) => {
      created.push(name!);
    });
    kopf.on.update("kopfexamples", { registry }, () => {});
    kopf.on.delete("kopfexamples", { registry }, () => {});
    const settings = new kopf.OperatorSettings();
    settings.watching.streamingLists = streamingLists;
    const before = c.requests.length;
    const runner = await KopfRunner.start(["run", "--standalone", "-A"], {
      registry,
      settings,
      kubeconfig: c.api.kubeconfig.path,
    });
    try {
      await until(() => listed === OBJECTS, `all ${OBJECTS} objects seen`, 30);
      // Let every per-object worker finish its cycle and the batching windows pass.
      await new Promise((r) => setTimeout(r, 1500));
      const requests = c.requests.slice(before);
      const writes = requests.filter((line) => WRITE.test(line));
      assert.deepEqual(writes, [], "no write at start-up");
      assert.equal(created.length, 0, `created: ${created.join(", ")}`);
      const reads = requests.filter((line) => line.includes("/kopfexamples?"));
      if (streamingLists === "auto") {
        assert.ok(reads.some((line) => line.includes("sendInitialEvents=true")), reads.join("\n"));
        assert.ok(!reads.some((line) => !line.includes("watch=true")), "no LIST");
      } else {
        assert.equal(reads.filter((line) => line.includes("limit=500")).length, 2, "2 pages");
      }

      // The control: a new object is handled — with writes the same log sees.
      await c.createKex("default", "fresh");
      await until(() => created.includes("fresh"), "the new object handled");
      await until(
        () => c.requests.slice(before).some((line) => /^PATCH .*\/fresh/.test(line)),
        "its patch",
      );
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
  });
}
