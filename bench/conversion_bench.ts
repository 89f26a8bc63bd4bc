/**
 * The conversion benchmark: CRD version conversion through the embedded API
 * server (in a process of its own) and an operator in this process whose
 * converters (`kopf.on.convert`, v1 → v2 and back) serve the CRD's conversion
 * webhook over HTTPS (`kopf.WebhookServer`, managed configuration). The
 * KopfExample CRD gets a second version, v2; 1,000 objects are created at v1
 * (the storage version, so no conversion), then listed whole at v2 — one page,
 * so one ConversionReview of 1,000 objects per LIST, as the real server batches
 * a page — and, alternately, at v1, the baseline: the same LIST with no
 * conversion, what the server and the load generator cost by themselves.
 *
 * Figures: objects converted per second, wall time per LIST (p50, p99), CPU
 * per 1,000 objects of the API server and of this process (the operator and
 * the load generator share it: the v1 baseline is the load generator's part),
 * and the RSS of both. The LISTs' bodies are read, not parsed (but once, to
 * check the conversion), so the load generator costs little next to the
 * operator.
 *
 * Run alone: `deno run -A bench/conversion_bench.ts`.
 *
 * @module
 */

import { load as parseYaml } from "npm:js-yaml@^5";
import * as kopf from "../mod.ts";
import { BenchClient, expectOk, runBounded, setUpKopfExamples } from "./_client.ts";
import { readCpuSeconds, type ServerProcess, startServerProcess } from "./_server_process.ts";
import { figure, fmt, percentile } from "./_stats.ts";

const NAMESPACE = "bench-conversion";
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const V1 = `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`;
const V2 = `/apis/kopf.dev/v2/namespaces/${NAMESPACE}/kopfexamples`;
const MANAGED = "bench-conversion.kopf.dev";
const OBJECTS = 1_000;
/** LISTs of each version measured, in `ROUNDS` blocks of each in turn, after `WARMUP` of each. */
const LISTS = 100;
const ROUNDS = 5;
const WARMUP = 5;
const MB = 1024 * 1024;

/** What the conversion benchmark reports back to `bench/main.ts`. */
export interface ConversionBenchOutcome {
  /** How many figures had a target, and how many met it. */
  targets: number;
  met: number;
  /** Why the benchmark itself broke, if it did. */
  broken: string[];
}

/** The LISTs of one version: wall milliseconds each, and the CPU seconds of both processes. */
interface Lists {
  ms: number[];
  serverCpu: number;
  selfCpu: number;
}

/**
 * Creates the example CRD with a second version, v2 (served, not stored), and the namespace.
 *
 * @param api The client.
 * @param root The repository root.
 */
async function setUp(api: BenchClient, root: URL): Promise<void> {
  const crd = parseYaml(await Deno.readTextFile(new URL("examples/crd.yaml", root))) as {
    spec: { versions: Record<string, unknown>[] };
  };
  const [v1] = crd.spec.versions;
  crd.spec.versions.push({ ...structuredClone(v1), name: "v2", storage: false });
  expectOk(await api.send("POST", CRDS, { body: crd }), "creating the two-version KopfExample CRD");
  await setUpKopfExamples(api, root, NAMESPACE); // the CRD is there already: the namespace only
}

/**
 * Runs the conversion benchmark against a fresh server and prints its figures.
 *
 * @param server The API server process (fresh: the benchmark creates the CRD and a namespace).
 * @param root The repository root.
 * @returns How many targets were met, and what broke.
 */
export async function measureConversion(
  server: ServerProcess,
  root: URL,
): Promise<ConversionBenchOutcome> {
  const outcome: ConversionBenchOutcome = { targets: 0, met: 0, broken: [] };
  using api = new BenchClient(server.url);
  await setUp(api, root);

  const registry = new kopf.OperatorRegistry();
  let converted = 0;
  kopf.on.convert("kopfexamples", { registry, from: "v1", to: "v2" }, ({ body }) => {
    converted++;
    const { field, ...spec } = body.spec;
    return { ...body, spec: { ...spec, renamed: field } };
  });
  kopf.on.convert("kopfexamples", { registry, from: "v2", to: "v1" }, ({ spec, patch }) => {
    converted++;
    patch.spec.field = spec.renamed;
    patch.spec.renamed = null;
  });
  const settings = new kopf.OperatorSettings();
  settings.posting.enabled = false;
  settings.admission.server = new kopf.WebhookServer({ port: 0 });
  settings.admission.managed = MANAGED;
  const stop = new AbortController();
  const running = kopf.operator({
    registry,
    settings,
    standalone: true,
    clusterwide: true,
    kubeconfig: server.kubeconfig,
    signal: stop.signal,
    logging: { level: "warning", write: () => {} },
  });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const got = await api.send("GET", `${CRDS}/kopfexamples.kopf.dev`, { parse: true });
      const crd = got.body as { spec?: { conversion?: { strategy?: string } } } | undefined;
      if (got.status === 200 && crd?.spec?.conversion?.strategy === "Webhook") break;
      if (Date.now() > deadline) {
        throw new Error("the operator did not manage the CRD's conversion");
      }
      await new Promise((r) => setTimeout(r, 50));
    }

    const created0 = performance.now();
    await runBounded(OBJECTS, 32, async (i) => {
      expectOk(
        await api.send("POST", V1, {
          body: {
            apiVersion: "kopf.dev/v1",
            kind: "KopfExample",
            metadata: {
              name: `obj-${String(i).padStart(4, "0")}`,
              labels: { bench: "conversion" },
            },
            spec: { field: `value-${i}`, size: i, duration: "1m" },
          },
        }),
        "creating a KopfExample at v1",
      );
    });
    const createSeconds = (performance.now() - created0) / 1000;
    if (converted) {
      outcome.broken.push(`${converted} conversions while creating at the storage version`);
    }

    // Once parsed: every object at v2, converted by the operator.
    const check = await api.send("GET", V2, { parse: true });
    expectOk(check, "a LIST at v2");
    const items = (check.body as { items: kopf.AnyObject[] }).items;
    const wrong = items.filter((o, i) =>
      o.apiVersion !== "kopf.dev/v2" || o.spec?.renamed !== `value-${i}` || "field" in o.spec
    );
    if (items.length !== OBJECTS || wrong.length) {
      outcome.broken.push(
        `a LIST at v2 had ${items.length} objects, ${wrong.length} of them not converted`,
      );
    }

    // A block of LISTs at one version: wall time of each, CPU of the whole block (CPU time
    // is read in 10 ms ticks, and what one LIST leaves to the garbage collector falls
    // within its own block but at the block's end).
    const block = async (path: string, into: Lists, lists: number) => {
      const server0 = await server.cpuSeconds();
      const self0 = await readCpuSeconds(Deno.pid);
      for (let i = 0; i < lists; i++) {
        const t0 = performance.now();
        expectOk(await api.send("GET", path), `a LIST at ${path.split("/")[3]}`);
        into.ms.push(performance.now() - t0);
      }
      into.selfCpu += await readCpuSeconds(Deno.pid) - self0;
      into.serverCpu += await server.cpuSeconds() - server0;
    };
    const fresh = (): Lists => ({ ms: [], serverCpu: 0, selfCpu: 0 });
    await block(V1, fresh(), WARMUP);
    await block(V2, fresh(), WARMUP);
    // Blocks of each version in turn, so that what the machine's neighbours do falls on both.
    const base = fresh(), conv = fresh();
    const serverRss0 = await server.rss();
    const selfRss0 = Deno.memoryUsage().rss;
    converted = 0;
    for (let i = 0; i < ROUNDS; i++) {
      await block(V1, base, LISTS / ROUNDS);
      await block(V2, conv, LISTS / ROUNDS);
    }
    if (converted !== LISTS * OBJECTS) {
      outcome.broken.push(
        `${fmt(converted)} converter calls for ${LISTS} LISTs of ${fmt(OBJECTS)} at v2 ` +
          `(expected ${fmt(LISTS * OBJECTS)})`,
      );
    }
    const serverRss = await server.rss();
    const selfRss = Deno.memoryUsage().rss;

    const sorted = (l: Lists) => [...l.ms].sort((a, b) => a - b);
    const b = sorted(base), c = sorted(conv);
    const sum = (ms: number[]) => ms.reduce((s, x) => s + x, 0) / 1000;
    const per1k = (cpu: number) => `${fmt((cpu / (LISTS * OBJECTS)) * 1000 * 1000, 1)} ms`;
    const rss = `RSS after the LISTs (before): server ${fmt(serverRss / MB)} MB (${
      fmt(serverRss0 / MB)
    } MB), operator + load generator ${fmt(selfRss / MB)} MB (${fmt(selfRss0 / MB)} MB)`;
    console.log(
      figure(
        `conversion: LIST of ${fmt(OBJECTS)} at v2, stored at v1, converted by the operator`,
        (LISTS * OBJECTS) / sum(conv.ms),
        "objects/s",
        {
          note: `[one ConversionReview of ${fmt(OBJECTS)} per LIST; CPU per ${
            fmt(OBJECTS)
          } converted: server ${per1k(conv.serverCpu)} (${
            per1k(base.serverCpu)
          } listed at v1), operator + load generator ${per1k(conv.selfCpu)} (${
            per1k(base.selfCpu)
          } at v1, no operator work); ${rss}]`,
        },
      ).line,
    );
    console.log(
      figure(`conversion: LIST of ${fmt(OBJECTS)} at v2, p50`, percentile(c, 50), "ms", {
        decimals: 1,
        note:
          `[p99 ${fmt(percentile(c, 99), 1)} ms, min ${fmt(c[0]!, 1)} ms over ${LISTS} LISTs; ` +
          `at v1 (no conversion) p50 ${fmt(percentile(b, 50), 1)} ms, p99 ${
            fmt(percentile(b, 99), 1)
          } ms]`,
      }).line,
    );
    console.log(
      figure(
        `conversion: baseline LIST of ${fmt(OBJECTS)} at v1 (no conversion)`,
        (LISTS * OBJECTS) / sum(base.ms),
        "objects/s",
        {
          note: `[p50 ${fmt(percentile(b, 50), 1)} ms, p99 ${fmt(percentile(b, 99), 1)} ms; ` +
            `CPU per ${fmt(OBJECTS)} listed: server ${per1k(base.serverCpu)}, load generator ${
              per1k(base.selfCpu)
            }; ${rss}; the ${fmt(OBJECTS)} created at ${
              fmt(OBJECTS / createSeconds)
            }/s beforehand]`,
        },
      ).line,
    );
  } catch (e) {
    outcome.broken.push(`conversion benchmark: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    stop.abort();
    await running.catch((e) => outcome.broken.push(`the operator failed: ${e}`));
  }
  return outcome;
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url);
  await using server = await startServerProcess({ root });
  console.log(`kopf conversion benchmark: server pid ${server.pid} at ${server.url}`);
  const outcome = await measureConversion(server, root);
  for (const b of outcome.broken) console.error(`bench broken: ${b}`);
  const code = await server.stop();
  Deno.exit(outcome.broken.length || code !== 0 ? 1 : 0);
}
