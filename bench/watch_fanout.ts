/**
 * Watch fan-out: many watchers of one resource, then a burst of changes.
 * Every watcher must see every change exactly once and in resourceVersion
 * order; anything else is a broken server, not a slow one, and fails the run.
 *
 * @module
 */

import { load as parseYaml } from "npm:js-yaml@^5";
import { type BenchClient, expectOk, runBounded } from "./_client.ts";

/** The figures of one fan-out run. */
export interface FanoutResult {
  watchers: number;
  changes: number;
  /** Events delivered to all watchers per second, first change sent to last event received. */
  eventsPerSecond: number;
  /** From the first change sent until the last watcher had the last event, in ms. */
  lastEventMs: number;
  /** From the last change acknowledged until the last watcher had it, in ms. */
  lagAfterLastAckMs: number;
  /** What was wrong with the delivered events; empty when all is well. */
  problems: string[];
}

const NAMESPACE = "bench-watch";
const RESOURCE = "/apis/kopf.dev/v1/kopfexamples";

interface Follower {
  rvs: number[];
  types: Set<string>;
  /** When the expected count was reached. */
  completeAt: number;
  /** Why reading stopped early, if it did. */
  error?: string;
  /** Resolves when the expected count is reached, or the stream ends. */
  done: Promise<void>;
  /** Resolves when reading has stopped. */
  finished: Promise<void>;
}

/**
 * Creates the KopfExample CRD of `examples/crd.yaml` and objects to change.
 *
 * @param api The client.
 * @param root The repository root.
 * @param objects How many objects.
 * @returns When they exist.
 * @throws {Error} If a create fails.
 */
export async function seedKopfExamples(
  api: BenchClient,
  root: URL,
  objects: number,
): Promise<void> {
  const crd = parseYaml(await Deno.readTextFile(new URL("examples/crd.yaml", root)));
  expectOk(
    await api.send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      body: crd,
    }),
    "creating the KopfExample CRD",
  );
  expectOk(
    await api.send("POST", "/api/v1/namespaces", { body: { metadata: { name: NAMESPACE } } }),
    "creating a namespace",
  );
  await runBounded(objects, 32, async (i) => {
    const answer = await api.send(
      "POST",
      `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`,
      {
        body: { metadata: { name: `kex-${i}` }, spec: { duration: "1m", counter: 0 } },
      },
    );
    expectOk(answer, `creating KopfExample kex-${i}`);
  });
}

/**
 * Opens `watchers` watches from the current resourceVersion, makes `changes`
 * merge patches, and checks what every watcher received.
 *
 * @param api The client.
 * @param options Watchers, changes, objects to spread them over, patch concurrency, timeout.
 * @returns Rates, timings, and any delivery problems found.
 * @throws {Error} If the setup or a patch fails.
 */
export async function measureFanout(
  api: BenchClient,
  options: {
    watchers: number;
    changes: number;
    objects: number;
    concurrency: number;
    timeoutMs: number;
  },
): Promise<FanoutResult> {
  const { watchers, changes } = options;
  const list = await api.send("GET", `${RESOURCE}?limit=1`, { parse: true });
  expectOk(list, "listing KopfExamples");
  const rv = (list.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;

  const stop = new AbortController();
  const followers: Follower[] = [];
  for (let w = 0; w < watchers; w++) {
    const res = await api.stream(`${RESOURCE}?watch=true&resourceVersion=${rv}`, stop.signal);
    if (res.status !== 200) throw new Error(`opening watch ${w} failed with HTTP ${res.status}`);
    followers.push(follow(res, changes));
  }

  const expected: number[] = [];
  const started = performance.now();
  await runBounded(changes, options.concurrency, async (i) => {
    const answer = await api.send(
      "PATCH",
      `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples/kex-${i % options.objects}`,
      {
        body: `{"spec":{"counter":${i + 1}}}`,
        contentType: "application/merge-patch+json",
        parse: true,
      },
    );
    expectOk(answer, `patching kex-${i % options.objects}`);
    const meta = (answer.body as { metadata: { resourceVersion: string } }).metadata;
    expected.push(Number(meta.resourceVersion));
  });
  const acked = performance.now();

  const timeout = setTimeout(() => stop.abort(), options.timeoutMs);
  await Promise.all(followers.map((f) => f.done));
  clearTimeout(timeout);
  // A moment more, so duplicates after the expected count would be seen too.
  await new Promise((r) => setTimeout(r, 250));
  stop.abort();
  await Promise.all(followers.map((f) => f.finished));

  expected.sort((a, b) => a - b);
  const problems: string[] = [];
  followers.forEach((f, w) => problems.push(...check(w, f, expected)));
  const last = Math.max(...followers.map((f) => f.completeAt));
  const lastEventMs = last - started;
  return {
    watchers,
    changes,
    eventsPerSecond: (watchers * changes) / (lastEventMs / 1000),
    lastEventMs,
    lagAfterLastAckMs: Math.max(0, last - acked),
    problems,
  };
}

/** Reads one watch stream, recording the resourceVersion of every event. */
function follow(res: Response, expected: number): Follower {
  const f: Follower = {
    rvs: [],
    types: new Set(),
    completeAt: Infinity,
    done: Promise.resolve(),
    finished: Promise.resolve(),
  };
  let complete!: () => void;
  const completed = new Promise<void>((r) => complete = r);
  const reading = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        let start = 0;
        let nl: number;
        while ((nl = buffered.indexOf("\n", start)) >= 0) {
          const line = buffered.slice(start, nl);
          start = nl + 1;
          const event = JSON.parse(line) as {
            type: string;
            object: { metadata: { resourceVersion: string } };
          };
          f.types.add(event.type);
          f.rvs.push(Number(event.object.metadata.resourceVersion));
          if (f.rvs.length === expected) {
            f.completeAt = performance.now();
            complete();
          }
        }
        buffered = buffered.slice(start);
      }
    } catch (e) {
      if (!(e instanceof DOMException && e.name === "AbortError")) {
        f.error = e instanceof Error ? e.message : String(e);
      }
    } finally {
      complete();
    }
  })();
  // Done when complete (or the stream ended); reading goes on to catch duplicates.
  f.done = completed;
  f.finished = reading;
  return f;
}

/** What is wrong with one watcher's events, compared with the acknowledged changes. */
function check(w: number, f: Follower, expected: number[]): string[] {
  const problems: string[] = [];
  if (f.error) problems.push(`watcher ${w}: reading failed: ${f.error}`);
  const types = [...f.types].filter((t) => t !== "MODIFIED");
  if (types.length) problems.push(`watcher ${w}: unexpected event types ${types.join(", ")}`);
  for (let i = 1; i < f.rvs.length; i++) {
    if (f.rvs[i]! <= f.rvs[i - 1]!) {
      problems.push(`watcher ${w}: resourceVersion ${f.rvs[i]} came after ${f.rvs[i - 1]}`);
      break;
    }
  }
  const got = new Set(f.rvs);
  const missing = expected.filter((rv) => !got.has(rv)).length;
  if (missing) problems.push(`watcher ${w}: ${missing} of ${expected.length} events lost`);
  const extra = f.rvs.length - (expected.length - missing);
  if (extra > 0) problems.push(`watcher ${w}: ${extra} duplicate or unexpected events`);
  return problems;
}
