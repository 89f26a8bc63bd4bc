import assert from "node:assert/strict";
import { KopfRunner } from "../../testing.ts";
import { cluster, eventually, type Obj, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

testWithKubectl(
  "04-events: kopf.event/info/warn/exception and the object's log records are posted as Kubernetes Events",
  async () => {
    await using c = await cluster();
    const runner = await KopfRunner.start(
      ["run", "-A", "--verbose", `${ROOT}examples/04-events/example.ts`],
      { kubeconfig: c.api.kubeconfig.path },
    );
    let events: Obj[] = [];
    try {
      assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
      await runner.waitFor("All handlers succeeded for creation.");
      // Events are posted in the background, in order: wait for the last one.
      events = await eventually(
        "the events are posted",
        async (): Promise<Obj[]> => {
          const got = await c.kubectl("get", "events", "-o", "json");
          assert.equal(got.code, 0, got.stderr);
          // In the order of posting (a listing is ordered by the names, which are random).
          return JSON.parse(got.stdout).items.sort((a: Obj, b: Obj) =>
            Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion)
          );
        },
        (items) => items.some((e) => e.message === "All handlers succeeded for creation."),
      );
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);

    // What was posted: the explicit events, then the log records at "info" and above (not debug).
    assert.deepEqual(events.map((e) => [e.type, e.reason, e.message]), [
      ["SomeType", "SomeReason", "Some message"],
      ["Normal", "SomeReason", "Some message"],
      ["Warning", "SomeReason", "Some message"],
      ["Error", "SomeReason", "Some exception: Exception text."],
      ["Normal", "Logging", "An info message: also an event of type Normal."],
      ["Warning", "Logging", "A warning message: also an event of type Warning."],
      ["Normal", "Logging", "Handler 'create_fn' succeeded."],
      ["Normal", "Logging", "All handlers succeeded for creation."],
    ]);
    // The debug record is only in the log.
    assert.match(runner.output, /\[default\/kopf-example-1\] A debug message: only in the log\./);

    // Every event is about the handled object, from "kopf", as Kopf posts them.
    const obj = JSON.parse(
      (await c.kubectl("get", "kopfexample", "kopf-example-1", "-o", "json")).stdout,
    );
    for (const e of events) {
      assert.deepEqual(e.involvedObject, {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        name: "kopf-example-1",
        uid: obj.metadata.uid,
        namespace: "default",
      });
      assert.equal(e.metadata.namespace, "default");
      assert.match(e.metadata.name, /^kopf-event-/);
      assert.equal(e.reportingComponent, "kopf");
      assert.deepEqual(e.source, { component: "kopf" });
      assert.ok(e.firstTimestamp && e.lastTimestamp, "with timestamps");
      // A MicroTime, which kubectl (and a real API server) parse only with six fractional digits.
      assert.match(e.eventTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    }

    // And kubectl shows them where users look for them.
    const described = await c.kubectl("describe", "kopfexample", "kopf-example-1");
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout, /Events:/);
    assert.match(
      described.stdout,
      /Error\s+SomeReason\s+.*kopf\s+Some exception: Exception text\./,
    );
    assert.match(
      described.stdout,
      /Normal\s+Logging\s+.*kopf\s+All handlers succeeded for creation\./,
    );
  },
);
