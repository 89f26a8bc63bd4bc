/**
 * The embedded API server's cost per write, per kind: creates and merge
 * patches of ConfigMaps, Deployments, Pods and custom resources (KopfExamples),
 * with two watches open on each kind, from 16 keep-alive clients. Printed per
 * kind and verb: the server's CPU per request (`/proc/<pid>/stat`, the steady
 * figure on a shared machine) and the rate. The built-in kinds cost what their
 * kube rules cost (defaults, validation, strict field checks, immutable fields),
 * so this is the figure to watch when those rules grow.
 *
 * Run alone: `deno run -A bench/apiserver_bench.ts`; before/after, side by side:
 * `KOPF_BENCHES=apiserver_bench.ts deno task bench:compare REF 3`. Objects per kind and round:
 * `KOPF_BENCH_OBJECTS` (1,500 by default; more for a finer figure — both sides of a comparison
 * run this tree's bench, so they count alike).
 *
 * @module
 */

import { BenchClient, expectOk, runBounded, setUpKopfExamples } from "./_client.ts";
import { startServerProcess } from "./_server_process.ts";
import { figure, fmt, RESULTS_ENV, writeResults } from "./_stats.ts";

const ROOT = new URL("../", import.meta.url);
const COUNT = Number(Deno.env.get("KOPF_BENCH_OBJECTS") ?? 1500);
const CONCURRENCY = 16;
const NS = "bench-kinds";

/** One kind under test: where it lives and what one object of it looks like. */
interface Kind {
  label: string;
  path: string;
  body: (name: string) => Record<string, unknown>;
}

const template = {
  metadata: { labels: { app: "bench" } },
  spec: {
    containers: [{
      name: "main",
      image: "nginx:1.27",
      ports: [{ containerPort: 80 }],
      resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { memory: "128Mi" } },
    }],
  },
};

const KINDS: Kind[] = [
  {
    label: "configmap",
    path: `/api/v1/namespaces/${NS}/configmaps`,
    body: (name) => ({ metadata: { name }, data: { spec: "x".repeat(200) } }),
  },
  {
    label: "deployment",
    path: `/apis/apps/v1/namespaces/${NS}/deployments`,
    body: (name) => ({
      metadata: { name },
      spec: { replicas: 1, selector: { matchLabels: { app: "bench" } }, template },
    }),
  },
  {
    label: "pod",
    path: `/api/v1/namespaces/${NS}/pods`,
    body: (name) => ({ metadata: { name }, spec: template.spec }),
  },
  {
    label: "kopfexample",
    path: `/apis/kopf.dev/v1/namespaces/${NS}/kopfexamples`,
    body: (name) => ({
      apiVersion: "kopf.dev/v1",
      kind: "KopfExample",
      metadata: { name },
      spec: { field: "value", items: ["a", "b"] },
    }),
  },
];

async function measure(): Promise<string[]> {
  await using server = await startServerProcess({ root: ROOT });
  using api = new BenchClient(server.url);
  await setUpKopfExamples(api, ROOT, NS);
  const lines: string[] = [];
  const stopWatches = new AbortController();
  const readers: Promise<void>[] = [];
  for (const kind of KINDS) {
    for (let w = 0; w < 2; w++) {
      const res = await api.stream(`${kind.path}?watch=true`, stopWatches.signal);
      readers.push((async () => {
        const body = res.body!.getReader();
        try {
          while (!(await body.read()).done) { /* every event read */ }
        } catch { /* stopped */ }
      })());
    }
  }
  const merge = "application/merge-patch+json";
  // Warm-up, not measured: every kind's paths through the JIT before the first figure.
  for (const kind of KINDS) {
    await runBounded(200, CONCURRENCY, async (i) => {
      expectOk(await api.send("POST", kind.path, { body: kind.body(`w${i}`) }), "warm-up");
      expectOk(
        await api.send("PATCH", `${kind.path}/w${i}`, {
          body: { metadata: { annotations: { warm: "up" } } },
          contentType: merge,
        }),
        "warm-up",
      );
    });
  }
  for (const kind of KINDS) {
    const phase = async (verb: string, job: (i: number) => Promise<void>) => {
      const cpu = await server.cpuSeconds();
      const t = performance.now();
      await runBounded(COUNT, CONCURRENCY, job);
      const spent = (await server.cpuSeconds()) - cpu;
      const seconds = (performance.now() - t) / 1000;
      lines.push(
        figure(`apiserver: ${kind.label} ${verb}`, spent / COUNT * 1e6, "µs server CPU", {
          note: `[${fmt(COUNT / seconds)}/s, ${fmt(COUNT)} objects]`,
        }).line,
      );
    };
    await phase("create", async (i) => {
      expectOk(
        await api.send("POST", kind.path, { body: kind.body(`o${i}`) }),
        `${kind.label} create`,
      );
    });
    await phase("merge patch", async (i) => {
      expectOk(
        await api.send("PATCH", `${kind.path}/o${i}`, {
          body: { metadata: { annotations: { handled: `yes-${i}` } } },
          contentType: merge,
        }),
        `${kind.label} patch`,
      );
    });
  }
  stopWatches.abort();
  await Promise.all(readers);
  return lines;
}

if (import.meta.main) {
  console.log(
    `apiserver per kind: ${COUNT} creates and ${COUNT} merge patches each, ` +
      `${CONCURRENCY} keep-alive clients, 2 watches per kind; server CPU per request`,
  );
  for (const line of await measure()) console.log(line);
  const results = Deno.env.get(RESULTS_ENV);
  if (results) await writeResults(results);
}
