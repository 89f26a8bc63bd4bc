/**
 * The proof that the access table (core/reactor/access.ts) and the code that
 * makes the requests agree, both ways. For each mode of an operator —
 * cluster-wide with every handler kind and the automatic peering; namespaced
 * with a mandatory peering and leader election; sharded; managed admission
 * webhooks and converters — the RBAC that `kopf rbac` makes is applied to an
 * API server that enforces RBAC, the operator runs as the bound service
 * account with its API traffic logged (`--debug`), objects are created,
 * changed and deleted, and the operator stops gracefully. Then:
 *
 * - nothing was refused (403), and every request of the traffic is a need of
 *   the table (so nothing works only by accident);
 * - every need of the table that is not marked conditional was used by some
 *   request, verb by verb (so no rule is granted that the code never uses).
 *
 * @module
 */

import assert from "node:assert/strict";
import { KopfRunner, type RunningApiServer, startApiServer } from "../../testing.ts";
import {
  type RequestAttributes,
  requestAttributes,
} from "../../src/apiserver/auth/request_attributes.ts";
import type { AccessNeed } from "../../src/core/reactor/access.ts";
import { operatorFlags, type OperatorValues } from "../../src/cli/_operator_flags.ts";
import { PROGRAM } from "../../src/cli/_commands.ts";
import { parseCommandLine } from "../../src/cli/_parser.ts";
import { operatorNeeds, rbacObjects } from "../../src/cli/rbac.ts";
import { loadAll } from "js-yaml";

const ROOT = new URL("../../", import.meta.url).pathname;
const FIXTURES = `${ROOT}tests/fixtures/rbac/`;
const RBAC = "/apis/rbac.authorization.k8s.io/v1";
const KEX = "/apis/kopf.dev/v1/namespaces";

type Admin = (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>>;

function adminOf(api: RunningApiServer): Admin {
  return async (method, path, body) => {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${api.kubeconfig.object.users[0]!.user.token}`,
        "content-type": method === "PATCH" ? "application/merge-patch+json" : "application/json",
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const answer = await res.json();
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(answer)}`);
    return answer;
  };
}

async function applyYamlFile(admin: Admin, path: string): Promise<void> {
  for (const doc of loadAll(await Deno.readTextFile(path))) {
    // deno-lint-ignore no-explicit-any
    const obj = doc as any;
    if (!obj) continue;
    if (obj.kind === "CustomResourceDefinition") {
      await admin("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", obj);
    } else if (obj.kind === "KopfPeering") {
      await admin("POST", `${KEX}/${obj.metadata.namespace}/kopfpeerings`, obj);
    } else if (obj.kind === "ClusterKopfPeering") {
      await admin("POST", "/apis/kopf.dev/v1/clusterkopfpeerings", obj);
    }
  }
}

/** Applies RBAC objects as the administrator. */
async function applyRbac(admin: Admin, objects: Record<string, unknown>[]): Promise<void> {
  for (const obj of objects) {
    const { why: _, ...clean } = obj as Record<string, unknown> & { why?: string };
    const rules = (clean.rules as Record<string, unknown>[] | undefined)?.map((
      { why: _why, ...r },
    ) => r);
    const body = rules ? { ...clean, rules } : clean;
    const meta = obj.metadata as { namespace?: string };
    const plural = `${String(obj.kind).toLowerCase()}s`;
    const path = meta.namespace
      ? `${RBAC}/namespaces/${meta.namespace}/${plural}`
      : `${RBAC}/${plural}`;
    await admin("POST", path, body);
  }
}

/** The operator's requests, from its `--debug` traffic lines. */
function trafficOf(output: string, base: string): Array<RequestAttributes & { code: number }> {
  const out: Array<RequestAttributes & { code: number }> = [];
  for (const m of output.matchAll(/API: ([A-Z]+) (\S+) -> (\d+|no response)/g)) {
    const attrs = requestAttributes(m[1]!, new URL(m[2]!, base));
    out.push({ ...attrs, code: Number(m[3]) || 0 });
  }
  return out;
}

/** Whether a need covers a request (for one verb). */
function covers(
  need: AccessNeed,
  a: RequestAttributes,
  verb: string,
  served: string[] | undefined,
): boolean {
  if (!a.resourceRequest || a.verb !== verb || !need.verbs.includes(verb as never)) return false;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  if (need.group !== a.apiGroup || need.resource !== resource) return false;
  if (need.names && !need.names.includes(a.name)) return false;
  const scope = need.scope;
  if (scope.kind === "cluster") return a.namespace === "";
  if (scope.kind === "namespace") return a.namespace === scope.namespace;
  return served === undefined || served.includes(a.namespace);
}

interface Scenario {
  /** The fixture file. */
  file: string;
  /** `kopf run`/`kopf rbac` flags (the scope and modes). */
  flags: string[];
  /** CRD files for `--crd`. */
  crds: string[];
  /** Before the operator starts (as the administrator). */
  prepare?: (admin: Admin) => Promise<void>;
  /** What happens while it runs. */
  drive: (admin: Admin, runner: KopfRunner) => Promise<void>;
  /**
   * The rows the scenario exercises: they must be among the needs (so the scenario is the one
   * meant) and used, also those marked conditional; `row:verb` for a conditional verb.
   */
  rows: string[];
}

async function prove(s: Scenario): Promise<void> {
  const commandLine = [...s.flags, ...s.crds.flatMap((c) => ["--crd", c]), `${FIXTURES}${s.file}`];
  const flags = operatorFlags([`${FIXTURES}${s.file}`], parse(s.flags, s.crds));
  const { needs, namespaces } = await operatorNeeds(flags);
  assert.deepEqual(
    s.rows.filter((row) => !needs.some((n) => n.row === row.split(":")[0])),
    [],
    "the scenario's rows are among the needs",
  );
  const { objects } = rbacObjects(needs, {
    name: flags.name,
    accountNamespace: flags.accountNamespace,
    namespaces,
  });
  await using api = await startApiServer({ authorization: "rbac" });
  const admin = adminOf(api);
  for (const crd of s.crds) await applyYamlFile(admin, crd);
  for (const ns of flags.namespaces) {
    if (ns !== "default") await admin("POST", "/api/v1/namespaces", { metadata: { name: ns } });
  }
  await s.prepare?.(admin);
  await admin("POST", `/api/v1/namespaces/${flags.accountNamespace}/serviceaccounts`, {
    metadata: { name: flags.name },
  });
  await applyRbac(admin, objects);
  const token = await api.createToken(flags.accountNamespace, flags.name);
  const dir = await Deno.makeTempDir({ prefix: "kopf-rbac-proof-" });
  try {
    const kubeconfig = `${dir}/kubeconfig`;
    await Deno.writeTextFile(kubeconfig, api.kubeconfigFor({ token }));
    const runner = await KopfRunner.start([
      "run",
      "--debug",
      ...commandLine.filter((a, i) => a !== "--crd" && commandLine[i - 1] !== "--crd"),
    ], { kubeconfig });
    try {
      await s.drive(admin, runner);
    } finally {
      await runner.stop();
    }
    assert.equal(runner.exception, undefined, runner.output);
    const traffic = trafficOf(runner.output, api.url);
    assert.ok(traffic.length > 0, "the traffic is logged");

    // 1. Nothing refused; every resource request is a need of the table.
    const refused = traffic.filter((a) => a.code === 403);
    assert.deepEqual(refused.map(show), [], "refused requests");
    assert.equal(api.countRequests({ code: 403 }), 0);
    const stray = traffic.filter((a) =>
      a.resourceRequest && !needs.some((n) => covers(n, a, a.verb, namespaces))
    );
    assert.deepEqual(stray.map(show), [], "requests that no need of the table covers");

    // 2. Every need was used, verb by verb: the unconditional ones, and the conditional ones
    // that the scenario exercises.
    const unused: string[] = [];
    for (const need of needs) {
      if (need.conditional && !s.rows.includes(need.row)) continue;
      for (const verb of need.verbs) {
        if (need.conditionalVerbs?.[verb] && !s.rows.includes(`${need.row}:${verb}`)) continue;
        if (!traffic.some((a) => covers(need, a, verb, namespaces))) {
          unused.push(
            `${need.row}: ${verb} ${need.resource}.${need.group} ${JSON.stringify(need.scope)}`,
          );
        }
      }
    }
    assert.deepEqual(unused, [], "needs of the table that no request used");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function show(a: RequestAttributes & { code: number }): string {
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return `${a.verb} ${resource}.${a.apiGroup} ns=${a.namespace || "-"} name=${
    a.name || "-"
  } -> ${a.code}`;
}

/** The options of `kopf rbac <flags> --crd …`, as the real parser reads them (for operatorFlags). */
function parse(flags: string[], crds: string[]): OperatorValues {
  const args = ["rbac", ...flags, ...crds.flatMap((crd) => ["--crd", crd])];
  const parsed = parseCommandLine(PROGRAM, args);
  if (parsed.kind !== "command") assert.fail(`not a command: ${args.join(" ")}`);
  return parsed.options as OperatorValues;
}

/**
 * How long a scenario waits for the operator's next step, in seconds: generous, because the
 * whole suite loads the machine (the runner's default of 10 s was seen to run out there); a
 * wait that runs out still fails the test by name, well within its time limit.
 */
const WAIT_S = 40;

async function until(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + WAIT_S * 1000;
  while (!await check()) {
    if (Date.now() > deadline) assert.fail(`not within ${WAIT_S}s: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const example = (name: string, field = "value") => ({
  apiVersion: "kopf.dev/v1",
  kind: "KopfExample",
  metadata: { name },
  spec: { field },
});

Deno.test("rbac proof: cluster-wide, every handler kind, automatic peering — nothing refused, every rule used", async () => {
  await prove({
    file: "everything.ts",
    flags: ["-A"],
    crds: [`${ROOT}examples/crd.yaml`, `${ROOT}peering.yaml`],
    prepare: (admin) => applyYamlFile(admin, `${ROOT}examples/06-peering/default.yaml`),
    rows: ["watching", "patching", "status", "events", "crds", "peering", "peering-lookup", "uses"],
    drive: async (admin, runner) => {
      const kept = () => (runner.output.match(/Reconciler 'keep' succeeded\./g) ?? []).length;
      await admin("POST", `${KEX}/default/kopfexamples`, example("e1"));
      await runner.waitFor("Handler 'create_fn' succeeded.", WAIT_S);
      await until("the reconciler's first run", () => kept() >= 1);
      await admin("PATCH", `${KEX}/default/kopfexamples/e1`, { spec: { field: "changed" } });
      await runner.waitFor("Handler 'update_fn' succeeded.", WAIT_S);
      // The reconciler's second run posts its event again, and the correlator patches the first
      // one (the "events" row's patch): awaited, because on a loaded machine the two runs could
      // merge into one when the change came before the first run, and the event's patch could
      // be left for after the stop.
      await until("the reconciler's second run", () => kept() >= 2);
      await until(
        "the repeated event, patched",
        () => /API: PATCH \/api\/v1\/namespaces\/default\/events\//.test(runner.output),
      );
      await admin("DELETE", `${KEX}/default/kopfexamples/e1`);
      await runner.waitFor("Handler 'delete_fn' succeeded.", WAIT_S);
      await runner.waitFor("Deleted, really deleted", WAIT_S);
    },
  });
});

Deno.test("rbac proof: namespaced (-n twice), a mandatory peering, leader election, lists not streamed — nothing refused, every rule used", async () => {
  await prove({
    file: "leader.ts",
    flags: ["--namespace=default", "--namespace=ns2", "--peering=proof", "--leader-election"],
    crds: [`${ROOT}examples/crd.yaml`, `${ROOT}peering.yaml`],
    prepare: async (admin) => {
      for (const ns of ["default", "ns2"]) {
        await admin("POST", `${KEX}/${ns}/kopfpeerings`, {
          apiVersion: "kopf.dev/v1",
          kind: "KopfPeering",
          metadata: { name: "proof", namespace: ns },
        });
      }
    },
    rows: [
      "namespaces:list",
      "watching:list",
      "peering",
      "peering:list",
      "leader-election",
      "leader-election-create",
    ],
    drive: async (admin, runner) => {
      await runner.waitFor(/successfully acquired lease/, WAIT_S);
      for (const ns of ["default", "ns2"]) {
        await admin("POST", `${KEX}/${ns}/kopfexamples`, example("e1"));
      }
      await until(
        "both handled",
        () => (runner.output.match(/Handler 'create_fn' succeeded\./g) ?? []).length >= 2,
      );
      // A renewal (retry period 0.3 s): awaited, not slept for, so that a loaded machine
      // cannot end the scenario before the renewal's request.
      await runner.waitFor(/successfully renewed lease/, WAIT_S);
    },
  });
});

Deno.test("rbac proof: sharded (--shards), lists always streamed (no list granted) — nothing refused, every rule used", async () => {
  await prove({
    file: "shards.ts",
    flags: ["-A", "--shards"],
    crds: [`${ROOT}examples/crd.yaml`],
    rows: ["sharding"],
    drive: async (admin, runner) => {
      await admin("POST", `${KEX}/default/kopfexamples`, example("e1"));
      await runner.waitFor("Handler 'create_fn' succeeded.", WAIT_S);
      // A renewal of the member Lease (every 0.3 s): awaited, not slept for, so that a loaded
      // machine cannot end the scenario before the renewal's request.
      await until(
        "a renewal of the member Lease",
        () =>
          /API: PUT \/apis\/coordination\.k8s\.io\/v1\/namespaces\/default\/leases\//.test(
            runner.output,
          ),
      );
    },
  });
});

Deno.test("rbac proof: managed admission webhooks and converters — nothing refused, every rule used", async () => {
  await prove({
    file: "admission.ts",
    flags: ["-A", "--standalone"],
    crds: [`${ROOT}examples/18-conversion/crd-v2.yaml`],
    rows: ["crds", "webhook-configurations", "webhook-configurations-create", "conversion"],
    drive: async (_admin, runner) => {
      await runner.waitFor(
        "Reconfiguring the conversion webhook of kopfexamples.kopf.dev.",
        WAIT_S,
      );
      // Its request (the CRD's patch): awaited, not slept for, as above.
      await until(
        "the CRD's conversion webhook, patched",
        () =>
          /API: PATCH \/apis\/apiextensions\.k8s\.io\/v1\/customresourcedefinitions\/kopfexamples\.kopf\.dev /
            .test(runner.output),
      );
    },
  });
});
