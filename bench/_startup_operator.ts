/**
 * The operator of the start-up benchmark, in a process of its own so that
 * its RSS and CPU are its own: the operator bench's handlers (create with a
 * result, update, and a non-optional delete, so every object carries the
 * finalizer), event posting off, logs at warning to nowhere. It prints one
 * JSON line when the operator is ready (its initial listings done) and one
 * when no per-object worker is left (every object's first cycle ended and its
 * worker passed `settings.batching.idleTimeout`), with the create handler's
 * calls, then waits for SIGTERM.
 *
 * Usage: `deno run -A bench/_startup_operator.ts <kubeconfig> <auto|always|never> [pageSize]`.
 *
 * @module
 */

import * as kopf from "../mod.ts";

const [kubeconfig, streaming = "auto", pageSize = "500"] = Deno.args;
if (!kubeconfig) throw new Error("usage: _startup_operator.ts <kubeconfig> <auto|always|never>");

const out = (event: Record<string, unknown>) =>
  console.log(JSON.stringify({ ...event, ms: performance.now() }));
out({ event: "loaded" }); // the module and its imports are loaded

const registry = new kopf.OperatorRegistry();
let created = 0;
kopf.on.create("kopf.dev", "v1", "kopfexamples", { registry, id: "create_fn" }, () => {
  created++;
  return { message: "created" };
});
kopf.on.update("kopf.dev", "v1", "kopfexamples", { registry, id: "update_fn" }, () => {});
kopf.on.delete("kopf.dev", "v1", "kopfexamples", { registry, id: "delete_fn" }, () => {});

const settings = new kopf.OperatorSettings();
settings.posting.enabled = false;
settings.watching.streamingLists = streaming as "auto" | "always" | "never";
settings.watching.listPageSize = Number(pageSize);

const metrics = new kopf.OperatorMetrics();
const stop = new AbortController();
Deno.addSignalListener("SIGTERM", () => stop.abort());

/** Sums a gauge over its label sets in the text format. */
function gauge(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) {
      sum += Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return sum;
}

const running = kopf.operator({
  registry,
  settings,
  clusterwide: true,
  kubeconfig,
  signal: stop.signal,
  metrics,
  logging: { level: "warning", write: () => {} },
  onReady: () => {
    out({ event: "ready" });
    void (async () => {
      // Workers spawn as the listing's events are queued; wait for them to be gone.
      while (!stop.signal.aborted) {
        const text = await metrics.metrics();
        if (gauge(text, "kopf_queue_objects") === 0 && gauge(text, "kopf_queue_depth") === 0) {
          out({ event: "idle", created });
          return;
        }
        // Not too often: the gauges walk every object's entry.
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
  },
});
await running;
out({ event: "stopped" });
