/**
 * The docs' snippets, run as written. `deno task check` type-checks every `ts` snippet of
 * `README.md` and `docs/*.md` (`deno check --doc-only`); this test runs those that can run:
 *
 * - `operator` snippets are handlers files: each runs as `kopf run -A --standalone <snippet>` in a
 *   process of its own against an embedded API server with the example CRD (or the CRD that
 *   `kopf crd` prints for the snippet's typed resources — the docs' shell pipeline), the example
 *   object is created when the snippet handles objects, and the log line the snippet's handlers
 *   write is awaited; some drive the object further with kubectl, as the page says;
 * - `script` snippets (tests, embedding, API-server code) run as `deno run -A <snippet>` from the
 *   repository's root and must exit with 0.
 *
 * Every `ts` snippet is in `RUN` or in `TYPE_ONLY` (with the reason it is not run): a new snippet
 * fails the first test until it is put in one of them, and a listed snippet that is gone fails it
 * too. A snippet is named `<page>#<section's anchor>/<n>`, the n-th `ts` block of that section.
 *
 * The snippets run a few at a time, each a step of one test (the scripts without a cluster in one,
 * the rest in another), named as the snippet.
 *
 * A snippet's relative imports (`../mod.ts`, `./testing.ts`, `../examples/…`) are resolved from
 * its page, so the copy that runs (in a temporary folder) imports the very files the page means.
 *
 * @module
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { slug } from "../../tools/check_links.ts";
import { cluster, ROOT } from "../examples/_setup.ts";
import { OperatorProcess } from "../examples/_process.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

/** A `ts` block of a page. */
interface Snippet {
  /** `<page>#<section anchor>/<n>`. */
  name: string;
  /** The page, relative to the root. */
  page: string;
  /** The code. */
  code: string;
}

/** How an `operator` snippet is driven, and what proves it ran. */
interface OperatorRun {
  kind: "operator";
  /** The CRD: the example one (default), or what `kopf crd <snippet>` prints. */
  crd?: "example" | "kopf crd";
  /** The object to create once the operator is ready (kubectl apply of this YAML). */
  object?: string;
  /** kubectl commands after the object, each with a text its output (stdout+stderr) must have. */
  kubectl?: Array<{ args: string[]; expect?: string | RegExp; exitCode?: number }>;
  /** Texts the operator's output must have, awaited in order. */
  expect: string[];
  /** Seconds to wait for each text (default 15). */
  timeout?: number;
}

/** A script: `deno run -A` from the root; exit code 0. */
interface ScriptRun {
  kind: "script";
  /** KUBECONFIG for the script: an embedded API server's (with the example CRD). */
  cluster?: boolean;
}

/** A text that a page quotes: the first group of the pattern (which must be found). */
function quoted(page: string, pattern: RegExp): string {
  const text = Deno.readTextFileSync(`${ROOT}${page}`).replace(/\s*\n\s*/g, " ");
  const found = pattern.exec(text)?.[1];
  if (found === undefined) throw new Error(`${page} quotes no ${pattern}`);
  return found;
}

const EXAMPLE_OBJECT = await Deno.readTextFile(`${ROOT}examples/obj.yaml`);
const EVC_V1 = `apiVersion: kopf.dev/v1
kind: EphemeralVolumeClaim
metadata: { name: evc-1, namespace: default }
spec: { size: 1Gi }
`;
const EVC_V2 = `apiVersion: kopf.dev/v2
kind: EphemeralVolumeClaim
metadata: { name: evc-2, namespace: default }
spec: { storage: { size: 2Gi } }
`;
const PATCH_FIELD = [
  "patch",
  "kopfexamples",
  "kopf-example-1",
  "--type=merge",
  "-p",
  '{"spec":{"field":"changed"}}',
];

/** kubectl get of the names of the operator's managed webhooks (`auto.kopf.dev`). */
const WEBHOOK_NAMES = (kind: "validating" | "mutating") => [
  "get",
  `${kind}webhookconfigurations`,
  "auto.kopf.dev",
  "-o",
  "jsonpath={.webhooks[*].name}",
];

/** The snippets that run, and how. */
const RUN: Record<string, OperatorRun | ScriptRun> = {
  "README.md#quick-start/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    kubectl: [{ args: ["get", "kopfexamples"], expect: /kopf-example-1\s+1m\s+[^\n]*hello world/ }],
    expect: ["And here we are! Created kopf-example-1", "All handlers succeeded for creation."],
  },
  "README.md#quick-start/2": { kind: "script" },
  "docs/activities.md#activities-startup-cleanup-login-probes/1": {
    kind: "operator",
    expect: ["Configured."],
  },
  "docs/activities.md#login/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    // Logged in through the handler: the operator watches and patches (a finalizer-less object).
    expect: ["Activity 'login' succeeded."],
  },
  "docs/admission.md#admission/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    kubectl: [
      {
        args: [
          "patch",
          "kopfexamples",
          "kopf-example-1",
          "--type=merge",
          "-p",
          '{"spec":{"field":"wrong"}}',
        ],
        exitCode: 1,
        // The denial as the page quotes it.
        expect: quoted(
          "docs/admission.md",
          /`Error from server: (admission webhook "validate1[^`]*)`/,
        ),
      },
      // An allowed change, and the mutating handler's default with it.
      {
        args: [
          "patch",
          "kopfexamples",
          "kopf-example-1",
          "--type=merge",
          "-p",
          '{"spec":{"field":"fine"}}',
        ],
      },
      {
        args: ["get", "kopfexamples", "kopf-example-1", "-o", "jsonpath={.spec.size}"],
        expect: "1",
      },
    ],
    expect: ["Handler 'validate1' succeeded"],
  },
  "docs/admission.md#deletions/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    kubectl: [
      // Once the operator has configured its webhook, an update is mutated, as the page says ...
      { args: WEBHOOK_NAMES("mutating"), expect: "mutate1.auto.kopf.dev" },
      { args: PATCH_FIELD },
      {
        args: ["get", "kopfexamples", "kopf-example-1", "-o", "jsonpath={.spec.injected}"],
        expect: "123",
      },
      // ... and the handler is not called on the deletion: kubectl delete goes through.
      {
        args: ["delete", "kopfexamples", "kopf-example-1"],
        expect: 'kopfexample.kopf.dev "kopf-example-1" deleted',
      },
    ],
    expect: ["Handler 'mutate1' succeeded"],
  },
  "docs/admission.md#the-requesting-user-kopfuserinfo/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    kubectl: [
      // Once the webhook is configured, a change by the embedded server's administrator
      // (system:masters) is admitted.
      { args: WEBHOOK_NAMES("validating"), expect: "only-admins.auto.kopf.dev" },
      { args: PATCH_FIELD },
    ],
    expect: ["Handler 'only_admins' succeeded"],
  },
  "docs/api-client.md#the-api-client/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    kubectl: [{
      args: ["get", "configmap", "kopf-example-1-config"],
      expect: "kopf-example-1-config",
    }],
    expect: ["Created kopf-example-1-config", "All handlers succeeded for creation."],
  },
  "docs/apiserver.md#start-it/1": { kind: "script" },
  "docs/apiserver.md#authorization-rbac/1": { kind: "script" },
  "docs/cli.md#the-kopf-command/1": {
    kind: "operator",
    // "@kopf/kopf" resolves (through the workspace) to the copy of the module that kopf run runs.
    kubectl: [{ args: ["create", "configmap", "hello-1"], expect: "configmap/hello-1 created" }],
    expect: ["Hello, hello-1"],
  },
  "docs/configuration.md#configuration/1": {
    kind: "operator",
    expect: ["Activity 'configure' succeeded."],
  },
  "docs/daemons.md#daemons/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    expect: ['Checking "value"'],
  },
  "docs/embedding.md#embedding/1": { kind: "script", cluster: true },
  "docs/filters.md#labels-and-annotations/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    expect: [
      "Labelled somelabel=somevalue, and not paused.",
      'The label starts with "some": somevalue.',
    ],
  },
  "docs/filters.md#fields-and-values/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    kubectl: [{ args: PATCH_FIELD }],
    expect: ["spec.field: value -> changed"],
  },
  "docs/filters.md#callbacks/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    expect: ["Named kopf-…, and not big."],
  },
  "docs/handlers.md#handlers/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    kubectl: [{ args: PATCH_FIELD }, { args: ["delete", "kopfexamples", "kopf-example-1"] }],
    expect: [
      'Created kopf-example-1 with {"duration":"1m","field":"value","items":["item1","item2"]}',
      'Changed: [["change",["spec","field"],"value","changed"]]',
      "Deleting kopf-example-1",
    ],
  },
  "docs/handlers.md#sub-handlers/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    expect: ["Handling item1", "Handling item2", "All handlers succeeded for creation."],
  },
  "docs/hierarchies.md#hierarchies/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    kubectl: [{
      args: ["get", "jobs", "-l", "somelabel=somevalue", "-o", "name"],
      expect: "job.batch/kopf-example-1-",
    }],
    expect: ["All handlers succeeded for creation."],
  },
  "docs/indices.md#indices/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    expect: ["Handler 'create_fn' succeeded."],
  },
  "docs/indices.md#typed-indices/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    expect: ["Pods of the app: "],
  },
  "docs/kwargs.md#arguments/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    kubectl: [{ args: PATCH_FIELD }],
    expect: ["Updating default/kopf-example-1, try 1:"],
  },
  "docs/logging.md#logging-and-events/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    kubectl: [{
      args: ["get", "events", "--field-selector", "reason=SomeReason", "-o", "name"],
      expect: "event/",
    }],
    expect: ["Creating.", "Handler 'create_fn' succeeded."],
  },
  "docs/logging.md#events/1": {
    kind: "operator",
    expect: ["Activity 'startup_handler' succeeded."],
  },
  "docs/rbac.md#what-the-handlers-use-kopfuses/1": {
    kind: "operator",
    // Nothing but declarations: the operator starts with them (and `kopf rbac` reads them).
    expect: ["Initial authentication has finished."],
  },
  "docs/reconcilers.md#reconcilers-owned-children/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    expect: ["Created kopf-example-1-config."],
  },
  "docs/resources.md#resources/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    expect: ["Handler 'byPlural' succeeded.", "Handler 'everything' succeeded."],
  },
  "docs/results.md#results/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    kubectl: [{ args: ["get", "kopfexamples"], expect: "hello kopf-example-1" }],
    expect: ["Handler 'create_fn' succeeded."],
  },
  "docs/testing.md#the-runner/1": { kind: "script" },
  "docs/testing.md#time/1": { kind: "script" },
  "docs/testing.md#daemons-and-timers-in-virtual-time/1": { kind: "script" },
  "docs/timers.md#timers/1": {
    kind: "operator",
    object: EXAMPLE_OBJECT,
    expect: ['Still here: {"duration":"1m"'], // after 10 s without changes (idle)
    timeout: 25,
  },
  "docs/typed-resources.md#typed-resources/1": {
    kind: "operator",
    crd: "kopf crd",
    object: EVC_V1,
    kubectl: [{
      args: ["get", "ephemeralvolumeclaims", "evc-1", "-o", "jsonpath={.status.pvcName}"],
      expect: "evc-1-pvc",
    }],
    expect: ["Handler 'create_fn' succeeded."],
  },
  "docs/typed-resources.md#several-versions/1": {
    kind: "operator",
    crd: "kopf crd",
    object: EVC_V2,
    kubectl: [
      // Read at v1: converted by the operator's converter from the stored v2.
      {
        args: ["get", "ephemeralvolumeclaims.v1.kopf.dev", "evc-2", "-o", "jsonpath={.spec.size}"],
        expect: "2Gi",
      },
    ],
    expect: ["Handler 'provision' succeeded."],
  },
};

/** The snippets only type-checked, and why each is not run. */
const TYPE_ONLY: Record<string, string> = {
  "docs/admission.md#servers-and-tunnels/1":
    "WebhookAutoTunnel tunnels through the ngrok agent and the internet for a cluster that is not K3d/Minikube, as the embedded one; tests/kits/webhook_tunnels_test.ts runs it with a fake agent, without one (the local fallback and its warning) and on a K3s-like cluster",
  "docs/admission.md#a-server-or-tunnel-of-your-own/1":
    "it reads /etc/webhook/ca.pem and yields a Service, which the embedded API server cannot reach (no service network); tests/core/admission_managed_test.ts checks a service client config with the handler id appended to its path",
  "docs/errors.md#errors/1":
    "its handler fetches https://example.com, which our machines cannot reach",
  "docs/logging.md#logtape/1":
    "kopf.run() with the user's current kubeconfig until SIGINT; the LogTape sink is run by tests/core/logtape_test.ts",
  "docs/probing.md#probing-health-checks-and-metrics/1":
    "kopf.run() until SIGINT, listening on the fixed port 8080 (tests run in parallel); /metrics is tested in tests/metrics/",
  "docs/shipping.md#a-single-binary-deno-compile/1":
    "it is deploy/main.ts, run with the image's permissions by tests/cli/image_test.ts",
};

/**
 * The `ts` snippets of the docs, named by page, section and order.
 *
 * @returns The snippets.
 */
async function snippets(): Promise<Snippet[]> {
  const pages = ["README.md"];
  for await (const e of Deno.readDir(`${ROOT}docs`)) {
    if (e.isFile && e.name.endsWith(".md")) pages.push(`docs/${e.name}`);
  }
  const out: Snippet[] = [];
  for (const page of pages.sort()) {
    const lines = (await Deno.readTextFile(`${ROOT}${page}`)).split("\n");
    let section = "";
    const counts = new Map<string, number>();
    for (let i = 0; i < lines.length; i++) {
      const heading = /^#{1,6}\s+(.*)$/.exec(lines[i]!);
      if (heading) section = slug(heading[1]!);
      const fence = /^```(\S*)/.exec(lines[i]!);
      if (!fence) continue;
      const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
      if (fence[1] === "ts" || fence[1] === "typescript") {
        const n = (counts.get(section) ?? 0) + 1;
        counts.set(section, n);
        out.push({
          name: `${page}#${section}/${n}`,
          page,
          code: lines.slice(i + 1, end).join("\n"),
        });
      }
      i = end;
    }
  }
  return out;
}

/** The snippet with its relative imports made absolute (resolved from its page). */
function resolved(snippet: Snippet): string {
  const base = new URL(`${dirname(snippet.page)}/`, `file://${ROOT}`);
  return snippet.code.replace(
    /((?:from|import)\s+)"(\.{1,2}\/[^"]+)"/g,
    (_, lead: string, path: string) => `${lead}"${new URL(path, base).href}"`,
  );
}

const ALL = await snippets();

Deno.test("docs snippets: every ts snippet is run or listed as type-checked only, with a reason", () => {
  const names = ALL.map((s) => s.name);
  const unlisted = names.filter((n) => !(n in RUN) && !(n in TYPE_ONLY));
  assert.deepEqual(unlisted, [], "new snippets: add each to RUN or to TYPE_ONLY (with the reason)");
  const gone = [...Object.keys(RUN), ...Object.keys(TYPE_ONLY)].filter((n) => !names.includes(n));
  assert.deepEqual(gone, [], "listed snippets that are no longer in the docs");
  const both = Object.keys(RUN).filter((n) => n in TYPE_ONLY);
  assert.deepEqual(both, []);
});

/**
 * How many snippets run at once. Each has its own API server, temporary folder, kubectl `HOME`
 * and operator process (its own environment), and mostly waits — on its operator, on kubectl, on
 * a timer — so a few at a time leave the machine less idle than one after another.
 */
const AT_ONCE = 3;

/**
 * Runs the snippets as steps of one test, `AT_ONCE` at a time; each step fails by the
 * snippet's name (steps that overlap cannot have the sanitizers, which watch the whole test).
 */
async function runAll(t: Deno.TestContext, snippets: Snippet[]): Promise<void> {
  const queue = [...snippets];
  const passed = await Promise.all(Array.from({ length: AT_ONCE }, async () => {
    let all = true;
    for (let snippet = queue.shift(); snippet; snippet = queue.shift()) {
      const one = snippet;
      all = await t.step({
        name: `${one.name} runs as written`,
        fn: () => runSnippet(one, RUN[one.name]!),
        sanitizeOps: false,
        sanitizeResources: false,
        sanitizeExit: false,
      }) && all;
    }
    return all;
  }));
  assert.ok(passed.every(Boolean), "a snippet failed: see its step");
}

// Scripts without a cluster need nothing more; operator snippets, and scripts given a cluster,
// are driven with kubectl (cluster()).
const runnable = ALL.filter((s) => RUN[s.name]);
const plain = runnable.filter((s) => {
  const run = RUN[s.name]!;
  return run.kind === "script" && !run.cluster;
});
// The slow ones (a timer's 10 s) first, so that they do not end the run alone.
const waits = (s: Snippet) => {
  const run = RUN[s.name]!;
  return run.kind === "operator" ? run.timeout ?? 0 : 0;
};
const driven = runnable.filter((s) => !plain.includes(s)).sort((a, b) => waits(b) - waits(a));
// A longer limit than the default: it is the sum of many snippets' runs (the timers' alone
// waits 10 s), on a machine the suite loads.
Deno.test({
  name: `docs snippets: the scripts run as written (${AT_ONCE} at a time)`,
  timeout: 300_000,
  fn: (t) => runAll(t, plain),
});
testWithKubectl({
  name:
    `docs snippets: the operators (and scripts given a cluster) run as written (${AT_ONCE} at a time)`,
  timeout: 300_000,
  fn: (t) => runAll(t, driven),
});

/** Runs one snippet from a temporary folder, as its entry in `RUN` says. */
async function runSnippet(snippet: Snippet, run: OperatorRun | ScriptRun): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kopf-snippet-" });
  try {
    const file = join(dir, "snippet.ts");
    await Deno.writeTextFile(file, resolved(snippet));
    if (run.kind === "script") await runScript(file, run);
    else await runOperator(file, run);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Runs a script snippet from the root; it must exit with 0. */
async function runScript(file: string, run: ScriptRun): Promise<void> {
  await using env = run.cluster ? await cluster() : undefined;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", file],
    cwd: ROOT,
    env: env ? { KUBECONFIG: env.api.kubeconfig.path } : {},
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, `the script exited with ${out.code}:\n${text}`);
}

/** Runs a handlers snippet as `kopf run` against an embedded API server, and drives it. */
async function runOperator(file: string, run: OperatorRun): Promise<void> {
  await using env = await cluster();
  const apply = async (yaml: string) => {
    const path = `${file}.${crypto.randomUUID()}.yaml`;
    await Deno.writeTextFile(path, yaml);
    const result = await env.kubectl("apply", "-f", path);
    assert.equal(result.code, 0, `kubectl apply: ${result.stderr}`);
  };
  if (run.crd === "kopf crd") {
    const crd = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${ROOT}cli.ts`, "crd", file],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(crd.code, 0, new TextDecoder().decode(crd.stderr));
    await apply(new TextDecoder().decode(crd.stdout));
  }
  const operator = new OperatorProcess(["run", "-A", "--standalone", "--verbose", file], {
    KUBECONFIG: env.api.kubeconfig.path,
  });
  try {
    await operator.waitFor("Initial authentication has finished.", 30);
    if (run.object) await apply(run.object);
    for (const step of run.kubectl ?? []) {
      // Each step after the handlers of the previous one: the first expected text, then the step.
      const result = await retryKubectl(env.kubectl, step);
      if (step.expect !== undefined) {
        const text = result.stdout + result.stderr;
        if (typeof step.expect === "string") assert.ok(text.includes(step.expect), text);
        else assert.match(text, step.expect);
      }
    }
    for (const text of run.expect) await operator.waitFor(text, run.timeout ?? 15);
  } finally {
    const code = await operator.stop();
    assert.equal(code, 0, `the operator exited with ${code}:\n${operator.output}`);
  }
  assert.doesNotMatch(operator.output, /Traceback|Uncaught|error: /, operator.output);
}

/** A kubectl step, tried again for a few seconds until its exit code and text are as expected. */
async function retryKubectl(
  kubectl: (...args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>,
  step: { args: string[]; expect?: string | RegExp; exitCode?: number },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const want = step.exitCode ?? 0;
  const ok = (r: { code: number; stdout: string; stderr: string }) => {
    if (r.code !== want) return false;
    if (step.expect === undefined) return true;
    const text = r.stdout + r.stderr;
    return typeof step.expect === "string" ? text.includes(step.expect) : step.expect.test(text);
  };
  let result = await kubectl(...step.args);
  for (let i = 0; i < 50 && !ok(result); i++) {
    await new Promise((r) => setTimeout(r, 200));
    result = await kubectl(...step.args);
  }
  assert.equal(
    result.code,
    want,
    `kubectl ${step.args.join(" ")}: ${result.stdout}${result.stderr}`,
  );
  return result;
}
