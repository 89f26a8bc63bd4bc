/**
 * The admission benchmark: the round trip of a create through the embedded
 * API server (in a process of its own) and two webhooks — one mutating, one
 * validating — served by an operator in this process over HTTPS
 * (`kopf.WebhookServer`, managed configurations). Creations are sent open
 * loop at a fixed rate (latency from the scheduled send time), first with no
 * webhook configured (the baseline: what the API server itself costs), then
 * with the operator's webhooks.
 *
 * Run alone: `deno run -A bench/admission_bench.ts`.
 *
 * @module
 */

import * as kopf from "../mod.ts";
import { BenchClient, expectOk, setUpKopfExamples } from "./_client.ts";
import { readCpuSeconds, type ServerProcess, startServerProcess } from "./_server_process.ts";
import { figure, fmt } from "./_stats.ts";
import { type LatencyResult, openLoop } from "./patch_latency.ts";

const NAMESPACE = "bench-admission";
const COLLECTION = `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`;
const MANAGED = "bench.kopf.dev";
const RATE = 200;
const SECONDS = 10;

/** What the admission benchmark reports back to `bench/main.ts`. */
export interface AdmissionBenchOutcome {
  /** How many figures had a target, and how many met it. */
  targets: number;
  met: number;
  /** Why the benchmark itself broke, if it did. */
  broken: string[];
}

/**
 * Runs the admission benchmark against a fresh server and prints its figures.
 *
 * @param server The API server process.
 * @param root The repository root.
 * @returns How many targets were met, and what broke.
 */
export async function measureAdmission(
  server: ServerProcess,
  root: URL,
): Promise<AdmissionBenchOutcome> {
  const outcome: AdmissionBenchOutcome = { targets: 0, met: 0, broken: [] };
  using api = new BenchClient(server.url);
  await setUpKopfExamples(api, root, NAMESPACE);
  let n = 0;
  const create = (prefix: string) => async () => {
    const answer = await api.send("POST", COLLECTION, {
      body: {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: { name: `${prefix}-${n++}` },
        spec: { field: "value" },
      },
    });
    return answer.status === 201;
  };
  const measure = async (prefix: string) => {
    const server0 = await server.cpuSeconds();
    const self0 = await readCpuSeconds(Deno.pid);
    const r = await openLoop({ rate: RATE, durationMs: SECONDS * 1000 }, create(prefix));
    const serverCpu = await server.cpuSeconds() - server0;
    const selfCpu = await readCpuSeconds(Deno.pid) - self0;
    return { r, serverCpu, selfCpu };
  };

  // Warm-up and baseline: no webhooks configured.
  await openLoop({ rate: RATE, durationMs: 2000 }, create("warm"));
  const base = await measure("base");

  // The operator: a mutating and a validating handler, its server and managed configurations.
  const registry = new kopf.OperatorRegistry();
  let calls = 0;
  kopf.on.mutate("kopf.dev", "v1", "kopfexamples", { registry, id: "fill" }, ({ patch }) => {
    calls++;
    patch.spec.filled = true;
  });
  kopf.on.validate("kopf.dev", "v1", "kopfexamples", { registry, id: "check" }, ({ spec }) => {
    calls++;
    if (spec.field === "wrong") throw new kopf.AdmissionError("wrong field", 400);
  });
  const settings = new kopf.OperatorSettings();
  settings.posting.enabled = false;
  settings.admission.server = new kopf.WebhookServer({ port: 0 });
  settings.admission.managed = MANAGED;
  const stop = new AbortController();
  const running = kopf.operator({
    registry,
    settings,
    clusterwide: true,
    kubeconfig: server.kubeconfig,
    signal: stop.signal,
    logging: { level: "warning", write: () => {} },
  });
  try {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const got = await api.send(
        "GET",
        `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${MANAGED}`,
        { parse: true },
      );
      const hooks = (got.body as { webhooks?: unknown[] } | undefined)?.webhooks ?? [];
      if (got.status === 200 && hooks.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const check = await api.send("POST", COLLECTION, {
      body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "probe" } },
      parse: true,
    });
    expectOk(check, "a create through the webhooks");
    if ((check.body as { spec?: { filled?: boolean } }).spec?.filled !== true) {
      outcome.broken.push("the mutating webhook was not applied");
    }
    await openLoop({ rate: RATE, durationMs: 2000 }, create("warm-hooked"));
    calls = 0;
    const hooked = await measure("hooked");
    if (hooked.r.errors) outcome.broken.push(`${hooked.r.errors} creations failed with webhooks`);
    if (calls !== 2 * hooked.r.sent) {
      outcome.broken.push(
        `${calls} webhook calls for ${hooked.r.sent} creations (expected 2 each)`,
      );
    }
    const line = (r: LatencyResult) =>
      `p50 ${fmt(r.p50, 1)} ms, p90 ${fmt(r.p90, 1)} ms, max ${fmt(r.max, 1)} ms`;
    const per = (cpu: number) => `${fmt((cpu / hooked.r.sent) * 1e6)} µs`;
    const f = figure(
      `admission: create through a mutating and a validating webhook, p99 at ${RATE}/s`,
      hooked.r.p99,
      "ms",
      {
        decimals: 1,
        target: { below: 20 },
        note: `[${line(hooked.r)}; without webhooks p99 ${fmt(base.r.p99, 1)} ms, ${
          line(base.r)
        }; CPU per create: server ${per(hooked.serverCpu)} (${
          per(base.serverCpu)
        } without), operator + load generator ${per(hooked.selfCpu)} (${
          per(base.selfCpu)
        } without); ${fmt(hooked.r.sent)} creations, generator up to ${
          fmt(hooked.r.maxSendDelay, 1)
        } ms late]`,
      },
    );
    outcome.targets++;
    if (f.met) outcome.met++;
    console.log(f.line);
  } finally {
    stop.abort();
    await running.catch((e) => outcome.broken.push(`the operator failed: ${e}`));
  }
  return outcome;
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url);
  await using server = await startServerProcess({ root });
  const outcome = await measureAdmission(server, root);
  for (const b of outcome.broken) console.error(`bench broken: ${b}`);
  const code = await server.stop();
  Deno.exit(outcome.broken.length || code !== 0 ? 1 : 0);
}
