/**
 * The embedded API server's plain-HTTP listeners side by side: ours
 * (`http_listener.ts`, the default), `Deno.serve` (no header or idle
 * timeouts) and Deno's `node:http`, each serving the same work from a process
 * of its own, alternately, for `ROUNDS` rounds (default 3). Printed per
 * listener and round: the server's CPU per request (`/proc/<pid>/stat`) and
 * the rate, for GETs of one ConfigMap and for whole ConfigMap lifecycles
 * (POST, three merge PATCHes, DELETE) with two watches open — the lifecycle
 * is roughly what an operator makes a server do per object.
 *
 * Run: `deno task bench:listeners [ROUNDS]`.
 *
 * @module
 */

import { readCpuSeconds } from "./_server_process.ts";

const LISTENERS = ["kopf", "deno-serve", "node"] as const;
const ROUNDS = Number(Deno.args[0] ?? 3);
const GETS = 4000;
const LIFECYCLES = 2000;
const CONCURRENCY = 16;

async function measure(listener: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./_listener_server.ts", import.meta.url).pathname, listener],
    stdout: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let first = "";
  while (!first.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the ${listener} server exited before printing its URL`);
    first += value;
  }
  reader.releaseLock();
  const url = first.trim();
  const cm = `${url}/api/v1/namespaces/default/configmaps`;
  const send = (method: string, path: string, body?: unknown, type = "application/json") =>
    fetch(path, {
      method,
      headers: { "content-type": type },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }).then(async (r) => {
      await r.arrayBuffer();
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status}`);
    });
  const parallel = async (count: number, one: (i: number) => Promise<void>) => {
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await one(next++);
    }));
  };
  try {
    await send("POST", cm, { metadata: { name: "probe" }, data: { a: "1" } });
    // Two watches, open (their headers came) before the clock starts, read until the end.
    const stopWatches = new AbortController();
    const opened = await Promise.all(
      [0, 1].map(() => fetch(`${cm}?watch=true`, { signal: stopWatches.signal })),
    );
    const watches = opened.map(async (r) => {
      const body = r.body!.getReader();
      try {
        while (!(await body.read()).done) { /* every event read */ }
      } catch { /* stopped */ }
    });
    let cpu = await readCpuSeconds(child.pid);
    let t = performance.now();
    await parallel(GETS, () => send("GET", `${cm}/probe`));
    const getCpu = (await readCpuSeconds(child.pid)) - cpu;
    const getSeconds = (performance.now() - t) / 1000;
    const merge = "application/merge-patch+json";
    cpu = await readCpuSeconds(child.pid);
    t = performance.now();
    await parallel(LIFECYCLES, async (i) => {
      const one = `${cm}/c${i}`;
      await send("POST", cm, { metadata: { name: `c${i}` }, data: { spec: "x".repeat(200) } });
      await send("PATCH", one, { metadata: { finalizers: ["example.com/f"] } }, merge);
      await send("PATCH", one, { metadata: { annotations: { handled: "yes" } } }, merge);
      await send("PATCH", one, { metadata: { finalizers: null } }, merge);
      await send("DELETE", one);
    });
    const lifeCpu = (await readCpuSeconds(child.pid)) - cpu;
    const lifeSeconds = (performance.now() - t) / 1000;
    stopWatches.abort();
    await Promise.all(watches);
    return `${listener.padEnd(10)} GET: ${(getCpu / GETS * 1e6).toFixed(0)} µs server CPU, ` +
      `${Math.round(GETS / getSeconds)}/s   lifecycle: ${
        (lifeCpu / LIFECYCLES * 1e6).toFixed(0)
      } µs server CPU, ${Math.round(LIFECYCLES / lifeSeconds)}/s`;
  } finally {
    child.kill("SIGINT");
    await child.status;
  }
}

if (import.meta.main) {
  console.log(
    `listeners: ${GETS} GETs and ${LIFECYCLES} lifecycles (POST, 3 merge PATCHes, DELETE; ` +
      `2 watches), ${CONCURRENCY} keep-alive clients; server CPU per request or lifecycle`,
  );
  for (let round = 1; round <= ROUNDS; round++) {
    for (const listener of LISTENERS) console.log(`#${round} ${await measure(listener)}`);
  }
}
