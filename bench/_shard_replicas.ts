/**
 * Sharded replicas for the benchmarks (`sharding_bench.ts`, `shard_cpu_bench.ts`): each a
 * `kopf run -q -n NS --shards` process of its own with its own `POD_ID`, run as `kopf run` ships:
 * with its Deno and V8 flags (as the operator benchmark's operators: `operatorRunFlags()`,
 * `KOPF_BENCH_V8_FLAGS=none` for Deno's defaults) and from a bundle of the handlers file (`kopf
 * bundle`, as the image runs it; `KOPF_BENCH_BUNDLE=0` for the sources) — and the group's
 * convergence as its member Leases show it.
 *
 * @module
 */

import type { BenchClient } from "./_client.ts";
import { expectOk } from "./_client.ts";
import { readCpuSeconds } from "./_server_process.ts";
import { operatorBundled, operatorRunFlags } from "./_operator_process.ts";
import { runBundle } from "../src/cli/bundle.ts";
import { memberLeaseName } from "../src/core/engines/shard_leases.ts";
import {
  INCARNATION_ANNOTATION,
  RELEASING_ANNOTATION,
  SHARD_GROUP_LABEL,
  VIEW_ANNOTATION,
} from "../src/core/engines/shard_members.ts";

const ROOT = new URL("../", import.meta.url);

const entries = new Map<string, Promise<string>>();

/**
 * What a replica runs for a handlers file: its bundle's `main.js` (`kopf bundle`, made once per
 * process into a temporary directory removed at the exit) as the image runs `kopf run`, or
 * `cli.ts` from the sources ({@link operatorBundled}).
 *
 * @param file The handlers file.
 * @returns The program's path (its first argument is then `run`).
 */
export function replicaProgram(file: string): Promise<string> {
  if (!operatorBundled()) return Promise.resolve(new URL("cli.ts", ROOT).pathname);
  let made = entries.get(file);
  if (!made) {
    const dir = Deno.makeTempDirSync({ prefix: "kopf-bench-replicas-" });
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch { /* gone already */ }
    });
    made = runBundle([file], dir, () => {}).then(() => `${dir}/main.js`);
    entries.set(file, made);
  }
  return made;
}

/** One replica: `kopf run -q -n NS --shards` in a child process. */
export class Replica {
  readonly id: string;
  readonly child: Deno.ChildProcess;
  readonly #drained: Promise<void>;

  /**
   * Starts the replica.
   *
   * @param id Its identity (`POD_ID`).
   * @param file The handlers' file.
   * @param namespace The namespace it serves.
   * @param kubeconfig The server's kubeconfig.
   * @param program What it runs: {@link replicaProgram} of the file.
   */
  constructor(id: string, file: string, namespace: string, kubeconfig: string, program: string) {
    this.id = id;
    this.child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        ...operatorRunFlags(),
        // E.g. KOPF_BENCH_OPERATOR_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile them.
        ...(Deno.env.get("KOPF_BENCH_OPERATOR_FLAGS")?.split(" ").filter(Boolean) ?? []),
        program,
        "run",
        "-q",
        "-n",
        namespace,
        "--shards",
        file,
      ],
      env: { KUBECONFIG: kubeconfig, POD_ID: id, NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const drain = async (s: ReadableStream<Uint8Array>) => {
      for await (const chunk of s.pipeThrough(new TextDecoderStream())) {
        if (chunk.trim()) console.error(`  [${id}] ${chunk.trim()}`);
      }
    };
    this.#drained = Promise.all([drain(this.child.stdout), drain(this.child.stderr)]).then(
      () => {},
    );
  }

  /** The CPU seconds (user + system) the process has used so far; 0 when it is gone. */
  cpuSeconds(): Promise<number> {
    return readCpuSeconds(this.child.pid).catch(() => 0);
  }

  /**
   * Stops the replica.
   *
   * @param signal The signal to send.
   * @returns Its exit code.
   */
  async stop(signal: Deno.Signal = "SIGTERM"): Promise<number> {
    try {
      this.child.kill(signal);
    } catch { /* gone */ }
    const { code } = await this.child.status;
    await this.#drained;
    return code;
  }
}

/**
 * The group's member Leases in a namespace.
 *
 * @param api The client.
 * @param namespace The namespace.
 * @returns Each member's holder, view and releasing annotations.
 */
export async function members(
  api: BenchClient,
  namespace: string,
): Promise<Array<{ id: string; view: string | undefined; releasing: string | undefined }>> {
  const r = await api.send(
    "GET",
    `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases?labelSelector=kopf.dev%2Fshard-group%3Dkopf`,
    { parse: true },
  );
  expectOk(r, "listing the member Leases");
  // deno-lint-ignore no-explicit-any
  return (r.body as { items: any[] }).items.map((i) => ({
    id: i.spec.holderIdentity as string,
    view: i.metadata.annotations?.["kopf.dev/shard-view"] as string | undefined,
    releasing: i.metadata.annotations?.["kopf.dev/shard-releasing"] as string | undefined,
  }));
}

/**
 * Waits until exactly these replicas are members, all with the same view, nothing releasing.
 *
 * @param api The client.
 * @param namespace The namespace of the Leases.
 * @param ids The replicas' identities.
 * @param timeoutMs How long to wait.
 * @throws {Error} When the group does not converge in time.
 */
export async function converged(
  api: BenchClient,
  namespace: string,
  ids: string[],
  timeoutMs = 60_000,
): Promise<void> {
  const want = JSON.stringify([...ids].sort());
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ms = await members(api, namespace);
    const views = new Set(ms.map((m) => m.view));
    const view = Object.keys(JSON.parse(ms[0]?.view ?? "{}")).sort();
    if (
      JSON.stringify(ms.map((m) => m.id).sort()) === want && views.size === 1 &&
      JSON.stringify(view) === want && ms.every((m) => m.releasing === "[]")
    ) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the shard group did not converge on ${want}`);
}

/**
 * Members of a shard group that only stand in: their Leases, renewed every 0.3 s, publish the view
 * of the one real replica (so that it is acknowledged) and release nothing. They own their share
 * of the objects and never handle them — so the real replica's CPU for those objects' events is
 * measured with no other replica's process beside it (`shard_cpu_bench.ts`).
 */
export class StandIns implements AsyncDisposable {
  /** The stand-ins' identities. */
  readonly ids: string[];
  readonly #api: BenchClient;
  readonly #path: string;
  readonly #replica: string;
  readonly #versions = new Map<string, string>();
  #stopped = false;
  readonly #loop: Promise<void>;

  /**
   * Starts renewing the stand-ins' Leases.
   *
   * @param api The client.
   * @param namespace The namespace of the Leases.
   * @param replica The real replica's identity (whose view they publish).
   * @param ids The stand-ins' identities.
   */
  constructor(api: BenchClient, namespace: string, replica: string, ids: string[]) {
    this.#api = api;
    this.#path = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
    this.#replica = replica;
    this.ids = ids;
    this.#loop = (async () => {
      while (!this.#stopped) {
        await this.#renew();
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
  }

  async #renew(): Promise<void> {
    const real = await this.#api.send(
      "GET",
      `${this.#path}/${memberLeaseName("kopf", this.#replica)}`,
      {
        parse: true,
      },
    );
    // deno-lint-ignore no-explicit-any
    const view = (real.body as any)?.metadata?.annotations?.[VIEW_ANNOTATION] ?? "{}";
    const now = new Date().toISOString().replace(/Z$/, "000Z"); // a MicroTime
    for (const id of this.ids) {
      const name = memberLeaseName("kopf", id);
      const rv = this.#versions.get(id);
      const body = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: {
          name,
          labels: { [SHARD_GROUP_LABEL]: "kopf" },
          annotations: {
            [INCARNATION_ANNOTATION]: `${id}-1`,
            [VIEW_ANNOTATION]: view,
            [RELEASING_ANNOTATION]: "[]",
          },
          ...(rv ? { resourceVersion: rv } : {}),
        },
        spec: { holderIdentity: id, leaseDurationSeconds: 3, acquireTime: now, renewTime: now },
      };
      const r = rv
        ? await this.#api.send("PUT", `${this.#path}/${name}`, { body, parse: true })
        : await this.#api.send("POST", this.#path, { body, parse: true });
      if (r.status >= 300) this.#versions.delete(id); // read anew (a conflict, a first write)
      else {this.#versions.set(
          id,
          (r.body as { metadata: { resourceVersion: string } })
            .metadata.resourceVersion,
        );}
      if (r.status === 409 && !rv) {
        const got = await this.#api.send("GET", `${this.#path}/${name}`, { parse: true });
        const v = (got.body as { metadata?: { resourceVersion?: string } })?.metadata
          ?.resourceVersion;
        if (v) this.#versions.set(id, v);
      }
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.#stopped = true;
    await this.#loop;
  }
}
