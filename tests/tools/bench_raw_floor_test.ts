/**
 * The benchmark's runtime floor (`bench/_raw_floor.ts`) does what the floor does, per object, on
 * the embedded API server: the finalizer, the diff-base annotation, the create handler's result in
 * `status`, the two Events; the finalizer's removal on deletion — so that its CPU per object is
 * the floor's traffic's and nothing less.
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { BenchClient, setUpKopfExamples } from "../../bench/_client.ts";

const ROOT = new URL("../../", import.meta.url);
const NS = "raw-floor";
const COLLECTION = `/apis/kopf.dev/v1/namespaces/${NS}/kopfexamples`;

/** Polls `check` until it holds (10 s at most). */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (const end = Date.now() + 10_000; !(await check());) {
    if (Date.now() > end) throw new Error(`not within 10 s: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test("the raw floor writes what the floor writes, per object, and releases the finalizer", async () => {
  await using server = await startApiServer();
  using api = new BenchClient(server.url);
  await setUpKopfExamples(api, ROOT, NS);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("bench/_raw_floor.ts", ROOT).pathname,
      server.kubeconfig.path,
      JSON.stringify({ events: true, namespace: NS }),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    const first = await lines.read();
    assert.match(first.value ?? "", /"event":"ready"/);
    const names = ["a", "b", "c"];
    for (const name of names) {
      const made = await api.send("POST", COLLECTION, {
        body: {
          apiVersion: "kopf.dev/v1",
          kind: "KopfExample",
          metadata: { name },
          spec: { n: 1 },
        },
      });
      assert.equal(made.status, 201);
    }
    const object = async (name: string) =>
      (await api.send("GET", `${COLLECTION}/${name}`, { parse: true })).body as {
        metadata: { finalizers?: string[]; annotations?: Record<string, string> };
        status?: { create_fn?: { message: string } };
      };
    await until("every object handled", async () => {
      for (const name of names) if (!(await object(name)).status?.create_fn) return false;
      return true;
    });
    for (const name of names) {
      const { metadata, status } = await object(name);
      assert.deepEqual(metadata.finalizers, ["kopf.zalando.org/KopfFinalizerMarker"]);
      assert.equal(
        metadata.annotations?.["kopf.zalando.org/last-handled-configuration"],
        '{"spec":{"n":1}}\n',
      );
      assert.deepEqual(status?.create_fn, { message: "created" });
    }
    const events = async () =>
      ((await api.send("GET", `/api/v1/namespaces/${NS}/events`, { parse: true })).body as {
        items: { involvedObject: { name: string }; message: string }[];
      }).items;
    await until("two Events per object", async () => (await events()).length === 6);
    for (const name of names) {
      assert.deepEqual(
        (await events()).filter((e) => e.involvedObject.name === name).map((e) => e.message).sort(),
        ["All handlers succeeded for creation.", "Handler 'create_fn' succeeded."],
      );
    }
    for (const name of names) await api.send("DELETE", `${COLLECTION}/${name}`);
    await until("every object gone (its finalizer released)", async () => {
      for (const name of names) {
        if ((await api.send("GET", `${COLLECTION}/${name}`)).status !== 404) return false;
      }
      return true;
    });
    child.kill("SIGTERM");
    assert.match((await lines.read()).value ?? "", /"event":"stopped"/);
    assert.equal((await child.status).code, 0);
  } finally {
    await lines.cancel().catch(() => {});
    await child.stdin.close().catch(() => {});
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await child.status;
  }
});
