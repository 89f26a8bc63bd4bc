/**
 * Merge-patch throughput: many clients patching as fast as the server answers
 * (closed loop), each patch a real change, so every one commits, bumps the
 * resourceVersion and is delivered to watchers — the load an operator fleet
 * puts on the server with its status and annotation patches.
 *
 * @module
 */

import { type BenchClient, expectOk, runBounded } from "./_client.ts";

/** The figures of one throughput run. */
export interface ThroughputResult {
  patches: number;
  errors: number;
  seconds: number;
  perSecond: number;
  /** Successful patches including the warm-up. */
  committed: number;
  /** How far the resourceVersion moved over the run (equals `committed` if every patch was a real change). */
  rvAdvanced: number;
}

/** Where the objects live and how they are named. */
export const PATCH_NAMESPACE = "bench-patch";

/**
 * Creates the namespace and the ConfigMaps to patch.
 *
 * @param api The client.
 * @param objects How many ConfigMaps.
 * @returns When they exist.
 * @throws {Error} If a create fails.
 */
export async function seedConfigMaps(api: BenchClient, objects: number): Promise<void> {
  expectOk(
    await api.send("POST", "/api/v1/namespaces", {
      body: { metadata: { name: PATCH_NAMESPACE } },
    }),
    "creating a namespace",
  );
  await runBounded(objects, 32, async (i) => {
    const answer = await api.send("POST", `/api/v1/namespaces/${PATCH_NAMESPACE}/configmaps`, {
      body: { metadata: { name: `cm-${i}`, labels: { app: "bench" } }, data: { value: "0" } },
    });
    expectOk(answer, `creating ConfigMap cm-${i}`);
  });
}

/**
 * The path of one seeded ConfigMap.
 *
 * @param i Its index.
 * @returns The URL path.
 */
export function configMapPath(i: number): string {
  return `/api/v1/namespaces/${PATCH_NAMESPACE}/configmaps/cm-${i}`;
}

let serial = 0;

/**
 * A merge patch that changes a ConfigMap's data, different every time.
 *
 * @returns The patch body as JSON text.
 */
export function nextPatch(): string {
  return `{"data":{"value":"${++serial}"}}`;
}

/**
 * Patches with `clients` concurrent workers for a while.
 *
 * @param api The client.
 * @param options Workers, objects, warm-up and measured durations.
 * @returns Patches, errors and the rate over the measured window.
 */
export async function measureThroughput(
  api: BenchClient,
  options: { clients: number; objects: number; warmupMs: number; durationMs: number },
): Promise<ThroughputResult> {
  const { clients, objects } = options;
  const rvOf = async () => {
    const answer = await api.send("GET", "/admin/stats", { parse: true });
    return (answer.body as { resourceVersion: number }).resourceVersion;
  };
  let measuring = false;
  let stopAt = Infinity;
  let patches = 0;
  let errors = 0;
  let committed = 0;
  const worker = async (w: number) => {
    // Each worker patches its own slice of the objects, round robin.
    for (let k = 0; performance.now() < stopAt; k++) {
      const i = (w + k * clients) % objects;
      const counted = measuring;
      let ok = false;
      try {
        const answer = await api.send("PATCH", configMapPath(i), {
          body: nextPatch(),
          contentType: "application/merge-patch+json",
        });
        ok = answer.status === 200;
      } catch {
        ok = false;
      }
      if (ok) committed++;
      if (!counted) continue;
      if (ok) patches++;
      else errors++;
    }
  };
  const rvBefore = await rvOf();
  const running = Array.from({ length: clients }, (_, w) => worker(w));
  await new Promise((r) => setTimeout(r, options.warmupMs));
  measuring = true;
  const started = performance.now();
  stopAt = started + options.durationMs;
  await Promise.all(running);
  const seconds = (performance.now() - started) / 1000;
  const rvAdvanced = (await rvOf()) - rvBefore;
  return { patches, errors, seconds, perSecond: patches / seconds, committed, rvAdvanced };
}
