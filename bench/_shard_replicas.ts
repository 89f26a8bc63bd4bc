/**
 * Sharded replicas for the benchmarks (`sharding_bench.ts`, `shard_cpu_bench.ts`): each a
 * `kopf run -q -n NS --shards` process of its own with its own `POD_ID`, and the group's
 * convergence as its member Leases show it.
 *
 * @module
 */

import type { BenchClient } from "./_client.ts";
import { expectOk } from "./_client.ts";
import { readCpuSeconds } from "./_server_process.ts";

const ROOT = new URL("../", import.meta.url);

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
   */
  constructor(id: string, file: string, namespace: string, kubeconfig: string) {
    this.id = id;
    this.child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        // E.g. KOPF_BENCH_OPERATOR_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile them.
        ...(Deno.env.get("KOPF_BENCH_OPERATOR_FLAGS")?.split(" ").filter(Boolean) ?? []),
        new URL("cli.ts", ROOT).pathname,
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
