/**
 * `OperatorError` is one line for the user and keeps what it stands for as
 * its `cause`, so that an embedding application can tell the failures apart.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { startApiServer } from "../../testing.ts";

Deno.test("OperatorError keeps its cause: a failed login, a failed startup handler", async () => {
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("kopfexamples", { registry }, () => {});
  const login = await kopf.operator({
    registry,
    kubeconfig: "/nonexistent/kubeconfig",
    sink: () => {},
  }).then(() => undefined, (e) => e);
  assert.ok(login instanceof kopf.OperatorError, String(login));
  assert.match(login.message, /^Cannot log in to the Kubernetes API: /);
  assert.ok(!login.message.includes("\n"));
  assert.equal((login.cause as Error)?.name, "LoginError");

  const failing = new kopf.OperatorRegistry();
  kopf.on.startup({ registry: failing }, function boot() {
    throw new kopf.PermanentError("no config");
  });
  const startup = await kopf.operator({ registry: failing, sink: () => {} }).then(
    () => undefined,
    (e) => e,
  );
  assert.ok(startup instanceof kopf.OperatorError, String(startup));
  assert.match(startup.message, /'boot': no config/);
  assert.equal((startup.cause as Error)?.name, "ActivityError");
});

Deno.test("OperatorError: a vault given with credentials that the API answers 401 to is a failed login at once, not a wait for a re-login nobody runs", async () => {
  await using api = await startApiServer({ token: "the-right-token" });
  const registry = new kopf.OperatorRegistry();
  kopf.on.create("configmaps", { registry }, () => {});
  const vault = new kopf.Vault({
    mine: new kopf.ConnectionInfo({ server: api.url, token: "a-wrong-token" }),
  });
  const stop = AbortSignal.timeout(20_000); // the operator before waited here until aborted
  const failed = await kopf.operator({
    registry,
    vault,
    clusterwide: true,
    standalone: true,
    signal: stop,
    sink: () => {},
  }).then(() => undefined, (e) => e);
  assert.equal(stop.aborted, false, "it failed by itself");
  assert.ok(failed instanceof kopf.OperatorError, String(failed));
  assert.match(
    failed.message,
    /^Cannot log in to the Kubernetes API: Ran out of valid credentials/,
  );
  assert.equal((failed.cause as Error)?.name, "LoginError");
  assert.equal(((failed.cause as Error).cause as kopf.ApiError)?.code, 401);
});
