/**
 * Patch latency at a fixed arrival rate, open loop: sends are scheduled on a
 * fixed timetable whether or not earlier answers came back, and each latency
 * is taken from the scheduled send time to the end of the answer. A closed
 * loop (send, wait, send) would pause its own clock while the server queues
 * and so hide exactly the stalls worth seeing (coordinated omission).
 *
 * @module
 */

import type { BenchClient } from "./_client.ts";
import { percentile } from "./_stats.ts";
import { configMapPath, nextPatch } from "./patch_throughput.ts";

/** The figures of one latency run, in milliseconds. */
export interface LatencyResult {
  sent: number;
  errors: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** How late the generator itself sent, at worst (its own scheduling delay, included above). */
  maxSendDelay: number;
}

/**
 * Patches at `rate` per second for `durationMs`, on a fixed timetable.
 *
 * @param api The client.
 * @param options The rate, the duration, and how many seeded objects to spread over.
 * @returns Latency percentiles from the scheduled send times.
 */
export function measureLatency(
  api: BenchClient,
  options: { rate: number; durationMs: number; objects: number },
): Promise<LatencyResult> {
  return openLoop(options, async (i) => {
    const answer = await api.send("PATCH", configMapPath(i % options.objects), {
      body: nextPatch(),
      contentType: "application/merge-patch+json",
    });
    return answer.status === 200;
  });
}

/**
 * Sends requests at `rate` per second for `durationMs` on a fixed timetable (open loop), and
 * takes each latency from its scheduled send time to the end of its answer.
 *
 * @param options The rate and the duration.
 * @param send Sends request number `i`; resolves to whether it succeeded (a throw is an error).
 * @returns Latency percentiles from the scheduled send times.
 */
export async function openLoop(
  options: { rate: number; durationMs: number },
  send: (i: number) => Promise<boolean>,
): Promise<LatencyResult> {
  const total = Math.round((options.rate * options.durationMs) / 1000);
  const interval = 1000 / options.rate;
  const latencies = new Float64Array(total);
  let errors = 0;
  let maxSendDelay = 0;
  const inflight: Promise<void>[] = [];
  const one = async (i: number, scheduled: number) => {
    try {
      if (!await send(i)) errors++;
    } catch {
      errors++;
    }
    latencies[i] = performance.now() - scheduled;
  };
  const start = performance.now() + 20;
  let i = 0;
  while (i < total) {
    const now = performance.now();
    for (; i < total && start + i * interval <= now; i++) {
      const scheduled = start + i * interval;
      maxSendDelay = Math.max(maxSendDelay, now - scheduled);
      inflight.push(one(i, scheduled));
    }
    if (i < total) {
      const wait = start + i * interval - performance.now();
      await new Promise((r) => setTimeout(r, Math.max(0, wait)));
    }
  }
  await Promise.all(inflight);
  const sorted = Array.from(latencies).sort((a, b) => a - b);
  return {
    sent: total,
    errors,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    maxSendDelay,
  };
}
