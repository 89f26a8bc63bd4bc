/**
 * The operator benchmark's load generator, in a worker thread of the
 * benchmark's process: it creates and deletes the objects and runs the
 * referee's watch, so that none of that work queues on the main thread's
 * event loop, which drives the benchmark and samples the processes (the
 * operator under test runs in a process of its own, `_bench_operator.ts`).
 * Driven by {@link LoadGenerator} through `{ id, method, args }` messages;
 * answers `{ id, result }` or `{ id, error }`. Times are epoch milliseconds
 * with sub-millisecond precision (`performance.timeOrigin +
 * performance.now()`), comparable across threads and processes.
 *
 * @module
 */

import { BenchClient, expectOk, runBounded } from "./_client.ts";
import { WatchTracker } from "./_watch_tracker.ts";

const scope = globalThis as unknown as {
  onmessage: ((e: MessageEvent) => void) | null;
  postMessage(message: unknown): void;
  close(): void;
};

const now = () => performance.timeOrigin + performance.now();

let api: BenchClient | undefined;
let tracker: WatchTracker | undefined;
let collection = "";

function body(name: string): unknown {
  return { metadata: { name }, spec: { duration: "1m", counter: 0 } };
}

const methods: Record<string, (...args: never[]) => Promise<unknown>> = {
  async open(url: string, path: string, field: string) {
    api = new BenchClient(url);
    collection = path;
    tracker = await WatchTracker.open(api, path, field);
  },
  async create(names: string[], concurrency: number) {
    const started = now();
    await runBounded(names.length, concurrency, async (i) => {
      expectOk(
        await api!.send("POST", collection, { body: body(names[i]!) }),
        `creating ${names[i]}`,
      );
    });
    return { started, finished: now() };
  },
  async remove(names: string[], concurrency: number) {
    const started = now();
    await runBounded(names.length, concurrency, async (i) => {
      expectOk(await api!.send("DELETE", `${collection}/${names[i]}`), `deleting ${names[i]}`);
    });
    return { started, finished: now() };
  },
  async steady(names: string[], rate: number) {
    const sent: number[] = [];
    const posts: Promise<void>[] = [];
    let maxSendDelay = 0;
    const t0 = performance.now();
    for (let i = 0; i < names.length; i++) {
      const due = t0 + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const name = names[i]!;
      maxSendDelay = Math.max(maxSendDelay, performance.now() - due);
      sent.push(now());
      posts.push(
        api!.send("POST", collection, { body: body(name) }).then((a) => {
          expectOk(a, `creating ${name}`);
        }),
      );
    }
    await Promise.all(posts);
    return { sent, maxSendDelay };
  },
  async awaitAll(names: string[], which: "handled" | "gone", timeoutMs: number) {
    const seen = tracker![which];
    await tracker!.until(
      () => seen.size >= names.length && names.every((n) => seen.has(n)),
      timeoutMs,
      () =>
        `${names.length} objects to be ${
          which === "handled" ? "fully handled (their status has the create result)" : "gone"
        }: ${names.filter((n) => seen.has(n)).length} were`,
    );
    let last = 0;
    for (const n of names) last = Math.max(last, seen.get(n)!);
    return { last };
  },
  reset() {
    tracker!.reset();
    return Promise.resolve();
  },
  async close() {
    await tracker?.[Symbol.asyncDispose]();
    api?.[Symbol.dispose]();
  },
};

scope.onmessage = async (e: MessageEvent) => {
  const { id, method, args } = e.data as { id: number; method: string; args: never[] };
  try {
    const result = await methods[method]!(...args);
    scope.postMessage({ id, result });
  } catch (error) {
    scope.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
};
