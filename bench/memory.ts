/**
 * Memory with many objects: the server's resident set size before and after
 * creating a large number of small ConfigMaps, read from `/proc` of the
 * server's own process. Creation goes through the whole write path (admission,
 * validation, history, watch delivery), so it also yields a creation rate.
 *
 * @module
 */

import { type BenchClient, expectOk, runBounded } from "./_client.ts";
import type { ServerProcess } from "./_server_process.ts";

/** The figures of one memory run. */
export interface MemoryResult {
  objects: number;
  rssBefore: number;
  rssAfter: number;
  createdPerSecond: number;
}

const NAMESPACE = "bench-rss";

/**
 * Creates `objects` ConfigMaps with bounded concurrency and reads the RSS around it.
 *
 * @param api The client.
 * @param server The server process (for its RSS).
 * @param options How many objects, and how many creates in flight.
 * @returns RSS before and after, and the creation rate.
 * @throws {Error} If a create fails.
 */
export async function measureMemory(
  api: BenchClient,
  server: ServerProcess,
  options: { objects: number; concurrency: number },
): Promise<MemoryResult> {
  expectOk(
    await api.send("POST", "/api/v1/namespaces", { body: { metadata: { name: NAMESPACE } } }),
    "creating a namespace",
  );
  const rssBefore = await server.rss();
  const path = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
  const started = performance.now();
  await runBounded(options.objects, options.concurrency, async (i) => {
    const answer = await api.send("POST", path, {
      body: `{"metadata":{"name":"cm-${i}","labels":{"app":"bench","shard":"s${
        i % 16
      }"}},"data":{"key":"value-${i}","index":"${i}"}}`,
    });
    expectOk(answer, `creating ConfigMap cm-${i}`);
  });
  const seconds = (performance.now() - started) / 1000;
  // Let the server settle (timers, in-flight buffers) before reading.
  await new Promise((r) => setTimeout(r, 500));
  const rssAfter = await server.rss();
  return {
    objects: options.objects,
    rssBefore,
    rssAfter,
    createdPerSecond: options.objects / seconds,
  };
}
