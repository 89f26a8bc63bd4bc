/**
 * Shared set-up of the handling tests: an embedded API server with the
 * example CRD (`kopfexamples.kopf.dev`, status with
 * `x-kubernetes-preserve-unknown-fields`), plain-HTTP helpers to create,
 * read, patch and delete objects, waiting for object states, counting the
 * operator's PATCH requests, and an in-process operator with an inline
 * registry.
 *
 * @module
 */

import assert from "node:assert/strict";
import { FakeClock, KopfRunner, type RunningApiServer, startApiServer } from "../../testing.ts";
import type { Clock, OperatorRegistry, OperatorSettings } from "../../mod.ts";
import { crd } from "../reactor/_setup.ts";

// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any>;

/** The resource key of the example CRD, as the API server counts requests. */
export const KEX = "kopfexamples.kopf.dev";

const BASE = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";

/** The example CRD, as in examples/crd.yaml (a status subresource, unknown fields preserved). */
export const CRD: Record<string, unknown> = crd({
  group: "kopf.dev",
  plural: "kopfexamples",
  kind: "KopfExample",
  scope: "Namespaced",
});

/** A test cluster: the API server with the CRD and object helpers. */
export interface Env extends AsyncDisposable {
  api: RunningApiServer;
  /** Creates a KopfExample in `default` (name and spec, plus any metadata given). */
  create(name: string, spec?: Obj, metadata?: Obj): Promise<Obj>;
  /** Reads an object; undefined when it does not exist. */
  get(name: string): Promise<Obj | undefined>;
  /** Merge-patches an object (main resource, not the status). */
  patch(name: string, patch: Obj): Promise<Obj>;
  /** Merge-patches the status subresource of an object. */
  patchStatus(name: string, patch: Obj): Promise<Obj>;
  /** Deletes an object (it may linger while finalizers are on it). */
  remove(name: string): Promise<void>;
  /** Polls until the object matches, returning it; throws with the last state on timeout. */
  waitFor(name: string, check: (o: Obj) => boolean, seconds?: number): Promise<Obj>;
  /** Polls until the object is gone. */
  waitGone(name: string, seconds?: number): Promise<void>;
  /** The operator's PATCH requests to KopfExamples so far (main and /status; not the test's own). */
  patches(): number;
  /**
   * Runs an operator with this registry (and settings) against the server, cluster-wide, verbose;
   * on `clock` if given (see {@link pumped}).
   */
  operator(
    registry: OperatorRegistry,
    settings?: OperatorSettings,
    options?: { clock?: Clock },
  ): Promise<KopfRunner>;
}

async function call(api: RunningApiServer, method: string, path: string, body?: unknown) {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = {
      "content-type": method === "PATCH" ? "application/merge-patch+json" : "application/json",
    };
  }
  const res = await fetch(`${api.url}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/**
 * Starts an API server with the example CRD.
 *
 * @returns The environment; dispose it with `await using`.
 */
export async function setup(): Promise<Env> {
  const api = await startApiServer();
  const crd = await call(
    api,
    "POST",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    CRD,
  );
  if (crd.status !== 201) throw new Error(`CRD creation failed: ${JSON.stringify(crd.body)}`);
  const runners: KopfRunner[] = [];
  let own = 0;
  const env: Env = {
    api,
    async create(name, spec = {}, metadata = {}) {
      const res = await call(api, "POST", BASE, {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: { ...metadata, name, namespace: "default" },
        spec,
      });
      if (res.status !== 201) throw new Error(`create ${name}: ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async get(name) {
      const res = await call(api, "GET", `${BASE}/${name}`);
      return res.status === 200 ? res.body : undefined;
    },
    async patch(name, patch) {
      own++;
      const res = await call(api, "PATCH", `${BASE}/${name}`, patch);
      if (res.status !== 200) throw new Error(`patch ${name}: ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async patchStatus(name, patch) {
      own++;
      const res = await call(api, "PATCH", `${BASE}/${name}/status`, patch);
      if (res.status !== 200) throw new Error(`patch ${name}/status: ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async remove(name) {
      const res = await call(api, "DELETE", `${BASE}/${name}`);
      if (res.status !== 200 && res.status !== 202) {
        throw new Error(`delete ${name}: ${JSON.stringify(res.body)}`);
      }
    },
    async waitFor(name, check, seconds = 10) {
      const deadline = Date.now() + seconds * 1000;
      let last: Obj | undefined;
      while (Date.now() < deadline) {
        last = await env.get(name);
        if (last && check(last)) {
          // The operator writes the object and its status in two PATCHes (status subresource):
          // the state is reached when the object stops changing, not between the two — or, for
          // an object that never stops (timers, daemons), at most 0.3 s after the check passed.
          for (let i = 0; i < 3 && Date.now() < deadline; i++) {
            await new Promise((r) => setTimeout(r, 100));
            const now = await env.get(name);
            if (!now || now.metadata?.resourceVersion === last.metadata?.resourceVersion) break;
            last = now;
          }
          if (check(last)) return last;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`${name} did not reach the state in ${seconds}s: ${JSON.stringify(last)}`);
    },
    async waitGone(name, seconds = 10) {
      const deadline = Date.now() + seconds * 1000;
      let last: Obj | undefined;
      while (Date.now() < deadline) {
        last = await env.get(name);
        if (!last) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`${name} is still there after ${seconds}s: ${JSON.stringify(last)}`);
    },
    patches: () => api.countRequests({ verb: "patch", resource: KEX }) - own,
    async operator(registry, settings, options = {}) {
      const runner = await KopfRunner.start(["run", "-A", "--verbose"], {
        registry,
        kubeconfig: api.kubeconfig.path,
        ...(settings ? { settings } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
        ...(Deno.env.get("KOPF_TEST_ECHO") ? { echo: true } : {}),
      });
      runners.push(runner);
      return runner;
    },
    async [Symbol.asyncDispose]() {
      for (const r of runners) await r.stop().catch(() => {});
      await api.stop();
    },
  };
  return env;
}

/** Annotations of an object (`{}` when none). */
export function annotations(o: Obj | undefined): Record<string, string> {
  return o?.metadata?.annotations ?? {};
}

/** Kopf's own annotations of an object (`kopf.zalando.org/…`), by their name after the prefix. */
export function kopfAnnotations(o: Obj | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(annotations(o))) {
    if (k.startsWith("kopf.zalando.org/")) out[k.slice("kopf.zalando.org/".length)] = v;
  }
  return out;
}

/** The last-handled-configuration annotation's key. */
export const LAST_HANDLED = "kopf.zalando.org/last-handled-configuration";

/** Kopf's default finalizer. */
export const FINALIZER = "kopf.zalando.org/KopfFinalizerMarker";

/** A Python-Kopf timestamp (`isoformat()` of an aware UTC time, microseconds) for `offsetSeconds` from now. */
export function pyTime(offsetSeconds: number, micros = 123456): string {
  const iso = new Date(Date.now() + offsetSeconds * 1000).toISOString();
  return `${iso.slice(0, 19)}.${String(micros).padStart(6, "0")}+00:00`;
}

/** Kopf's timestamp shape. */
export const PY_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

/** Waits a little (for "nothing else happens" checks). */
export function sleep(seconds: number): Promise<void> {
  return new Promise((r) => setTimeout(r, seconds * 1000));
}

/** Counts the occurrences of a substring. */
export function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/**
 * Moves a fake clock along at about the wall clock's pace (10 ms steps) until disposed, so that an
 * operator on it handles real I/O as usual (batch windows, consistency waits); a test stops the
 * pump and `advance()`s the clock itself to jump over a long quiet time ("nothing runs again in
 * ten minutes") in a moment.
 *
 * @param clock The operator's clock.
 * @returns The running pump; `await using` stops it (after its current step).
 */
export function pumped(clock: FakeClock): AsyncDisposable {
  let running = true;
  const pumping = (async () => {
    while (running) {
      await clock.advance(0.01);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    async [Symbol.asyncDispose]() {
      running = false;
      await pumping;
    },
  };
}

/** An operator's fake clock for a test against the real server, and the ways to move it. */
export interface Clocked {
  clock: FakeClock;
  /** Advances until `check()` holds, for `seconds` of fake time at most; fails if not. */
  until(check: () => boolean, what: string, seconds?: number): Promise<void>;
  /** Advances in 10 ms steps, with a real request between them, until `check()` holds. */
  drive(check: () => Promise<boolean>, what: string, seconds?: number): Promise<void>;
  /** Stops the operator, advancing the clock for the waits of its exit. */
  stop(runner: KopfRunner): Promise<void>;
}

/**
 * A fake clock (started at the real now) for an operator against the embedded server: the
 * operator's timing runs on it, the I/O stays real (see tests/engines/timers_test.ts).
 *
 * @returns The clock and its drivers.
 */
export function clocked(): Clocked {
  const clock = new FakeClock({ start: new Date() });
  return {
    clock,
    /** Advances until `check()` holds, for `seconds` of fake time at most; fails if not. */
    async until(check: () => boolean, what: string, seconds = 10): Promise<void> {
      assert.ok(await clock.advanceUntil(check, seconds), `not within ${seconds} fake s: ${what}`);
    },
    /** Advances in 10 ms steps, with a real request between them, until `check()` holds. */
    async drive(check: () => Promise<boolean>, what: string, seconds = 10): Promise<void> {
      const end = clock.now() + seconds * 1000;
      while (!(await check())) {
        if (clock.now() >= end) assert.fail(`not within ${seconds} fake s: ${what}`);
        await clock.advance(0.01);
      }
    },
    /** Stops the operator, advancing the clock for the waits of its exit. */
    async stop(runner: KopfRunner): Promise<void> {
      let stopped = false;
      const stopping = runner.stop().finally(() => (stopped = true));
      await clock.advanceUntil(() => stopped, 60);
      await stopping;
    },
  };
}

/** Deletes the object and drives the clock until it is gone. */
export async function removed(env: Env, t: Clocked, name: string): Promise<void> {
  await env.remove(name);
  await t.drive(async () => (await env.get(name)) === undefined, `${name} gone`);
}
