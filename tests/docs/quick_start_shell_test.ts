/**
 * The README's quick start in the shell, as written: `deno task apiserver --port 0` in one shell,
 * then — with the `KUBECONFIG` it prints — `kubectl apply -f examples/crd.yaml` and
 * `deno task kopf run -A --verbose examples/01-minimal/example.ts` in another; then, as the text
 * says, `kubectl apply -f examples/obj.yaml`, `kubectl get kopfexamples` (the MESSAGE column
 * shows the handler's result) and `kubectl delete -f examples/obj.yaml`.
 *
 * The test reads the shell block from the README and fails if its commands change without it.
 * The tasks run as `deno.json` defines them (`deno task X args` is the task's command plus the
 * args), each a process of its own, stopped with SIGINT as Ctrl-C stops it. One deviation: the
 * API server writes its kubeconfig to a temporary file (`--kubeconfig`), not to
 * `./kopf-apiserver.kubeconfig`, which tests running in parallel would share.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../examples/_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";
import { denoDir } from "../_deno_dir.ts";

/** A process with its output collected. */
class Shell {
  #child: Deno.ChildProcess;
  #text = "";
  #pumps: Promise<void>[];

  constructor(command: string[], env: Record<string, string>) {
    this.#child = new Deno.Command(command[0] === "deno" ? Deno.execPath() : command[0]!, {
      args: command.slice(1),
      cwd: ROOT,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#pumps = [this.#pump(this.#child.stdout), this.#pump(this.#child.stderr)];
  }

  async #pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) this.#text += chunk;
  }

  get output(): string {
    return this.#text;
  }

  async waitFor(pattern: RegExp, seconds = 30): Promise<RegExpExecArray> {
    for (let i = 0; i < seconds * 20; i++) {
      const m = pattern.exec(this.#text);
      if (m) return m;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no ${pattern} within ${seconds}s:\n${this.#text}`);
  }

  async stop(): Promise<number> {
    try {
      this.#child.kill("SIGINT");
    } catch { /* exited */ }
    const { code } = await this.#child.status;
    await Promise.all(this.#pumps);
    return code;
  }
}

/** `deno task NAME args…` as deno.json defines the task. */
async function task(name: string, args: string[]): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const line = config.tasks[name] as string;
  assert.ok(line && !/[&|;<>]/.test(line), `task ${name} is one plain command: ${line}`);
  return [...line.split(/\s+/), ...args];
}

testWithKubectl(
  "README quick start, in the shell: the API server, the CRD, kopf run; an object's result in its MESSAGE column",
  async () => {
    const readme = await Deno.readTextFile(`${ROOT}README.md`);
    const block = readme.split(
      "Run it against the embedded API server, in two shells:\n\n```sh\n",
    )[1]
      ?.split("```")[0];
    assert.ok(block, "the README's quick start has its shell block");
    const commands = block.split("\n").map((l) => l.replace(/#.*$/, "").trim()).filter(Boolean);
    assert.deepEqual(commands, [
      "deno task apiserver --port 0",
      "kubectl apply -f examples/crd.yaml",
      "deno task kopf run -A --verbose examples/01-minimal/example.ts",
    ]);

    const dir = await Deno.makeTempDir({ prefix: "kopf-quickstart-" });
    const home = join(dir, "home");
    await Deno.mkdir(home);
    const apiserver = new Shell(
      await task("apiserver", ["--port", "0", "--kubeconfig", join(dir, "kubeconfig")]),
      {},
    );
    let operator: Shell | undefined;
    try {
      // Shell 1 prints the line to paste into shell 2.
      const exported = await apiserver.waitFor(/^export KUBECONFIG=(\S+)$/m);
      // The second shell's HOME is its own (kubectl's discovery cache, no ~/.kube/config of the
      // machine's); Deno's cache stays the one this run has filled (see _deno_dir.ts).
      const env = { KUBECONFIG: exported[1]!, HOME: home, DENO_DIR: await denoDir() };
      const kubectl = async (...args: string[]) => {
        const out = await new Deno.Command("kubectl", {
          args,
          cwd: ROOT,
          env,
          stdout: "piped",
          stderr: "piped",
        })
          .output();
        const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
        assert.equal(out.code, 0, `kubectl ${args.join(" ")}: ${text}`);
        return text;
      };
      await kubectl("apply", "-f", "examples/crd.yaml");
      operator = new Shell(
        await task("kopf", ["run", "-A", "--verbose", "examples/01-minimal/example.ts"]),
        env,
      );
      await operator.waitFor(/Initial authentication has finished\./);
      // The third shell.
      await kubectl("apply", "-f", "examples/obj.yaml");
      await operator.waitFor(/All handlers succeeded for creation\./);
      assert.match(await kubectl("get", "kopfexamples"), /kopf-example-1\s+1m\s+hello world/);
      await kubectl("delete", "-f", "examples/obj.yaml");
      // Gone: no handler holds it (the example has no deletion handler).
    } finally {
      const opCode: number | undefined = operator ? await operator.stop() : undefined;
      const apiCode = await apiserver.stop();
      await Deno.remove(dir, { recursive: true });
      assert.equal(opCode ?? 0, 0, operator?.output);
      assert.equal(apiCode, 0, apiserver.output);
    }
  },
);
