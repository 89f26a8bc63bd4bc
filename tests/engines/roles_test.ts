/**
 * A replica's role (leader, standby, paused) from its pause gate: on
 * `/metrics` as `kopf_operator_role{role}` and `kopf_leader_transitions_total`,
 * and on the health server's `/readyz` (200 on every role once ready, 503
 * before) and `X-Kopf-Role` header; liveness is not affected by the role.
 */
import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { ToggleSet } from "../../src/cogs/aio/toggles.ts";
import { OperatorLogger } from "../../src/core/actions/loggers.ts";
import { OperatorMetrics } from "../../src/core/engines/metrics.ts";
import { Prober } from "../../src/core/engines/probing.ts";
import { observeRole, roleOf } from "../../src/core/engines/roles.ts";

const env = {
  logger: new OperatorLogger(() => {}),
  memo: {},
  settings: new kopf.OperatorSettings(),
  indices: {},
};

Deno.test("roleOf(): leader when nothing holds the gate; standby when only the election does; paused for any other reason", () => {
  const paused = new ToggleSet();
  assert.equal(roleOf(paused), "leader");
  const election = paused.make("leader election", true);
  assert.equal(roleOf(paused, election), "standby");
  const peering = paused.make("peering 'default' cluster-wide", true);
  assert.equal(roleOf(paused, election), "paused");
  election.turnTo(false);
  assert.equal(roleOf(paused, election), "paused");
  peering.turnTo(false);
  assert.equal(roleOf(paused, election), "leader");
  peering.turnTo(true);
  assert.equal(roleOf(paused), "paused"); // no election: any reason is a pause
});

Deno.test("observeRole(): the role gauge is read at each scrape; transitions are counted", async () => {
  const metrics = new OperatorMetrics();
  let role: "leader" | "standby" | "paused" = "standby";
  const roles = observeRole(metrics, () => role);
  let text = await metrics.metrics();
  assert.match(text, /kopf_operator_role\{role="standby"\} 1/);
  assert.match(text, /kopf_operator_role\{role="leader"\} 0/);
  assert.match(text, /kopf_operator_role\{role="paused"\} 0/);
  assert.match(text, /kopf_leader_transitions_total 0/);
  role = "leader";
  roles.leaderElected();
  roles.leaderElected();
  text = await metrics.metrics();
  assert.match(text, /kopf_operator_role\{role="leader"\} 1/);
  assert.match(text, /kopf_operator_role\{role="standby"\} 0/);
  assert.match(text, /kopf_leader_transitions_total 2/);
  // Observed again (the same metrics): no duplicate registration, the newer source counts.
  observeRole(metrics, () => "paused");
  assert.match(await metrics.metrics(), /kopf_operator_role\{role="paused"\} 1/);
});

Deno.test("`/readyz`: 503 before the start-up is done, then 200 with the role on every replica; the probes keep answering", async () => {
  const prober = new Prober({ probes: () => [], env });
  let role: "leader" | "standby" | "paused" = "standby";
  prober.observeRole(() => role);
  let res = await prober.handle(new Request("http://x/readyz"));
  assert.equal(res.status, 503);
  assert.deepEqual(await res.json(), { ready: false, role: "standby" });
  prober.ready();
  res = await prober.handle(new Request("http://x/readyz"));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("x-kopf-role"), "standby");
  assert.deepEqual(await res.json(), { ready: true, role: "standby" });
  res = await prober.handle(new Request("http://x/healthz"));
  assert.equal(res.status, 200); // liveness: healthy on a standby
  assert.equal(res.headers.get("x-kopf-role"), "standby");
  await res.body?.cancel();
  role = "leader";
  res = await prober.handle(new Request("http://x/readyz"));
  assert.deepEqual(await res.json(), { ready: true, role: "leader" });
});

Deno.test("`/readyz` without a role source (an embedded prober): ready means leader", async () => {
  const prober = new Prober({ probes: () => [], env });
  prober.ready();
  const res = await prober.handle(new Request("http://x/readyz"));
  assert.deepEqual(await res.json(), { ready: true, role: "leader" });
  assert.equal(res.headers.get("x-kopf-role"), null);
});
