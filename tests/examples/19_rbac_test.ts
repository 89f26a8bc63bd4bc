/**
 * The walkthrough operator (examples/19-typed) shipped as it would be to a
 * cluster, on the embedded API server with RBAC enforced (TLS: kubectl sends
 * tokens only over HTTPS): the administrator applies `kopf crd` and
 * `kopf rbac` with kubectl, creates the service account and its token with
 * kubectl, and the operator runs as that account — bound to exactly what
 * `kopf rbac` printed, nothing more. kubectl, as the administrator, drives it
 * end to end. Then the same with one printed rule short (patch on
 * persistentvolumeclaims): the resize is refused with kube-apiserver's 403,
 * and the operator's log names the verb, the resource and what to grant.
 *
 * @module
 */

import assert from "node:assert/strict";
import { dump as stringify, loadAll } from "js-yaml";
import { KopfRunner, startApiServer } from "../../testing.ts";
import { eventually, type Obj, ROOT } from "./_setup.ts";
import { testWithKubectl } from "../apiserver/_kubectl.ts";

const EXAMPLE = `${ROOT}examples/19-typed/example.ts`;
const ACCOUNT = "system:serviceaccount:operators:evc-operator";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(
  cmd: string,
  args: string[],
  stdin?: string,
  env?: Record<string, string>,
): Promise<Run> {
  const child = new Deno.Command(cmd, {
    args,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** `kopf <args>` as a user runs it (a process of its own). */
function kopf(...args: string[]): Promise<Run> {
  return run(Deno.execPath(), ["run", "-A", `${ROOT}cli.ts`, ...args]);
}

/** An RBAC-enforcing server with the CRD, the peering CRDs and objects, and the given RBAC. */
async function setUp(editRbac: (yaml: string) => string = (y) => y) {
  const api = await startApiServer({ authorization: "rbac", tls: true });
  const home = await Deno.makeTempDir({ prefix: "kopf-rbac-19-" });
  const kubectl = (args: string[], stdin?: string, kubeconfig = api.kubeconfig.path) =>
    run("kubectl", ["--kubeconfig", kubeconfig, ...args], stdin, { HOME: home });
  const apply = async (yaml: string) => {
    const r = await kubectl(["apply", "-f", "-"], yaml);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  const crd = await kopf("crd", EXAMPLE);
  assert.equal(crd.code, 0, crd.stderr);
  await apply(crd.stdout);
  await apply(await Deno.readTextFile(`${ROOT}peering.yaml`));
  await apply(await Deno.readTextFile(`${ROOT}examples/06-peering/default.yaml`));
  assert.equal((await kubectl(["create", "namespace", "operators"])).code, 0);

  // As a user ships it: the RBAC of the handlers, for a service account in its own namespace.
  const rbac = await kopf(
    "rbac",
    "-A",
    "--name=evc-operator",
    "--account-namespace=operators",
    EXAMPLE,
  );
  assert.equal(rbac.code, 0, rbac.stderr);
  const applied = await apply(editRbac(rbac.stdout));
  assert.match(applied, /clusterrole\.rbac\.authorization\.k8s\.io\/evc-operator created/);
  const sa = await kubectl(["create", "serviceaccount", "evc-operator", "-n", "operators"]);
  assert.equal(sa.code, 0, sa.stderr);
  const token = await kubectl(["create", "token", "evc-operator", "-n", "operators"]);
  assert.equal(token.code, 0, token.stderr);
  const kubeconfig = `${home}/operator.kubeconfig`;
  await Deno.writeTextFile(kubeconfig, api.kubeconfigFor({ token: token.stdout.trim() }));
  const whoami = await kubectl(
    ["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"],
    undefined,
    kubeconfig,
  );
  assert.equal(whoami.stdout, ACCOUNT, whoami.stderr);
  const get = async (...args: string[]): Promise<Obj> => {
    const r = await kubectl(["get", ...args, "-o", "json"]);
    return r.code === 0 ? JSON.parse(r.stdout) : undefined;
  };
  return {
    api,
    kubectl,
    get,
    kubeconfig,
    async [Symbol.asyncDispose]() {
      await api.stop();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

function evc(size: string): string {
  return JSON.stringify({
    apiVersion: "kopf.dev/v1",
    kind: "EphemeralVolumeClaim",
    metadata: { name: "my-claim", namespace: "default" },
    spec: { size },
  });
}

const RESIZE = ["patch", "evc", "my-claim", "--type=merge", "-p", '{"spec":{"size":"2G"}}'];

testWithKubectl(
  "19-rbac: the walkthrough operator as a service account bound to exactly what kopf rbac printed — kubectl drives it end to end, nothing refused",
  async () => {
    await using c = await setUp();
    const runner = await KopfRunner.start(["run", "-A", "--verbose", EXAMPLE], {
      kubeconfig: c.kubeconfig,
    });
    try {
      // The peering object (the automatic mode) is found and joined: its rules are used too.
      await eventually(
        "the peering entry",
        () => c.get("clusterkopfpeering", "default"),
        (o: Obj) => Object.keys(o?.status ?? {}).length === 1,
      );
      assert.equal((await c.kubectl(["apply", "-f", "-"], evc("1G"))).code, 0);
      await runner.waitFor("Handler 'create_fn' succeeded.");
      const created: Obj = await eventually(
        "the typed status",
        () => c.get("evc", "my-claim"),
        (o: Obj) => o?.status?.size === "1G",
      );
      const pvc: Obj = await c.get("pvc", "my-claim-pvc");
      assert.equal(pvc.spec.resources.requests.storage, "1G");
      assert.deepEqual(
        pvc.metadata.ownerReferences.map((r: Obj) => [r.kind, r.name, r.uid]),
        [["EphemeralVolumeClaim", "my-claim", created.metadata.uid]],
      );
      const patched = await c.kubectl(RESIZE);
      assert.equal(patched.code, 0, patched.stderr);
      await eventually(
        "the PVC resized",
        () => c.get("pvc", "my-claim-pvc"),
        (o: Obj) => o?.spec?.resources?.requests?.storage === "2G",
      );
      assert.equal((await c.kubectl(["label", "evc", "my-claim", "application=some-app"])).code, 0);
      await eventually(
        "the label on the PVC",
        () => c.get("pvc", "my-claim-pvc"),
        (o: Obj) => o?.metadata?.labels?.application === "some-app",
      );
      assert.equal((await c.kubectl(["delete", "evc", "my-claim"])).code, 0);
      await eventually("the PVC collected", () => c.get("pvc", "my-claim-pvc"), (o) => !o);
      // Events were posted as the service account.
      const events: Obj = await c.get("events", "-n", "default");
      assert.ok(events.items.some((e: Obj) => e.involvedObject?.name === "my-claim"));
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exitCode, 0);
    assert.equal(runner.exception, undefined);
    assert.doesNotMatch(runner.output, /[Ff]orbidden|cannot (get|list|watch|create|patch|update)/);
    assert.equal(c.api.countRequests({ code: 403 }), 0);
  },
);

testWithKubectl(
  "19-rbac: one printed rule short (patch on persistentvolumeclaims) — the resize is refused with a 403 naming the verb and resource, and the log says what to grant",
  async () => {
    let removed = false;
    await using c = await setUp((yaml) => {
      // The printed RBAC, minus `patch` in the rule of persistentvolumeclaims.
      const docs = loadAll(yaml) as Obj[];
      for (const doc of docs) {
        for (const rule of doc.rules ?? []) {
          if (rule.resources?.includes("persistentvolumeclaims") && rule.verbs.includes("patch")) {
            rule.verbs = rule.verbs.filter((v: string) => v !== "patch");
            removed = true;
          }
        }
      }
      return docs.map((d) => stringify(d)).join("---\n");
    });
    assert.ok(removed, "the printed RBAC has patch on persistentvolumeclaims");
    const runner = await KopfRunner.start(["run", "-A", "--verbose", EXAMPLE], {
      kubeconfig: c.kubeconfig,
    });
    try {
      assert.equal((await c.kubectl(["apply", "-f", "-"], evc("1G"))).code, 0);
      await runner.waitFor("Handler 'create_fn' succeeded.");
      assert.ok(await c.get("pvc", "my-claim-pvc"), "created: create is still granted");
      const patched = await c.kubectl(RESIZE);
      assert.equal(patched.code, 0, patched.stderr);
      const output = await runner.waitFor(/cannot patch resource "persistentvolumeclaims"/);
      const lines = output.split("\n");
      const at = lines.findIndex((l) =>
        l.includes('cannot patch resource "persistentvolumeclaims"')
      );
      // The handler's failure (it will be retried), then the error: kube-apiserver's words, and
      // what to grant to whom.
      assert.match(
        lines[at - 1]!,
        /\[ERROR +\] \[default\/my-claim\] Handler 'resize_fn\/spec\.size' failed with an exception\. Will retry\./,
      );
      assert.equal(
        lines[at],
        "ForbiddenError: PATCH /api/v1/namespaces/default/persistentvolumeclaims/my-claim-pvc: " +
          `403 Forbidden: persistentvolumeclaims "my-claim-pvc" is forbidden: User "${ACCOUNT}" ` +
          'cannot patch resource "persistentvolumeclaims" in API group "" in the namespace "default"' +
          " — grant this verb on this resource to the operator's account (RBAC)",
      );
      const pvc: Obj = await c.get("pvc", "my-claim-pvc");
      assert.equal(pvc.spec.resources.requests.storage, "1G"); // not resized
    } finally {
      await runner.stop();
    }
    const refused = { code: 403, verb: "patch", resource: "persistentvolumeclaims" };
    assert.ok(c.api.countRequests(refused) > 0);
    // Nothing else was refused: only the removed rule is missing.
    assert.equal(c.api.countRequests({ code: 403 }), c.api.countRequests(refused));
  },
);
