/**
 * `OperatorError` is one line for the user and keeps what it stands for as
 * its `cause`, so that an embedding application can tell the failures apart.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";

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
