/**
 * Running real kubectl binaries against the embedded API server in tests.
 *
 * Why a helper: every kubectl call needs the same isolation — its own
 * kubeconfig, and its own `HOME` so that no discovery cache from another test
 * (or from the developer's machine) hides a discovery bug — and a bound on
 * time, so that a kubectl waiting forever for a deletion or a condition fails
 * the test instead of hanging it. `get -w` is a long-running child whose
 * output is read line by line until the expected rows arrive.
 *
 * Which kubectl: the machines carry versioned binaries (`kubectl.1.27` …
 * `kubectl.1.33`) beside the `kubectl` dispatcher; where one is absent (e.g.
 * Debian's `kubernetes-client` in CI), the plain `kubectl` stands in and
 * says so in its label.
 *
 * A test that cannot run says so: {@link testWithKubectl} and
 * {@link testEachKubectl} register every test that needs kubectl, and where
 * there is none (or not the wanted version) register it as ignored with the
 * reason in its name — counted in the run's summary, listed in its output —
 * instead of registering nothing.
 *
 * @module
 */

import { at, definition } from "../../tools/test_time_limit.ts";

/** A kubectl binary to test with. */
export interface KubectlBinary {
  /** What tests are named after, e.g. "kubectl 1.27" or "kubectl (plain, for 1.27)". */
  label: string;
  /** The executable. */
  path: string;
  /** Why this binary stands in for the wanted one, if it does. */
  note?: string;
}

/** What one kubectl run printed and returned. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of one kubectl run. */
export interface RunOptions {
  /** Text to pipe to stdin (for `-f -`). */
  stdin?: string;
  /** Kill kubectl after this long (default 20 s). */
  timeoutMs?: number;
}

function which(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir && isExecutable(`${dir}/${name}`)) return Deno.realPathSync(`${dir}/${name}`);
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * Finds the kubectl binaries to test with: `kubectl.<version>` beside the
 * real `kubectl` for each wanted version, or the plain `kubectl` in its place
 * (used once, however many versions it stands in for).
 *
 * @param versions The wanted client versions, e.g. `["1.27", "1.33"]`.
 * @returns The binaries; empty when there is no kubectl at all.
 */
export function findKubectls(versions: string[]): KubectlBinary[] {
  const plain = which("kubectl");
  const dir = plain ? plain.slice(0, plain.lastIndexOf("/")) : undefined;
  const found: KubectlBinary[] = [];
  const missing: string[] = [];
  for (const v of versions) {
    const path = dir ? `${dir}/kubectl.${v}` : undefined;
    if (path && isExecutable(path)) found.push({ label: `kubectl ${v}`, path });
    else missing.push(v);
  }
  if (missing.length && plain) {
    found.push({
      label: `kubectl (plain, for ${missing.join(" and ")})`,
      path: plain,
      note: `kubectl.${missing.join(", kubectl.")} not found beside ${plain}`,
    });
  }
  return found;
}

/** Why a test that needs `kubectl` cannot run here; `undefined` when one is on the `PATH`. */
export function kubectlMissing(): string | undefined {
  return which("kubectl")
    ? undefined
    : "kubectl not found on PATH; install kubectl, e.g. Debian's kubernetes-client";
}

/** Options of a kubectl version matrix. */
export interface MatrixOptions {
  /** Only the versioned binaries: no plain `kubectl` standing in for a missing one. */
  exact?: boolean;
}

/**
 * The wanted versions' binaries (as {@link findKubectls}) and, for each wanted version with no
 * binary of its own, why it did not run.
 *
 * @param versions The wanted client versions, e.g. `["1.27", "1.33"]`.
 * @param options Whether the plain kubectl may stand in.
 * @returns The binaries to run with, and the versions not run with the reasons.
 */
export function kubectlMatrix(
  versions: string[],
  options: MatrixOptions = {},
): { binaries: KubectlBinary[]; notRun: Array<{ version: string; why: string }> } {
  const found = findKubectls(versions);
  const binaries = options.exact ? found.filter((b) => !b.note) : found;
  const missing = kubectlMissing();
  const plain = which("kubectl");
  const notRun = versions
    .filter((v) => !binaries.some((b) => b.label === `kubectl ${v}`))
    .map((version) => ({
      version,
      why: missing ??
        `kubectl.${version} not found beside ${plain}` +
          (options.exact ? "" : "; the plain kubectl ran in its place"),
    }));
  return { binaries, notRun };
}

/**
 * Registers a test that needs `kubectl` on the `PATH`: as given when there is one; else ignored,
 * its name saying why. Takes `Deno.test`'s arguments.
 *
 * @param args As for `Deno.test`: a definition, or a name and a function, or a name, options
 *   and a function.
 * @throws {TypeError} On arguments `Deno.test` would not take.
 */
export function testWithKubectl(
  ...args: [Deno.TestDefinition] | [string, Deno.TestDefinition["fn"]] | [
    string,
    Omit<Deno.TestDefinition, "name" | "fn">,
    Deno.TestDefinition["fn"],
  ]
): void {
  const def = definition(args as [unknown, unknown?, unknown?]);
  if (!def) throw new TypeError("testWithKubectl(): give Deno.test's arguments");
  const why = kubectlMissing();
  const fn = at((t: Deno.TestContext) => def.fn(t), import.meta.url);
  Deno.test(
    why ? { ...def, name: `${def.name} (not run: ${why})`, ignore: true, fn } : { ...def, fn },
  );
}

/**
 * Registers a test once per wanted kubectl version, named after the binary it runs with; a
 * version with no binary of its own is registered as ignored with the reason (no kubectl at all,
 * or the plain kubectl ran in its place).
 *
 * @param versions The wanted client versions, e.g. `["1.27", "1.33"]`.
 * @param name The test's name after the binary's label.
 * @param fn The test, given the binary.
 * @param options Other options of the test (e.g. a longer `timeout`), and whether only the
 *   versioned binaries count (`exact`).
 */
export function testEachKubectl(
  versions: string[],
  name: string,
  fn: (binary: KubectlBinary, t: Deno.TestContext) => Promise<void>,
  options: Omit<Deno.TestDefinition, "name" | "fn"> & MatrixOptions = {},
): void {
  const { exact, ...rest } = options;
  const { binaries, notRun } = kubectlMatrix(versions, exact ? { exact } : {});
  for (const binary of binaries) {
    Deno.test({
      ...rest,
      name: `${binary.label}: ${name}`,
      fn: at((t: Deno.TestContext) => fn(binary, t), import.meta.url),
    });
  }
  for (const { version, why } of notRun) {
    Deno.test({
      name: `kubectl ${version}: ${name} (not run: ${why})`,
      ignore: true,
      fn: at(() => {}, import.meta.url),
    });
  }
}

/** A kubectl bound to one server's kubeconfig and a private `HOME`. */
export class Kubectl implements AsyncDisposable {
  readonly binary: KubectlBinary;
  readonly kubeconfig: string;
  readonly home: string;

  private constructor(binary: KubectlBinary, kubeconfig: string, home: string) {
    this.binary = binary;
    this.kubeconfig = kubeconfig;
    this.home = home;
  }

  /**
   * Prepares a kubectl with a fresh temporary `HOME` (so a fresh discovery cache).
   *
   * @param binary The binary.
   * @param kubeconfig The kubeconfig path of the server under test.
   * @returns The bound kubectl; dispose it to remove its `HOME`.
   */
  static async create(binary: KubectlBinary, kubeconfig: string): Promise<Kubectl> {
    const home = await Deno.makeTempDir({ prefix: "kopf-kubectl-home-" });
    return new Kubectl(binary, kubeconfig, home);
  }

  #command(args: string[], stdin: boolean, signal?: AbortSignal): Deno.Command {
    return new Deno.Command(this.binary.path, {
      args: ["--kubeconfig", this.kubeconfig, ...args],
      env: { HOME: this.home, KUBECONFIG: this.kubeconfig },
      stdin: stdin ? "piped" : "null",
      stdout: "piped",
      stderr: "piped",
      ...(signal ? { signal } : {}),
    });
  }

  /**
   * Runs kubectl to completion.
   *
   * @param args The arguments after `--kubeconfig <path>`.
   * @param options Stdin and a time limit.
   * @returns The exit code and the output.
   * @throws {Error} If kubectl runs past the time limit (it is killed).
   */
  async run(args: string[], options: RunOptions = {}): Promise<KubectlResult> {
    const timeoutMs = options.timeoutMs ?? 20_000;
    const signal = AbortSignal.timeout(timeoutMs);
    const child = this.#command(args, options.stdin !== undefined, signal).spawn();
    if (options.stdin !== undefined) {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(options.stdin));
      await writer.close();
    }
    const out = await child.output();
    const result = {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
    if (signal.aborted) {
      throw new Error(
        `kubectl ${args.join(" ")} ran over ${timeoutMs} ms and was killed; ` +
          `stdout: ${result.stdout} stderr: ${result.stderr}`,
      );
    }
    return result;
  }

  /**
   * Runs kubectl and requires success.
   *
   * @param args The arguments.
   * @param options Stdin and a time limit.
   * @returns The stdout.
   * @throws {Error} With kubectl's stderr if it exits non-zero.
   */
  async ok(args: string[], options: RunOptions = {}): Promise<string> {
    const r = await this.run(args, options);
    if (r.code !== 0) {
      throw new Error(
        `kubectl ${args.join(" ")} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`,
      );
    }
    return r.stdout;
  }

  /**
   * Runs kubectl and requires failure.
   *
   * @param args The arguments.
   * @param options Stdin and a time limit.
   * @returns The result (non-zero code, the error on stderr).
   * @throws {Error} If kubectl exits 0.
   */
  async fails(args: string[], options: RunOptions = {}): Promise<KubectlResult> {
    const r = await this.run(args, options);
    if (r.code === 0) {
      throw new Error(`kubectl ${args.join(" ")} was expected to fail, but printed: ${r.stdout}`);
    }
    return r;
  }

  /**
   * Starts a long-running kubectl (e.g. `get -w`) whose stdout is collected by lines.
   *
   * @param args The arguments.
   * @returns The running watch; stop it (or dispose it) when done.
   */
  watch(args: string[]): KubectlWatch {
    return new KubectlWatch(this.#command(args, false).spawn(), args);
  }

  /** Removes the temporary `HOME`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await Deno.remove(this.home, { recursive: true }).catch(() => {});
  }
}

/** A running `kubectl get -w`: its stdout lines as they come. */
export class KubectlWatch implements AsyncDisposable {
  /** The complete lines printed so far. */
  readonly lines: string[] = [];
  #child: Deno.ChildProcess;
  #args: string[];
  #stderr: Promise<string>;
  #reading: Promise<void>;
  #changed: () => void = () => {};
  #stopped: Promise<void> | undefined;

  /**
   * @param child The spawned kubectl with piped stdout and stderr.
   * @param args Its arguments (for messages).
   */
  constructor(child: Deno.ChildProcess, args: string[]) {
    this.#child = child;
    this.#args = args;
    this.#stderr = new Response(child.stderr).text();
    this.#reading = this.#read();
  }

  async #read(): Promise<void> {
    let partial = "";
    const stream = this.#child.stdout.pipeThrough(new TextDecoderStream());
    for await (const chunk of stream) {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop()!;
      this.lines.push(...parts);
      this.#changed();
    }
    if (partial) this.lines.push(partial);
    this.#changed();
  }

  /**
   * Waits until the lines printed so far satisfy a condition.
   *
   * @param done The condition over all lines so far.
   * @param timeoutMs How long to wait (default 10 s).
   * @returns The lines.
   * @throws {Error} With the lines seen, if the time runs out or kubectl exits first.
   */
  async until(done: (lines: string[]) => boolean, timeoutMs = 10_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    let finished = false;
    void this.#reading.finally(() => finished = true);
    while (!done(this.lines)) {
      const left = deadline - Date.now();
      if (left <= 0 || finished) {
        const why = finished ? "kubectl exited" : `nothing more within ${timeoutMs} ms`;
        throw new Error(
          `kubectl ${this.#args.join(" ")}: ${why}; lines so far:\n${this.lines.join("\n")}`,
        );
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#changed = resolve;
        timer = setTimeout(resolve, Math.min(left, 200));
      });
      clearTimeout(timer);
    }
    return [...this.lines];
  }

  /**
   * Kills kubectl and waits for it and its output to end.
   *
   * @returns Its stderr.
   */
  async stop(): Promise<string> {
    this.#stopped ??= (async () => {
      try {
        this.#child.kill("SIGTERM");
      } catch {
        // Already exited.
      }
      await this.#child.status;
      await this.#reading.catch(() => {});
    })();
    await this.#stopped;
    return await this.#stderr;
  }

  /** Same as {@link stop}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}
