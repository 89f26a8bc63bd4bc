/**
 * The framework's JavaScript per object, alone: the processing cycles of the operator bench's
 * objects (`_bench_operator.ts`: one create handler returning a small dict, a delete handler)
 * run in this process on an in-memory stand-in for the API — no HTTP, no JSON on the wire, no
 * watch, no queues — so that what is measured is the cycle itself: causes, the diff base, the
 * handler protocol, progress, patches, logging. Per object, as in the operator: the ADDED event
 * (the finalizer, then the create handler; its writes), then our last write's echo (the no-op
 * cycle). The stand-in answers a patch with a new body as the server would (a JSON patch applied,
 * a merge patch merged, the resourceVersion bumped).
 *
 * It prints CPU µs and bytes allocated per object over rounds of N objects (the first round
 * warms the JIT up); with `--cpu-prof` a profile of it all (summarise it with `cpuprofile.ts`).
 * This is a probe for finding and checking framework costs, steadier than the end-to-end
 * benchmarks on a shared machine; their figures are what the targets are about.
 *
 * Run: `deno run -A bench/cycle_probe.ts [N] [ROUNDS]` (default 5,000 objects, 6 rounds);
 * `KOPF_PROBE_POSTING=1` posts the framework's info lines as the shipped operator does, to a
 * poster that only counts them (the loggers' part of posting, not the recorder's);
 * `KOPF_PROBE_HEAP=FILE` writes a sampling heap profile of the rounds after the first (what they
 * allocated, collected objects included) to FILE and prints the allocations per object by
 * function.
 *
 * @module
 */

import { Session } from "node:inspector";
import process from "node:process";
import v8 from "node:v8";
import * as kopf from "../mod.ts";
import { getDefaultLifecycle } from "../src/core/actions/lifecycles.ts";
import type { ObjectApi } from "../src/core/actions/application.ts";
import {
  newMemory,
  type OperatorContext,
  processEvent,
  type RawEvent,
} from "../src/core/reactor/processing.ts";
import { fmt } from "./_stats.ts";
import { type HeapNode, sumHeapProfile } from "./trickle_probe.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const KEX = new kopf.Resource({
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
});

/** A deep copy of JSON data (as the server's answer is a new body each time). */
function copy<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copy) as T;
  const out: Obj = {};
  for (const k in value) out[k] = copy((value as Obj)[k]);
  return out as T;
}

/** Applies a JSON patch of `add`/`remove`/`replace`/`test` ops (what the cycle sends). */
function applyJson(body: Obj, ops: Obj[]): Obj {
  const out = copy(body);
  for (const op of ops) {
    const path = (op.path as string).split("/").slice(1);
    const last = path.pop()!;
    let at = out;
    for (const p of path) at = at[p] ??= {};
    if (op.op === "test") continue;
    if (op.op === "remove") {
      if (Array.isArray(at)) at.splice(Number(last), 1);
      else delete at[last];
    } else at[last] = copy(op.value);
  }
  return out;
}

/** Merges a merge patch in (null deletes). */
function merge(into: Obj, patch: Obj): Obj {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete into[k];
    else if (typeof v === "object" && !Array.isArray(v) && typeof into[k] === "object") {
      merge(into[k], v);
    } else into[k] = copy(v);
  }
  return into;
}

if (import.meta.main) {
  const n = Number(Deno.args[0] ?? 5000);
  const rounds = Number(Deno.args[1] ?? 6);
  const posting = Deno.env.get("KOPF_PROBE_POSTING") === "1";
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopf.dev", "v1", "kopfexamples", { registry, id: "create_fn" }, () => ({
    message: "created",
  }));
  kopf.on.delete("kopf.dev", "v1", "kopfexamples", { registry, id: "delete_fn" }, () => {});
  const settings = new kopf.OperatorSettings();
  settings.posting.enabled = posting;
  let posted = 0;
  const op: OperatorContext = {
    registry,
    settings,
    memo: {},
    indices: {},
    sink: Object.assign(() => {}, { level: "warning" as const }),
    post: () => void posted++,
    lifecycle: getDefaultLifecycle(),
  };
  let rv = 1;
  /** The object as the stand-in API has it now. */
  let stored: Obj | undefined;
  const api: ObjectApi = {
    patch(_name, _ns, body, type) {
      const current = stored!;
      const next = type === "json"
        ? applyJson(current, body as Obj[])
        : merge(copy(current), body as Obj);
      next.metadata.resourceVersion = String(++rv);
      stored = next;
      return Promise.resolve(next);
    },
    get: () => Promise.resolve(stored),
  };

  /** CPU µs of this process (all threads), user and system. */
  const cpu = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const allocated = () =>
    (v8.getHeapStatistics() as { total_allocated_bytes: number }).total_allocated_bytes;

  const heapFile = Deno.env.get("KOPF_PROBE_HEAP");
  const session = heapFile ? new Session() : undefined;
  session?.connect();
  const inspect = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, unknown>>((resolve, reject) =>
      session!.post(
        method,
        params,
        (error: Error | null, result?: object) =>
          error ? reject(error) : resolve(result as Record<string, unknown>),
      )
    );
  let profiled = 0;

  for (let round = 0; round < rounds; round++) {
    if (session && round === 1) {
      await inspect("HeapProfiler.enable");
      await inspect("HeapProfiler.startSampling", {
        samplingInterval: 1024,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
    }
    if (round >= 1) profiled += n;
    const c0 = cpu();
    const a0 = allocated();
    let cycles = 0;
    for (let i = 0; i < n; i++) {
      stored = {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: {
          name: `kex-${round}-${i}`,
          namespace: "bench-operator",
          uid: crypto.randomUUID(),
          resourceVersion: String(++rv),
          creationTimestamp: "2026-01-01T00:00:00Z",
          generation: 1,
        },
        spec: { duration: "1m", counter: 0 },
      };
      const memory = newMemory();
      let event: RawEvent = { type: "ADDED", object: stored };
      for (let c = 0; c < 4; c++) {
        const before: Obj | undefined = stored;
        const result = await processEvent(op, KEX, api, event, memory);
        cycles++;
        // Our last write's echo comes next; nothing written: done.
        if (stored === before && result.delay === undefined) break;
        event = { type: "MODIFIED", object: stored };
      }
    }
    const us = (cpu() - c0) / n;
    const kib = (allocated() - a0) / n / 1024;
    console.log(
      `round ${round + 1}: ${fmt(n)} objects, ${fmt(cycles / n, 2)} cycles each: ` +
        `CPU ${fmt(us, 1)} µs, allocated ${fmt(kib, 1)} KiB per object` +
        (posting ? `, ${fmt(posted / n / (round + 1), 2)} events posted` : ""),
    );
  }
  if (session && heapFile && profiled) {
    const { profile } = await inspect("HeapProfiler.stopSampling") as { profile: HeapProfile };
    await Deno.writeTextFile(heapFile, JSON.stringify(profile));
    const { byFunction } = sumHeapProfile(profile.head);
    const rows = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 30);
    console.log(`sampled allocations per object, by function (${heapFile}):`);
    for (const [key, bytes] of rows) {
      console.log(`  ${fmt(bytes / profiled, 0).padStart(6)} B  ${key}`);
    }
  }
}

/** A sampling heap profile (`HeapProfiler.stopSampling`). */
interface HeapProfile {
  head: HeapNode;
}
