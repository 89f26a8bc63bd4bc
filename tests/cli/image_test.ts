/**
 * The operator's image as far as it can be tested without a container engine
 * (there is none on these machines: `docker build` is not run here). The
 * test reads deploy/Dockerfile and does what it says: the base image is
 * Deno 2.9.6; its COPY lines lay out the files in a temporary directory (the
 * image's WORKDIR), its RUN lines run there (the handlers shim, `deno cache
 * --frozen` against the lock file); then its entry point — deploy/entrypoint.sh
 * with its narrow `--allow-*` flags, without `/tini --` (not here) — runs with
 * the `args` of the Deployment that `kopf manifests` prints, against the
 * embedded API server, as a pod would: the operator logs in, handles an
 * object, serves its probes, and stops gracefully on SIGTERM.
 *
 * @module
 */

import assert from "node:assert/strict";
import { dirname } from "node:path";
import { load as parseYaml, loadAll } from "js-yaml";
import { startApiServer } from "../../testing.ts";
import { collect } from "./_stderr.ts";
import { servedAt } from "../engines/_metrics.ts";
import { denoDir } from "../_deno_dir.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const HANDLERS = "examples/19-typed/example.ts";

/** The instructions of a Dockerfile (continuation lines joined, comments dropped). */
function instructions(text: string): Array<[string, string]> {
  const joined = text.replace(/\\\n/g, " ").split("\n").filter((l) => l.trim() && !/^\s*#/.test(l));
  return joined.map((l) => {
    const m = /^\s*(\w+)\s+(.*)$/.exec(l)!;
    return [m[1]!.toUpperCase(), m[2]!.trim()];
  });
}

async function output(cmd: string, args: string[], options: Deno.CommandOptions = {}) {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped", ...options })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("image: deploy/Dockerfile's layout and entry point run the operator with narrow permissions, with the args kopf manifests gives the Deployment", async () => {
  const steps = instructions(await Deno.readTextFile(`${ROOT}deploy/Dockerfile`));
  assert.deepEqual(steps[0], ["FROM", "denoland/deno:2.9.6"]);
  const args: Record<string, string> = {};
  let entrypoint: string[] = [];
  let cmd: string[] = [];
  const layout = await Deno.makeTempDir({ prefix: "kopf-image-" });
  const env = { PATH: `${dirname(Deno.execPath())}:/usr/bin:/bin`, DENO_DIR: await denoDir() };
  try {
    for (const [op, rest] of steps) {
      if (op === "ARG") {
        const [name, value] = rest.split("=") as [string, string];
        args[name] = value;
      } else if (op === "WORKDIR") {
        assert.equal(rest, "/app"); // the layout directory stands for it
      } else if (op === "COPY") {
        const parts = rest.split(/\s+/);
        const dest = `${layout}/${parts.pop()!}`;
        for (const src of parts) {
          const from = `${ROOT}${src.replace(/\/$/, "")}`;
          const stat = await Deno.stat(from);
          const to = dest.endsWith("/") && !src.endsWith("/")
            ? `${dest}${src.split("/").pop()}`
            : dest.replace(/\/$/, "");
          if (stat.isDirectory) {
            await Deno.mkdir(to, { recursive: true });
            const r = await output("cp", ["-r", `${from}/.`, to]);
            assert.equal(r.code, 0, r.stderr);
          } else await Deno.copyFile(from, to);
        }
      } else if (op === "RUN") {
        const r = await output("sh", ["-c", rest], {
          cwd: layout,
          clearEnv: true,
          env: { ...env, ...args, HOME: layout },
        });
        assert.equal(r.code, 0, `RUN ${rest}: ${r.stderr}`);
      } else if (op === "ENTRYPOINT") entrypoint = JSON.parse(rest);
      else if (op === "CMD") cmd = JSON.parse(rest);
    }
    assert.equal(args.HANDLERS, HANDLERS);
    assert.equal(
      await Deno.readTextFile(`${layout}/handlers.ts`),
      `import "./${HANDLERS}";\n`,
    );
    assert.deepEqual(entrypoint.slice(0, 2), ["/tini", "--"]); // tini is the image's, not here
    assert.deepEqual(cmd, [
      "--all-namespaces",
      "--liveness=http://0.0.0.0:8080/healthz",
      "handlers.ts",
    ]);

    // The Deployment's args, as kopf manifests prints them (the probes on a port the system
    // picks here: the operator's log names it).
    const manifests = await output(Deno.execPath(), [
      "run",
      "-A",
      `${ROOT}cli.ts`,
      "manifests",
      "-A",
      "--image=evc-operator:test",
      "--liveness=http://127.0.0.1:0/healthz",
      `${ROOT}${HANDLERS}`,
    ]);
    assert.equal(manifests.code, 0, manifests.stderr);
    // deno-lint-ignore no-explicit-any
    const deployment = (loadAll(manifests.stdout) as any[]).find((o) => o.kind === "Deployment");
    const container = deployment.spec.template.spec.containers[0];
    assert.deepEqual(container.args, [
      "--all-namespaces",
      "--liveness=http://127.0.0.1:0/healthz",
      "handlers.ts",
    ]);

    await using api = await startApiServer();
    const crd = await output(Deno.execPath(), [
      "run",
      "-A",
      `${ROOT}cli.ts`,
      "crd",
      `${ROOT}${HANDLERS}`,
    ]);
    const created = await fetch(
      `${api.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(parseYaml(crd.stdout)),
      },
    );
    assert.equal(created.status, 201, await created.text());
    // The kubeconfig goes where the pod's files are readable (--allow-read=.); in a pod, the
    // service account is read instead (KUBECONFIG unset).
    await Deno.writeTextFile(`${layout}/kubeconfig`, api.kubeconfig.yaml);
    const child = new Deno.Command("sh", {
      args: [entrypoint[2]!, ...container.args],
      cwd: layout,
      clearEnv: true,
      env: {
        ...env,
        KUBECONFIG: "./kubeconfig",
        KUBERNETES_SERVICE_HOST: "127.0.0.1",
        KUBERNETES_SERVICE_PORT: String(api.port),
        POD_ID: "evc-operator-abc12",
        POD_NAMESPACE: "default",
        KOPF_LISTEN: "127.0.0.1", // any port of the host: the probes' is the system's pick
      },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const { logs, reading } = collect(child.stderr);
    const stdout = child.stdout.cancel();
    try {
      const probe = async (path: string) => {
        const served = servedAt(logs.join(""));
        if (!served) return undefined;
        const res = await fetch(new URL(path, served)).catch(() => undefined);
        await res?.body?.cancel();
        return res?.status;
      };
      const until = async (what: string, ok: () => Promise<boolean>) => {
        const deadline = Date.now() + 20_000;
        while (!await ok()) {
          if (Date.now() > deadline) assert.fail(`not within 20s: ${what}\n${logs.join("")}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      await until("ready", async () => await probe("/readyz") === 200);
      assert.equal(await probe("/healthz"), 200);
      const evc = await fetch(
        `${api.url}/apis/kopf.dev/v1/namespaces/default/ephemeralvolumeclaims`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            apiVersion: "kopf.dev/v1",
            kind: "EphemeralVolumeClaim",
            metadata: { name: "my-claim" },
            spec: { size: "1G" },
          }),
        },
      );
      assert.equal(evc.status, 201, await evc.text());
      await until("the PVC", async () => {
        const res = await fetch(
          `${api.url}/api/v1/namespaces/default/persistentvolumeclaims/my-claim-pvc`,
        );
        await res.body?.cancel();
        return res.status === 200;
      });
    } finally {
      try {
        child.kill("SIGTERM");
      } catch {
        // It has ended already: its status and log say why.
      }
    }
    const status = await child.status;
    await reading;
    await stdout;
    const log = logs.join("");
    assert.equal(status.code, 0, log);
    assert.match(log, /Handler 'create_fn' succeeded\./);
    assert.match(log, /Stop-flag is raised\. Operator is stopping\./);
    assert.doesNotMatch(log, /missing Deno permission|needs \w+ access|--allow-/);
  } finally {
    await Deno.remove(layout, { recursive: true });
  }
});

Deno.test("compile: the CI workflow's deno compile step, run with deno run (the same entry and permissions) — deploy/main.ts runs the operator with kopf.main()", async () => {
  // `deno compile` needs a download these machines cannot reach; its entry and permissions are
  // what can be tested: the step's command with `run` for `compile` (target and output dropped).
  const workflow = parseYaml(
    await Deno.readTextFile(`${ROOT}.github/workflows/compile.yml`),
  ) as { jobs: { compile: { steps: Array<{ name?: string; run?: string }> } } };
  const step = workflow.jobs.compile.steps.find((s) => s.name === "Compile")!;
  const words = (step.run as string).replace(/\$\{\{[^}]*\}\}/g, "X").trim().split(/\s+/);
  assert.deepEqual(words.slice(0, 2), ["deno", "compile"]);
  assert.equal(words.at(-1), "deploy/main.ts");
  const flags: string[] = [];
  for (let i = 2; i < words.length - 1; i++) {
    if (words[i] === "--target" || words[i] === "--output") i++;
    else flags.push(words[i]!);
  }
  assert.ok(flags.includes("--allow-net"));
  const cache = await denoDir();
  await using api = await startApiServer();
  const dir = await Deno.makeTempDir({ prefix: "kopf-compile-" });
  try {
    const crd = await output(Deno.execPath(), [
      "run",
      "-A",
      `${ROOT}cli.ts`,
      "crd",
      `${ROOT}${HANDLERS}`,
    ]);
    const created = await fetch(
      `${api.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(parseYaml(crd.stdout)),
      },
    );
    assert.equal(created.status, 201, await created.text());
    const kubeconfig = `${dir}/kubeconfig`;
    await Deno.writeTextFile(kubeconfig, api.kubeconfig.yaml);
    // In a pod the service account is read; here the kubeconfig (added to the baked read access).
    const permissions = flags.map((f) => f.startsWith("--allow-read=") ? `${f},${kubeconfig}` : f);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...permissions, `${ROOT}deploy/main.ts`, "-A", "--standalone"],
      clearEnv: true,
      env: { KUBECONFIG: kubeconfig, POD_ID: "evc-operator-0", NO_COLOR: "1", DENO_DIR: cache },
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const { logs, reading } = collect(child.stderr);
    try {
      const deadline = Date.now() + 20_000;
      const until = async (what: string, ok: () => Promise<boolean> | boolean) => {
        while (!await ok()) {
          if (Date.now() > deadline) assert.fail(`not within 20s: ${what}\n${logs.join("")}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      await until(
        "the login",
        () => logs.join("").includes("Initial authentication has finished."),
      );
      const evc = await fetch(
        `${api.url}/apis/kopf.dev/v1/namespaces/default/ephemeralvolumeclaims`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            apiVersion: "kopf.dev/v1",
            kind: "EphemeralVolumeClaim",
            metadata: { name: "my-claim" },
            spec: { size: "1G" },
          }),
        },
      );
      assert.equal(evc.status, 201, await evc.text());
      await until("handled", () => logs.join("").includes("Handler 'create_fn' succeeded."));
    } finally {
      try {
        child.kill("SIGTERM");
      } catch {
        // It has ended already: its status and log say why.
      }
    }
    const status = await child.status;
    await reading;
    assert.equal(status.code, 0, logs.join(""));
    assert.doesNotMatch(logs.join(""), /missing Deno permission|--allow-/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("V8 flags: the image's entry point, the compile step and docs/deployment.md give kopf run the same heap settings", async () => {
  const flagsOf = (text: string, where: string) => {
    const found = [...text.matchAll(/--v8-flags=(--[\w=,-]+)/g)].map((m) => m[1]!);
    assert.ok(found.length, `no --v8-flags in ${where}`);
    return [...new Set(found)];
  };
  const entry = flagsOf(await Deno.readTextFile(`${ROOT}deploy/entrypoint.sh`), "entrypoint.sh");
  assert.equal(entry.length, 1, `one setting in entrypoint.sh: ${entry}`);
  const compile = flagsOf(
    await Deno.readTextFile(`${ROOT}.github/workflows/compile.yml`),
    "compile.yml",
  );
  const docs = flagsOf(await Deno.readTextFile(`${ROOT}docs/deployment.md`), "deployment.md");
  assert.deepEqual(compile, entry);
  assert.deepEqual(docs, entry);
});

Deno.test("code cache: the image's entry point, the compile step and docs/deployment.md run kopf run without it", async () => {
  const entry = await Deno.readTextFile(`${ROOT}deploy/entrypoint.sh`);
  assert.match(entry, /^exec deno run .*--no-code-cache/m);
  const compile = await Deno.readTextFile(`${ROOT}.github/workflows/compile.yml`);
  assert.match(compile, /^\s*--no-code-cache$/m);
  const docs = await Deno.readTextFile(`${ROOT}docs/deployment.md`);
  assert.match(docs, /deno run --no-code-cache --v8-flags=/);
});
