import assert from "node:assert/strict";
import { cluster, type Obj, runRecorded } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const KEY = "kopf.zalando.org/create_fn";
const DIFFBASE = "kopf.zalando.org/last-handled-configuration";

testWithKubectl(
  "03-exceptions: TemporaryError retried after its delay, an arbitrary error after the backoff, PermanentError stops; progress kept in the annotation meanwhile",
  async () => {
    await using c = await cluster();
    const { runner, versions } = await runRecorded(
      c,
      "03-exceptions/example.ts",
      "Creation is processed: 0 succeeded; 1 failed.",
      15,
    );
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    const out = runner.output;

    // The log: each kind of failure with Kopf's words, in this order.
    const lines = [
      "[default/kopf-example-1] Handler 'create_fn' failed temporarily: First failure.",
      "[default/kopf-example-1] Handler 'create_fn' failed with an exception. Will retry.",
      "MyException: Second failure.",
      "[default/kopf-example-1] Handler 'create_fn' failed permanently: Third failure, the final one.",
      "[default/kopf-example-1] Creation is processed: 0 succeeded; 1 failed.",
    ];
    let at = -1;
    for (const line of lines) {
      const found = out.indexOf(line, at + 1);
      assert.ok(found > at, `expected in order after the previous line: ${line}\n${out}`);
      at = found;
    }
    // Three attempts, and no more after the permanent failure.
    assert.deepEqual(out.match(/create_fn is called with retry=\d+/g), [
      "create_fn is called with retry=0",
      "create_fn is called with retry=1",
      "create_fn is called with retry=2",
    ]);
    assert.doesNotMatch(out, /Handler 'create_fn' succeeded/);

    // The progress records as the object carried them between the attempts.
    const records: Obj[] = [];
    for (const v of versions) {
      const raw = v.metadata?.annotations?.[KEY];
      if (raw && raw !== JSON.stringify(records.at(-1))) records.push(JSON.parse(raw));
    }
    assert.equal(records.length, 2, `two records (after each retriable failure): ${records}`);
    const [first, second] = records;
    assert.deepEqual(Object.keys(first), [
      "started",
      "delayed",
      "purpose",
      "retries",
      "success",
      "failure",
      "message",
    ]);
    assert.deepEqual(
      {
        purpose: first.purpose,
        retries: first.retries,
        success: first.success,
        failure: first.failure,
        message: first.message,
      },
      { purpose: "create", retries: 1, success: false, failure: false, message: "First failure." },
    );
    assert.deepEqual(
      {
        purpose: second.purpose,
        retries: second.retries,
        success: second.success,
        failure: second.failure,
        message: second.message,
      },
      { purpose: "create", retries: 2, success: false, failure: false, message: "Second failure." },
    );
    assert.equal(second.started, first.started, "the first start is kept across retries");
    assert.match(first.started, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    const ms = (s: string) => Date.parse(s);
    const firstDelay = ms(first.delayed) - ms(first.started);
    assert.ok(
      firstDelay >= 1000 && firstDelay < 5000,
      `delayed by TemporaryError's 1s: ${firstDelay}ms`,
    );
    const backoff = ms(second.delayed) - ms(first.delayed);
    assert.ok(
      backoff >= 1000 && backoff < 10000,
      `delayed by the 1s backoff (not the default 60s): ${backoff}ms`,
    );

    // When the handler failed for good, the record is purged; nothing in the status either.
    const last = versions.at(-1);
    assert.equal(last.metadata.annotations[KEY], undefined);
    assert.equal(last.status?.kopf?.progress, undefined);
    assert.ok(last.metadata.annotations[DIFFBASE]);
  },
);
