/**
 * Bad input at the door of the `kopf` CLI, as a user types it (subprocesses
 * of `deno run cli.ts …`): each gives exactly one line naming the problem and
 * the fix, and exit code 2 (usage), before anything runs. The table holds the
 * exact lines, so that a change of wording is seen. Also: `kopf` without a
 * command prints the help (on stderr, exit 1, as it always has), and the
 * help has no parser noise (`(default: [])`, `(default: false)`).
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

async function kopf(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", `${ROOT}deno.json`, `${ROOT}cli.ts`, ...args],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** [arguments, the exact line on stderr]; every one exits with 2. */
const BAD_INPUT: Array<[string[], string]> = [
  [["bogus"], "kopf: unknown command 'bogus': see 'kopf --help'"],
  [["run", "--bogus"], "kopf: unknown option '--bogus': see 'kopf run --help'"],
  [
    ["run", "--verbos"],
    "kopf: unknown option '--verbos' (did you mean --verbose?): see 'kopf run --help'",
  ],
  [
    ["run", "-A", "-n", "default"],
    "kopf: The operator can be either cluster-wide or namespaced, not both: " +
    "use -A/--all-namespaces or -n/--namespace",
  ],
  [
    ["run", "-n", "foo["],
    "kopf: -n/--namespace 'foo[' is invalid: it has an unclosed '[': " +
    "close it (e.g. '[abc]') or remove it",
  ],
  [
    ["run", "-n", "!"],
    "kopf: -n/--namespace '!' is invalid: '!' excludes nothing: " +
    "put a name or glob after it, e.g. '!kube-*'",
  ],
  [
    ["run", "-n", "app-*,,!*-pr"],
    "kopf: -n/--namespace 'app-*,,!*-pr' is invalid: " +
    "it has an empty glob between commas: remove the extra comma",
  ],
  [
    ["run", "-n", "app-*,!Kube"],
    "kopf: -n/--namespace 'app-*,!Kube' is invalid: the glob '!Kube' has 'K', " +
    "which no namespace name holds: names are lower-case letters, digits and '-'; " +
    "globs add * ? [abc] and a leading !",
  ],
  [
    ["run", "-n", "!!x"],
    "kopf: -n/--namespace '!!x' is invalid: it negates twice: use one '!' before the glob, e.g. '!x'",
  ],
  [
    ["run", "-n", ""],
    "kopf: -n/--namespace is given an empty value: give one (--namespace=PATTERN), " +
    "or leave --namespace out",
  ],
  [["run", "-n"], "kopf: -n/--namespace needs a value: see 'kopf run --help'"],
  [
    ["run", "--priority", "high"],
    "kopf: -p/--priority 'high' is invalid: use a whole number in plain decimal digits, e.g. 100.",
  ],
  [
    ["run", "--log-format", "xml"],
    "kopf: --log-format 'xml' is invalid: allowed choices are plain, full, json.",
  ],
  [
    ["run", "--verbose", "--quiet", "absent.ts"],
    "kopf: -q/--quiet and -v/--verbose contradict each other (warnings only vs. debug messages " +
    "too): give one of them",
  ],
  [
    ["run", "-d", "-q", "absent.ts"],
    "kopf: -q/--quiet and -d/--debug contradict each other (warnings only vs. debug messages " +
    "too): give one of them",
  ],
  [
    ["resume", "--quiet", "--debug"],
    "kopf: -q/--quiet and -d/--debug contradict each other (warnings only vs. debug messages " +
    "too): give one of them",
  ],
  [
    ["run", "--liveness=notaurl", "absent.ts"],
    "kopf: -L/--liveness 'notaurl' is invalid: give a URL with the address and port to listen " +
    "on and the probes' path, e.g. --liveness=http://0.0.0.0:8080/healthz.",
  ],
  [
    ["run", "-L", "https://0.0.0.0:8080/healthz", "absent.ts"],
    "kopf: -L/--liveness 'https://0.0.0.0:8080/healthz' is invalid: only http:// is served, " +
    "e.g. --liveness=http://0.0.0.0:8080/healthz.",
  ],
  [
    ["manifests", "--image", "x", "--liveness", "0.0.0.0:8080/healthz"],
    "kopf: -L/--liveness '0.0.0.0:8080/healthz' is invalid: give a URL with the address and port " +
    "to listen on and the probes' path, e.g. --liveness=http://0.0.0.0:8080/healthz.",
  ],
  [
    ["crd"],
    "kopf: no handlers file: kopf crd prints the CRDs of the typed resources (kopf.resource) " +
    "that handler files or modules define: give one, e.g. kopf crd handlers.ts " +
    "(usage: kopf crd [-m module] [paths...])",
  ],
  [
    ["apiserver", "--port", "abc"],
    "kopf: --port 'abc' is invalid: use a port number from 0 to 65535 in decimal digits (0 picks a free port).",
  ],
  [
    ["apiserver", "extra"],
    "kopf: too many arguments for 'apiserver'. Expected 0 arguments but got 1: " +
    "see 'kopf apiserver --help'",
  ],
];

Deno.test("kopf CLI bad input: the exact line and exit code 2 for each", async () => {
  const results = await Promise.all(BAD_INPUT.map(([args]) => kopf(args)));
  const got = results.map((r, i) => [BAD_INPUT[i]![0], r.stderr.trimEnd(), r.code]);
  assert.deepEqual(got, BAD_INPUT.map(([args, line]) => [args, line, 2]));
  for (const r of results) assert.equal(r.stdout, "");
});

Deno.test("`kopf` without a command prints the help on stderr and exits with 1", async () => {
  const r = await kopf([]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^Usage: kopf \[options\] \[command\]/);
  assert.match(r.stderr, /^\s+run \[options\] \[paths\.\.\.\]/m);
  assert.match(r.stderr, /^\s+apiserver \[options\]/m);
  assert.doesNotMatch(r.stderr, /No handlers are registered|Initial authentication/);
});

Deno.test("`kopf run --help` and `kopf apiserver --help`: no parser noise; the default kubeconfig path shown", async () => {
  const [run, apiserver] = await Promise.all([
    kopf(["run", "--help"]),
    kopf(["apiserver", "--help"]),
  ]);
  assert.equal(run.code, 0);
  assert.equal(apiserver.code, 0);
  for (const help of [run.stdout, apiserver.stdout]) {
    assert.doesNotMatch(help, /\(default: (\[\]|false)\)|default:\s*(\[\]|false)/);
  }
  assert.match(run.stdout, /-A, --all-namespaces\s+serve all namespaces \(cluster-wide\)\n/);
  assert.match(run.stdout, /-d, --debug\s+log debug messages and the API traffic/);
  assert.match(
    apiserver.stdout.replace(/\s+/g, " "),
    /--kubeconfig <path> where to write a kubeconfig for this server \(default: kopf-apiserver\.kubeconfig in the current directory\)/,
  );
});

Deno.test("`kopf apiserver --data-dir` mistakes name the flag: a file, an uncreatable path, no write permission, a broken snapshot", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-bad-input-" });
  try {
    const file = `${dir}/a-file`;
    await Deno.writeTextFile(file, "");
    const broken = `${dir}/broken`;
    await Deno.mkdir(broken);
    await Deno.writeTextFile(`${broken}/snapshot.json`, "{nope");
    // Garbage with new lines: JSON.parse's message quotes it (the line was cut at its first \n).
    const garbage = `${dir}/garbage`;
    await Deno.mkdir(garbage);
    await Deno.writeTextFile(`${garbage}/snapshot.json`, "not json\nat all\n");
    const other = `${dir}/other`;
    await Deno.mkdir(other);
    await Deno.writeTextFile(`${other}/snapshot.json`, "[1, 2]\n");
    const fix = "restore it from a backup, or move the data directory away to start empty";
    const kc = ["--kubeconfig", `${dir}/kubeconfig`];
    const cases: Array<[string[], string[], string]> = [
      [
        ["--data-dir", file],
        ["-A"],
        `kopf: --data-dir ${file} is a file, not a directory: give a directory (it is created if missing)`,
      ],
      [
        ["--data-dir", `${file}/sub`],
        ["-A"],
        `kopf: --data-dir ${file}/sub cannot be used (Not a directory (os error 20)): ` +
        `give a directory that exists or can be created`,
      ],
      [
        ["--data-dir", `${dir}/new`],
        ["--allow-read", "--allow-net=127.0.0.1", "--allow-env"],
        `kopf: --data-dir ${dir}/new needs write access to "${dir}/new": ` +
        `run with --allow-write=${dir}/new`,
      ],
      [
        ["--data-dir", broken],
        ["-A"],
        `kopf: --data-dir ${broken}/snapshot.json is not valid JSON (Expected property name or '}' ` +
        `at line 1 column 2 (position 1)): ${fix}`,
      ],
      [
        ["--data-dir", garbage],
        ["-A"],
        `kopf: --data-dir ${garbage}/snapshot.json is not valid JSON (Unexpected 'o' at line 1 ` +
        `column 2 (position 1)): ${fix}`,
      ],
      [
        ["--data-dir", other],
        ["-A"],
        `kopf: --data-dir ${other}/snapshot.json is not a snapshot of the API server ` +
        `(no "objects" list): ${fix}`,
      ],
    ];
    for (const [args, perms, line] of cases) {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          ...perms,
          "--config",
          `${ROOT}deno.json`,
          `${ROOT}cli.ts`,
          "apiserver",
          "--port",
          "0",
          ...kc,
          ...args,
        ],
        env: { NO_COLOR: "1" },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.deepEqual(
        [new TextDecoder().decode(out.stderr).trimEnd(), out.code],
        [line, 1],
        args.join(" "),
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
