/**
 * `kopf run` as a user runs it — a subprocess of `deno run … cli.ts run` —
 * against the embedded API server: bad input gives exactly one line naming
 * the problem and what to do, and a non-zero exit code; SIGTERM stops
 * gracefully (cleanup handlers run, exit 0); a second SIGINT forces the
 * exit; `kopf.main()` makes a handlers file its own CLI.
 */
import assert from "node:assert/strict";
import { generateCertificates } from "../../src/apiserver/shared/tls.ts";
import { startApiServer } from "../../testing.ts";
import { cluster } from "../reactor/_setup.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const MOD = `${ROOT}mod.ts`;

/** What a finished CLI run gave. */
interface Result {
  code: number;
  stdout: string;
  stderr: string;
  lines: string[];
}

/** Writes a handlers file (importing this module by its path) into a temporary directory. */
async function handlersFile(dir: string, name: string, body: string): Promise<string> {
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, `import * as kopf from "${MOD}";\n${body}\n`);
  return path;
}

/** Runs `deno run <perms> cli.ts <args>` to its end (killed after the timeout). */
async function cli(
  args: string[],
  options: { env?: Record<string, string>; perms?: string[]; cwd?: string; timeout?: number } = {},
): Promise<Result> {
  const child = spawn(["--config", `${ROOT}deno.json`, `${ROOT}cli.ts`, ...args], options);
  const timer = setTimeout(() => child.kill("SIGKILL"), (options.timeout ?? 30) * 1000);
  try {
    const out = await child.output();
    const dec = new TextDecoder();
    const stderr = dec.decode(out.stderr);
    return {
      code: out.code,
      stdout: dec.decode(out.stdout),
      stderr,
      lines: stderr.split("\n").filter((l) => l),
    };
  } finally {
    clearTimeout(timer);
  }
}

function spawn(
  args: string[],
  options: { env?: Record<string, string>; perms?: string[]; cwd?: string } = {},
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...(options.perms ?? ["-A"]), ...args],
    env: { NO_COLOR: "1", ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** The one-line contract: a single `kopf: …` line (the last one), no stack traces. */
function assertOneLine(r: Result, pattern: RegExp, others: RegExp | undefined = undefined): string {
  assert.notEqual(r.code, 0, r.stderr);
  const fatal = r.lines.filter((l) => l.startsWith("kopf: "));
  assert.equal(fatal.length, 1, r.stderr);
  assert.equal(r.lines.at(-1), fatal[0], r.stderr);
  assert.match(fatal[0]!, pattern);
  assert.doesNotMatch(r.stderr, /^\s+at /m, "no stack traces");
  for (const line of r.lines.slice(0, -1)) {
    assert.ok(others?.test(line), `unexpected line: ${line}`);
  }
  return fatal[0]!;
}

Deno.test("kopf run, bad input: unknown resource, missing file, failing import, syntax error, kopf.main() unguarded", async (t) => {
  await using c = await cluster();
  const dir = await Deno.makeTempDir({ prefix: "kopf-cli-test-" });
  const env = { KUBECONFIG: c.api.kubeconfig.path };
  try {
    await t.step("an unknown resource: a warning, and the operator runs on (as Kopf)", async () => {
      const file = await handlersFile(
        dir,
        "unknown.ts",
        `kopf.on.create("nonexistents", () => {});`,
      );
      await using op = start([`${ROOT}cli.ts`, "run", "-q", "--standalone", "-A", file], env);
      await op.waitFor(
        /Resource "nonexistents" is not served by the cluster: create its CRD first, or check the name with "kubectl api-resources"; it is served once its CRD appears\./,
      );
      op.child.kill("SIGTERM");
      assert.equal(await op.exit(), 0, op.stderr);
      assert.doesNotMatch(op.stderr, /ERROR|Traceback|^\s+at /m);
    });
    await t.step("a missing handler file", async () => {
      const r = await cli(["run", "-q", "--standalone", "-A", "missing.ts"], { env, cwd: dir });
      assertOneLine(
        r,
        /^kopf: cannot load handlers from missing\.ts: no such file \(check the path\)$/,
      );
    });
    await t.step("a handler file that throws at import", async () => {
      await handlersFile(
        dir,
        "throws.ts",
        `kopf.on.create("kopfexamples", () => {});\nthrow new Error("the config is missing");`,
      );
      const r = await cli(["run", "-q", "--standalone", "-A", "throws.ts"], { env, cwd: dir });
      assertOneLine(
        r,
        /^kopf: cannot load handlers from throws\.ts: Error: the config is missing$/,
      );
    });
    await t.step("a handler file with a syntax error", async () => {
      await handlersFile(dir, "syntax.ts", `kopf.on.create("kopfexamples", function fn() {`);
      const r = await cli(["run", "-q", "--standalone", "-A", "syntax.ts"], { env, cwd: dir });
      assertOneLine(
        r,
        /^kopf: cannot load handlers from syntax\.ts: SyntaxError: .* \(at file:\/\/.*\/syntax\.ts:\d+:\d+\)$/,
      );
    });
    await t.step("a handler file importing a missing module", async () => {
      await handlersFile(dir, "imports.ts", `import "./nope.ts";`);
      const r = await cli(["run", "-q", "--standalone", "-A", "imports.ts"], { env, cwd: dir });
      assertOneLine(
        r,
        /^kopf: cannot load handlers from imports\.ts: TypeError: Module not found .*nope\.ts/,
      );
    });
    await t.step(
      "a handler file that calls kopf.main() unguarded: refused, not a hang",
      async () => {
        await handlersFile(
          dir,
          "selfmain.ts",
          `kopf.on.create("kopfexamples", () => {});\nDeno.exit(await kopf.main());`,
        );
        const r = await cli(["run", "-q", "--standalone", "-A", "selfmain.ts"], {
          env,
          cwd: dir,
          timeout: 20,
        });
        assertOneLine(
          r,
          /^kopf: cannot load handlers from selfmain\.ts: Error: kopf\.main\(\) was called while kopf run loads this file: guard the call with `if \(import\.meta\.main\)`, or run the file itself \(deno run -A handlers\.ts\)$/,
        );
      },
    );
    await t.step("an option of another kind of handler", async () => {
      await handlersFile(
        dir,
        "interval.ts",
        `kopf.on.create("kopfexamples", { interval: 60 }, function createFn() {});`,
      );
      const r = await cli(["run", "-q", "--standalone", "-A", "interval.ts"], { env, cwd: dir });
      assertOneLine(
        r,
        /^kopf: cannot load handlers from interval\.ts: RegistrationError: kopf\.on\.create\(\.\.\.\): the option "interval" is not for create handlers; it is for kopf\.timer\.$/,
      );
    });
    await t.step("an unknown flag", async () => {
      const r = await cli(["run", "--no-such-flag"], { env });
      assert.equal(r.code, 2);
      assert.deepEqual(r.lines, ["kopf: unknown option '--no-such-flag': see 'kopf run --help'"]);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kopf run, bad input: bad kubeconfig, unreachable API server, missing Deno permissions", async (t) => {
  await using c = await cluster();
  const dir = await Deno.makeTempDir({ prefix: "kopf-cli-test-" });
  // Short retries, as the docs show: by default, about a minute of attempts (Kopf's backoffs).
  const file = await handlersFile(
    dir,
    "handlers.ts",
    `kopf.on.startup(({ settings }) => { settings.networking.errorBackoffs = [0.1, 0.1]; });
kopf.on.create("kopfexamples", () => {});`,
  );
  try {
    await t.step("KUBECONFIG=/nonexistent", async () => {
      const r = await cli(["run", "-q", "--standalone", "-A", file], {
        env: { KUBECONFIG: "/nonexistent" },
      });
      assertOneLine(
        r,
        /^kopf: Cannot log in to the Kubernetes API: None of the kubeconfig files in KUBECONFIG exists \(\/nonexistent\): point KUBECONFIG at an existing file$/,
      );
    });
    await t.step("a kubeconfig that is not YAML of a kubeconfig", async () => {
      const bad = `${dir}/bad-kubeconfig`;
      await Deno.writeTextFile(bad, "clusters: [this is: not valid\n");
      const r = await cli(["run", "-q", "--standalone", "-A", file], { env: { KUBECONFIG: bad } });
      assertOneLine(r, /^kopf: Cannot log in to the Kubernetes API: .*kubeconfig/i);
    });
    await t.step("an unreachable API server (a closed port)", async () => {
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = (listener.addr as Deno.NetAddr).port;
      listener.close();
      const kubeconfig = `${dir}/closed-kubeconfig`;
      await Deno.writeTextFile(
        kubeconfig,
        c.api.kubeconfig.yaml.replace(c.api.url, `http://127.0.0.1:${port}`),
      );
      const started = Date.now();
      const r = await cli(["run", "-q", "--standalone", "-A", file], {
        env: { KUBECONFIG: kubeconfig },
      });
      const line = assertOneLine(
        r,
        new RegExp(`^kopf: Cannot reach the Kubernetes API: .*127\\.0\\.0\\.1:${port}`),
        /\[ERROR {3}\] Request attempt #\d\/3 failed; (will retry in 0\.1s|escalating): GET \/apis?/,
      );
      assert.match(line, /check that the API server is running and reachable/);
      assert.ok(Date.now() - started < 15_000, "bounded by settings.networking.errorBackoffs");
    });
    await t.step("--allow-read only: the environment (KUBECONFIG) cannot be read", async () => {
      const r = await cli(["run", "-q", "--standalone", "-A", file], {
        env: { KUBECONFIG: c.api.kubeconfig.path },
        perms: ["--allow-read"],
      });
      assertOneLine(
        r,
        /^kopf: Cannot log in to the Kubernetes API: .*needs env access to KUBECONFIG and HOME: run with --allow-env=KUBECONFIG,HOME/,
      );
    });
    await t.step("no --allow-net: the API server cannot be connected to", async () => {
      const r = await cli(["run", "-q", "--standalone", "-A", file], {
        env: { KUBECONFIG: c.api.kubeconfig.path },
        perms: ["--allow-read", "--allow-env"],
      });
      const host = new URL(c.api.url).host;
      assertOneLine(
        r,
        new RegExp(`^kopf: .*needs net access to "${host}": run with --allow-net=${host}$`),
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kopf run: a kubeconfig whose CA did not sign the server's certificate fails at once, naming the server and the fix", async () => {
  await using api = await startApiServer({ tls: true });
  const dir = await Deno.makeTempDir({ prefix: "kopf-cli-test-" });
  try {
    // The default backoffs (about a minute of retries): a TLS verification failure skips them.
    const file = await handlersFile(dir, "handlers.ts", `kopf.on.create("configmaps", () => {});`);
    const other = await generateCertificates({});
    const wrong = btoa(other.caCert);
    const yaml = api.kubeconfig.yaml.replace(
      /certificate-authority-data: \S+/,
      `certificate-authority-data: ${wrong}`,
    );
    assert.ok(yaml.includes(wrong), "the kubeconfig names the other CA");
    const kubeconfig = `${dir}/wrong-ca-kubeconfig`;
    await Deno.writeTextFile(kubeconfig, yaml);
    const started = Date.now();
    const r = await cli(["run", "-q", "--standalone", "-A", file], {
      env: { KUBECONFIG: kubeconfig },
    });
    const line = assertOneLine(r, /^kopf: The API server https:\/\/127\.0\.0\.1:\d+ failed TLS/);
    assert.equal(r.code, 1);
    assert.equal(
      line.replace(/\(invalid peer certificate: \w+\)/, "(…)"),
      `kopf: The API server ${api.url} failed TLS verification (…): its certificate is not ` +
        "signed by a CA that the kubeconfig trusts: set the cluster's certificate-authority " +
        "(a file) or certificate-authority-data in the kubeconfig to the CA that signed it " +
        "(insecure-skip-tls-verify: true in the kubeconfig skips the check, for testing only)",
    );
    assert.ok(Date.now() - started < 15_000, `not retried (${Date.now() - started} ms)`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kopf run: a busy port names the address and what to change — --liveness, the webhook server's port option", async (t) => {
  await using c = await cluster();
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (busy.addr as Deno.NetAddr).port;
  const dir = await Deno.makeTempDir({ prefix: "kopf-cli-test-" });
  try {
    await t.step("--liveness", async () => {
      const file = await handlersFile(dir, "plain.ts", `kopf.on.create("configmaps", () => {});`);
      const r = await cli([
        "run",
        "-q",
        "--standalone",
        "-A",
        `--liveness=http://127.0.0.1:${port}/healthz`,
        file,
      ], { env: { KUBECONFIG: c.api.kubeconfig.path } });
      const line = assertOneLine(r, /^kopf: /);
      assert.equal(
        line,
        `kopf: Cannot serve the liveness endpoint: 127.0.0.1:${port} is already in use: give the ` +
          `liveness URL another port, e.g. kopf run --liveness=http://127.0.0.1:${
            port + 1
          }/healthz, ` +
          "or stop what listens there",
      );
      assert.equal(r.code, 1);
    });
    await t.step("the webhook server (settings.admission.server)", async () => {
      const file = await handlersFile(
        dir,
        "webhooks.ts",
        `kopf.on.startup(({ settings }) => {
  settings.admission.server = new kopf.WebhookServer({ port: ${port}, insecure: true });
});
kopf.on.validate("configmaps", () => {});`,
      );
      const r = await cli(["run", "-q", "--standalone", "-A", file], {
        env: { KUBECONFIG: c.api.kubeconfig.path },
      });
      const line = assertOneLine(r, /^kopf: /);
      assert.equal(
        line,
        `kopf: The webhook server (settings.admission.server) cannot listen on 127.0.0.1:${port}: ` +
          "the address is already in use: give it another port in the handlers, e.g. " +
          `settings.admission.server = new kopf.WebhookServer({ port: ${port + 1} }) in an ` +
          "on.startup handler (port: 0 picks a free one), or stop what listens there",
      );
      assert.doesNotMatch(line, /--port/, "not a flag of kopf run");
      assert.equal(r.code, 1);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A running CLI whose stderr is collected and awaited line by line. */
class Running implements AsyncDisposable {
  readonly child: Deno.ChildProcess;
  stderr = "";
  #status: Promise<Deno.CommandStatus>;
  #waiters = new Set<() => void>();
  #reading: Promise<void>;

  constructor(child: Deno.ChildProcess) {
    this.child = child;
    this.#status = child.status;
    this.#reading = (async () => {
      const dec = new TextDecoder();
      for await (const chunk of child.stderr) {
        this.stderr += dec.decode(chunk, { stream: true });
        for (const w of this.#waiters) w();
      }
      for (const w of this.#waiters) w();
    })();
    void child.stdout.cancel();
  }

  async waitFor(pattern: RegExp, timeout = 15): Promise<void> {
    if (pattern.test(this.stderr)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`no ${pattern} within ${timeout}s; stderr:\n${this.stderr}`));
      }, timeout * 1000);
      const check = () => {
        if (pattern.test(this.stderr)) {
          clearTimeout(timer);
          this.#waiters.delete(check);
          resolve();
        }
      };
      this.#waiters.add(check);
    });
  }

  async exit(timeout = 15): Promise<number> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const killed = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill("SIGKILL");
        reject(new Error(`did not exit within ${timeout}s; stderr:\n${this.stderr}`));
      }, timeout * 1000);
    });
    try {
      const status = await Promise.race([this.#status, killed]);
      await this.#reading;
      return status.code;
    } finally {
      clearTimeout(timer);
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    try {
      this.child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await this.#status;
    await this.#reading;
  }
}

function start(
  args: string[],
  env: Record<string, string>,
  cwd?: string,
): Running {
  return new Running(
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", `${ROOT}deno.json`, ...args],
      env: { NO_COLOR: "1", ...env },
      ...(cwd ? { cwd } : {}),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn(),
  );
}

const HANDLERS = `
kopf.on.create("kopfexamples", function createFn({ logger }) { logger.info("created!"); });
kopf.on.cleanup(function cleanupFn({ logger }) { logger.info("the cleanup handler ran"); });
`;

Deno.test("kopf run: SIGTERM stops gracefully — cleanup handlers run, exit code 0", async () => {
  await using c = await cluster();
  const dir = await Deno.makeTempDir({ prefix: "kopf-cli-test-" });
  try {
    const file = await handlersFile(dir, "handlers.ts", HANDLERS);
    await using op = start(
      [`${ROOT}cli.ts`, "run", "--standalone", "-A", "-v", file],
      { KUBECONFIG: c.api.kubeconfig.path },
    );
    await op.waitFor(/Starting the watch-stream for kopfexamples\.v1\.kopf\.dev cluster-wide\./);
    await c.createKex("default", "kex1");
    await op.waitFor(/\[default\/kex1\] Handler 'createFn' succeeded\./);
    op.child.kill("SIGTERM");
    assert.equal(await op.exit(), 0, op.stderr);
    assert.match(op.stderr, /Stop-flag is raised\. Operator is stopping\./);
    assert.match(op.stderr, /the cleanup handler ran/);
    assert.match(op.stderr, /Activity 'cleanupFn' succeeded\./);
    assert.match(op.stderr, /Stopping the watch-stream for kopfexamples\.v1\.kopf\.dev/);
    assert.doesNotMatch(op.stderr, /ERROR|Traceback|^\s+at /m);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kopf run: a second SIGINT forces the exit while the cleanup hangs", async () => {
  await using c = await cluster();
  const dir = await Deno.makeTempDir({ prefix: "kopf-cli-test-" });
  try {
    const file = await handlersFile(
      dir,
      "handlers.ts",
      `kopf.on.create("kopfexamples", () => {});
kopf.on.cleanup(async function hangingCleanup({ logger }) {
  logger.info("the cleanup hangs");
  await new Promise((resolve) => setTimeout(resolve, 600_000));
});`,
    );
    await using op = start(
      [`${ROOT}cli.ts`, "run", "--standalone", "-A", "-v", file],
      { KUBECONFIG: c.api.kubeconfig.path },
    );
    await op.waitFor(/Starting the watch-stream for kopfexamples/);
    op.child.kill("SIGINT");
    await op.waitFor(/the cleanup hangs/);
    const started = Date.now();
    op.child.kill("SIGINT");
    assert.equal(await op.exit(5), 130, op.stderr);
    assert.ok(Date.now() - started < 5000);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kopf.main(): a handlers file is its own CLI (deno run -A file.ts -A --verbose)", async () => {
  await using c = await cluster();
  const dir = await Deno.makeTempDir({ prefix: "kopf-cli-test-" });
  try {
    const file = await handlersFile(
      dir,
      "operator.ts",
      `${HANDLERS}\nif (import.meta.main) Deno.exit(await kopf.main());`,
    );
    await using op = start([file, "-A", "--standalone", "--verbose"], {
      KUBECONFIG: c.api.kubeconfig.path,
    });
    await op.waitFor(/Starting the watch-stream for kopfexamples\.v1\.kopf\.dev cluster-wide\./);
    await c.createKex("default", "kex1");
    await op.waitFor(/\[default\/kex1\] created!/);
    op.child.kill("SIGTERM");
    assert.equal(await op.exit(), 0, op.stderr);
    assert.match(op.stderr, /the cleanup handler ran/);

    // Its --help is kopf run's.
    const help = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", `${ROOT}deno.json`, file, "--help"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(help.code, 0);
    assert.match(new TextDecoder().decode(help.stdout), /Usage: kopf/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const KILLABLE = `
const log = (line: string) => Deno.writeTextFileSync(Deno.env.get("KOPF_TEST_LOG")!, line + "\\n", { append: true });
kopf.on.create("kopfexamples", function first({ name }) { log(\`\${name} first\`); });
kopf.on.create("kopfexamples", function second({ name }) {
  log(\`\${name} second\`);
  try { Deno.statSync(Deno.env.get("KOPF_TEST_LOG") + ".go"); }
  catch { throw new kopf.TemporaryError("not yet", { delay: 1 }); }
});
kopf.on.delete("kopfexamples", function gone({ name }) { log(\`\${name} gone\`); });
`;

Deno.test("kopf run: kill -9 mid-work — after a restart nothing that succeeded runs again, nothing is lost or stuck", async () => {
  await using c = await cluster();
  const dir = await Deno.makeTempDir({ prefix: "kopf-cli-test-" });
  const logFile = `${dir}/calls.log`;
  await Deno.writeTextFile(logFile, "");
  const names = ["k1", "k2", "k3", "k4", "k5"];
  const env = { KUBECONFIG: c.api.kubeconfig.path, KOPF_TEST_LOG: logFile };
  const count = async (what: string) =>
    (await Deno.readTextFile(logFile)).split("\n").filter((l) => l === what).length;
  try {
    const file = await handlersFile(dir, "handlers.ts", KILLABLE);
    const args = [`${ROOT}cli.ts`, "run", "--standalone", "-A", "-v", file];
    {
      await using op = start(args, env);
      await op.waitFor(/Starting the watch-stream for kopfexamples/);
      for (const n of names) await c.createKex("default", n);
      // Every object has stored first's success and waits out second's delay: kill it then.
      for (const n of names) {
        await op.waitFor(new RegExp(`\\[default/${n}\\] Processing is postponed`));
      }
      op.child.kill("SIGKILL");
      assert.notEqual(await op.exit(), 0);
    }
    await Deno.writeTextFile(`${logFile}.go`, "");
    {
      await using op = start(args, env);
      for (const n of names) {
        await op.waitFor(new RegExp(`\\[default/${n}\\] All handlers succeeded for creation`));
      }
      for (const n of names) {
        await c.call("DELETE", `/apis/kopf.dev/v1/namespaces/default/kopfexamples/${n}`);
      }
      for (const n of names) {
        await op.waitFor(new RegExp(`\\[default/${n}\\] All handlers succeeded for deletion`));
      }
      op.child.kill("SIGTERM");
      assert.equal(await op.exit(), 0, op.stderr);
    }
    for (const n of names) {
      assert.equal(await count(`${n} first`), 1, `${n}: first ran once, across the kill`);
      assert.ok(await count(`${n} second`) >= 2, `${n}: second retried after the restart`);
      assert.equal(await count(`${n} gone`), 1, `${n}: deleted once`);
      // Gone for real: the finalizer was released.
      const r = await c.call(
        "GET",
        `/apis/kopf.dev/v1/namespaces/default/kopfexamples/${n}`,
        undefined,
        [404],
      );
      assert.equal(r.status, 404, `${n} is gone`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
