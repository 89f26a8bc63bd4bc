/**
 * Shared set-up of the example tests: an embedded API server with the
 * example CRD applied, and kubectl bound to it; plus the small helpers the
 * example tests have in common — polling until a state is reached, a free
 * TCP port for the probes, and a recorder of the objects' versions as a
 * watch delivers them. (The operator as a child process is in `_process.ts`.)
 *
 * @module
 */

import assert from "node:assert/strict";
import { KopfRunner, type RunningApiServer, startApiServer } from "../../testing.ts";

/** An object as the API server returns it (the tests read it freely). */
// deno-lint-ignore no-explicit-any
export type Obj = any;

/** The repository root (with a trailing slash). */
export const ROOT = new URL("../../", import.meta.url).pathname;

/** kubectl's result. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** An API server with the example CRD, plus a kubectl bound to it. */
export interface Cluster extends AsyncDisposable {
  api: RunningApiServer;
  kubectl(...args: string[]): Promise<KubectlResult>;
}

/**
 * Starts an API server, applies examples/crd.yaml, and gives a kubectl for it.
 *
 * @returns The cluster; dispose it with `await using`.
 */
export async function cluster(): Promise<Cluster> {
  const api = await startApiServer();
  const home = await Deno.makeTempDir({ prefix: "kopf-test-home-" });
  const kubectl = async (...args: string[]): Promise<KubectlResult> => {
    const out = await new Deno.Command("kubectl", {
      args: ["--kubeconfig", api.kubeconfig.path, ...args],
      env: { HOME: home },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  };
  const crd = await kubectl("apply", "-f", `${ROOT}examples/crd.yaml`);
  if (crd.code !== 0) throw new Error(`kubectl apply of the CRD failed: ${crd.stderr}`);
  return {
    api,
    kubectl,
    async [Symbol.asyncDispose]() {
      await api.stop();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * Polls `get` until its value passes `ok`, and returns that value.
 *
 * @param what What is awaited (for the failure message).
 * @param get Reads the current value (sync or async).
 * @param ok Whether the value is the awaited one (by default: is it truthy).
 * @param seconds How long to poll at most.
 * @returns The first value that passes `ok`.
 * @throws {assert.AssertionError} When no value passes within `seconds` (with the last one).
 */
export async function eventually<T>(
  what: string,
  get: () => T | Promise<T>,
  ok: (value: T) => boolean = Boolean,
  seconds = 10,
): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  while (true) {
    const value = await get();
    if (ok(value)) return value;
    if (Date.now() > deadline) {
      assert.fail(`not within ${seconds}s: ${what} (last: ${JSON.stringify(value)})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A TCP port on 127.0.0.1 that nobody listens at now: for a connection that must be refused.
 * Never for a server to listen at (another test may take the number meanwhile): servers bind
 * port 0 and report the port they got.
 *
 * @returns The port number.
 */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** The versions of objects a watch has delivered so far, and how to stop watching. */
export interface WatchedVersions {
  /** Every version, in the order of delivery (the events' `object`s). */
  versions: Obj[];
  /** Stops the watch and waits until its reading has ended. */
  stop(): Promise<void>;
}

/**
 * Records every version of the example objects (KopfExamples in `default`), as a watch
 * delivers them — to check what the objects carried between the operator's steps.
 *
 * @param url The API server's URL.
 * @returns The recorded versions (growing while watching); stop it when done.
 */
export async function watchVersions(url: string): Promise<WatchedVersions> {
  const abort = new AbortController();
  const response = await fetch(
    `${url}/apis/kopf.dev/v1/namespaces/default/kopfexamples?watch=true`,
    { signal: abort.signal },
  );
  assert.equal(response.status, 200);
  const versions: Obj[] = [];
  const reading = (async () => {
    let buffer = "";
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk, { stream: true });
        let nl;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line) versions.push(JSON.parse(line).object);
        }
      }
    } catch (e) {
      if (!abort.signal.aborted) throw e;
    }
  })();
  return {
    versions,
    stop: async () => {
      abort.abort();
      await reading;
    },
  };
}

/** What {@link runRecorded} gives back: the stopped runner and every version of the object. */
export interface RecordedRun {
  runner: KopfRunner;
  versions: Obj[];
}

/**
 * Runs an example as `kopf run -A --verbose` on the cluster, applies examples/obj.yaml, waits
 * for a log line and for the cycle's last patch (the diff base) to come through a watch, then
 * stops the operator — recording every version of the object on the way.
 *
 * @param c The cluster.
 * @param example The example's path under examples/, e.g. `03-exceptions/example.ts`.
 * @param until The log line that ends the handling.
 * @param seconds How long to wait for it.
 * @returns The stopped runner and the recorded versions.
 */
export async function runRecorded(
  c: Cluster,
  example: string,
  until: string,
  seconds: number,
): Promise<RecordedRun> {
  const watch = await watchVersions(c.api.url);
  const runner = await KopfRunner.start(["run", "-A", "--verbose", `${ROOT}examples/${example}`], {
    kubeconfig: c.api.kubeconfig.path,
  });
  try {
    assert.equal((await c.kubectl("apply", "-f", `${ROOT}examples/obj.yaml`)).code, 0);
    await runner.waitFor(until, seconds);
    // The cycle's last patch (purging the progress, storing the diff base) comes through the watch.
    await eventually(
      "the last patch seen through the watch",
      () =>
        watch.versions.at(-1)?.metadata?.annotations
          ?.["kopf.zalando.org/last-handled-configuration"],
      Boolean,
      5,
    );
  } finally {
    await runner.stop();
    await watch.stop();
  }
  return { runner, versions: watch.versions };
}
