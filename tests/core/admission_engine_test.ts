import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { serveAdmission } from "../../src/core/engines/admission.ts";
import type { AnyObject } from "../../mod.ts";

function review(request: AnyObject = {}): AnyObject {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "uid-1",
      kind: { group: "kopf.dev", version: "v1", kind: "KopfExample" },
      resource: { group: "kopf.dev", version: "v1", resource: "kopfexamples" },
      name: "kex1",
      namespace: "default",
      operation: "CREATE",
      userInfo: { username: "admin", groups: ["system:masters"] },
      object: {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: { name: "kex1", namespace: "default", labels: { app: "x" } },
        spec: { numbers: [1, 2] },
      },
      oldObject: null,
      dryRun: false,
      ...request,
    },
  };
}

function setup() {
  const registry = new kopf.OperatorRegistry();
  const lines: string[] = [];
  const options = {
    registry,
    settings: new kopf.OperatorSettings(),
    memo: new kopf.Memo(),
    sink: (r: { message: string }) => void lines.push(r.message),
  };
  return { registry, options, lines };
}

Deno.test("validate: allowed with warnings; the uid and review kind are echoed", async () => {
  const { registry, options } = setup();
  kopf.on.validate("kopfexamples", { registry }, function sayHello({ warnings }) {
    warnings.push("Verified with the operator's hook.");
  });
  const answer = await serveAdmission(review(), options, { webhook: "sayHello" });
  assert.deepEqual(answer, {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: { uid: "uid-1", allowed: true, warnings: ["Verified with the operator's hook."] },
  });
});

Deno.test("validate: AdmissionError refuses with its message and code", async () => {
  const { registry, options } = setup();
  kopf.on.validate("kopfexamples", { registry }, function numbersRange() {
    throw new kopf.AdmissionError("Numbers must be below 0..100.", 499);
  });
  const answer = await serveAdmission(review(), options, { webhook: "numbersRange" });
  assert.deepEqual(answer.response, {
    uid: "uid-1",
    allowed: false,
    status: { message: "Numbers must be below 0..100.", code: 499 },
  });
});

Deno.test("validate: any other error refuses with 500 and its message (not retried)", async () => {
  const { registry, options } = setup();
  let calls = 0;
  kopf.on.validate("kopfexamples", { registry }, function broken() {
    calls++;
    throw new Error("boom");
  });
  const answer = await serveAdmission(review(), options, { webhook: "broken" });
  assert.equal(calls, 1);
  assert.deepEqual(answer.response.status, { message: "boom", code: 500 });
  assert.equal(answer.response.allowed, false);
});

Deno.test("errors are prioritised: admission, permanent, temporary, arbitrary", async () => {
  const { registry, options } = setup();
  kopf.on.validate("kopfexamples", { registry }, function a() {
    throw new Error("arbitrary");
  });
  kopf.on.validate("kopfexamples", { registry }, function t() {
    throw new kopf.TemporaryError("temporary");
  });
  kopf.on.validate("kopfexamples", { registry }, function p() {
    throw new kopf.PermanentError("permanent");
  });
  kopf.on.validate("kopfexamples", { registry }, function adm() {
    throw new kopf.AdmissionError("admission", 400);
  });
  // No webhook hint: all handlers run; the admission error wins.
  let answer = await serveAdmission(review(), options);
  assert.deepEqual(answer.response.status, { message: "admission", code: 400 });
  // Without the admission error: the permanent one (code 500).
  answer = await serveAdmission(review(), {
    ...options,
    registry: onlyOf(registry, ["a", "t", "p"]),
  });
  assert.deepEqual(answer.response.status, { message: "permanent", code: 500 });
  answer = await serveAdmission(review(), { ...options, registry: onlyOf(registry, ["a", "t"]) });
  assert.deepEqual(answer.response.status, { message: "temporary", code: 500 });
});

function onlyOf(registry: kopf.OperatorRegistry, ids: string[]): kopf.OperatorRegistry {
  const fresh = new kopf.OperatorRegistry();
  for (const h of registry.webhookHandlers()) if (ids.includes(h.id)) fresh.registerWebhook(h);
  return fresh;
}

Deno.test("mutate: the patch becomes a base64 JSON Patch", async () => {
  const { registry, options } = setup();
  kopf.on.mutate("kopfexamples", { registry }, function defaults({ spec, patch }) {
    if (!("size" in spec)) patch.spec.size = 3;
    patch.spec.numbers = null;
    patch.metadata.labels.mutated = "yes";
  });
  const answer = await serveAdmission(review(), options, { webhook: "defaults" });
  assert.equal(answer.response.allowed, true);
  assert.equal(answer.response.patchType, "JSONPatch");
  assert.deepEqual(JSON.parse(atob(answer.response.patch)), [
    { op: "add", path: "/spec/size", value: 3 },
    { op: "remove", path: "/spec/numbers" },
    { op: "add", path: "/metadata/labels/mutated", value: "yes" },
  ]);
});

Deno.test("the webhook path picks the one handler", async () => {
  const { registry, options } = setup();
  const called: string[] = [];
  kopf.on.validate("kopfexamples", { registry }, function one() {
    called.push("one");
  });
  kopf.on.validate("kopfexamples", { registry }, function two() {
    called.push("two");
  });
  await serveAdmission(review(), options, { webhook: "two" });
  assert.deepEqual(called, ["two"]);
});

Deno.test("the context: body, spec, meta, old, dryrun, subresource, userinfo, headers, sslpeer", async () => {
  const { registry, options } = setup();
  let seen: AnyObject = {};
  kopf.on.validate("kopfexamples", { registry, param: 7 }, function look(ctx) {
    seen = ctx;
  });
  const oldObject = { metadata: { name: "kex1" }, spec: { numbers: [] } };
  await serveAdmission(
    review({ operation: "UPDATE", oldObject, dryRun: true }),
    options,
    { webhook: "look", headers: { authorization: "Bearer x" }, sslpeer: { subject: "CN" } },
  );
  assert.deepEqual(seen.spec, { numbers: [1, 2] });
  assert.equal(seen.meta.name, "kex1");
  assert.equal(seen.name, "kex1");
  assert.equal(seen.namespace, "default");
  assert.deepEqual(seen.old, oldObject);
  assert.equal(seen.dryrun, true);
  assert.equal(seen.subresource, undefined);
  assert.equal(seen.operation, "UPDATE");
  assert.deepEqual(seen.userinfo, { username: "admin", groups: ["system:masters"] });
  assert.deepEqual(seen.headers, { authorization: "Bearer x" });
  assert.deepEqual(seen.sslpeer, { subject: "CN" });
  assert.equal(seen.resource.plural, "kopfexamples");
  assert.equal(seen.param, 7);
  assert.ok(seen.logger);
  assert.ok(seen.memo instanceof kopf.Memo);
});

Deno.test("operations, subresources and filters select the handlers in-process", async () => {
  const { registry, options } = setup();
  const called: string[] = [];
  const mark = (id: string) => () => void called.push(id);
  kopf.on.validate("kopfexamples", { registry, id: "onCreate", operation: "CREATE" }, mark("c"));
  kopf.on.validate("kopfexamples", { registry, id: "onUpdate", operations: ["UPDATE"] }, mark("u"));
  kopf.on.validate("kopfexamples", { registry, id: "onStatus", subresource: "status" }, mark("s"));
  kopf.on.validate("kopfexamples", { registry, id: "onAny", subresource: "*" }, mark("any"));
  kopf.on.validate("kopfexamples", { registry, id: "labelled", labels: { app: "y" } }, mark("l"));
  kopf.on.validate("kopfexamples", { registry, id: "field", field: "spec.numbers" }, mark("f"));
  kopf.on.validate(
    "kopfexamples",
    { registry, id: "when", when: ({ dryrun }) => dryrun },
    mark("w"),
  );
  kopf.on.validate("pods", { registry, id: "pods" }, mark("p"));
  await serveAdmission(review(), options);
  assert.deepEqual(called, ["c", "any", "f"]);
  called.length = 0;
  await serveAdmission(
    review({ operation: "UPDATE", subResource: "status", dryRun: true }),
    options,
  );
  assert.deepEqual(called, ["s", "any"]);
});

Deno.test("mutating handlers skip deletions unless registered for deletions only", async () => {
  const { registry, options } = setup();
  const called: string[] = [];
  kopf.on.mutate("kopfexamples", { registry, id: "all" }, () => void called.push("all"));
  kopf.on.mutate("kopfexamples", { registry, id: "del", operation: "DELETE" }, () => {
    called.push("del");
  });
  const body = review().request.object;
  await serveAdmission(review({ operation: "DELETE", object: null, oldObject: body }), options);
  assert.deepEqual(called, ["del"]);
});

Deno.test("a request without userInfo or objects is a MissingDataError", async () => {
  const { options } = setup();
  await assert.rejects(
    () => serveAdmission(review({ userInfo: undefined }), options),
    kopf.MissingDataError,
  );
  await assert.rejects(
    () => serveAdmission(review({ object: null }), options),
    /Either old or new object is missing/,
  );
});

Deno.test("registration: admission options are checked by the option table", () => {
  const registry = new kopf.OperatorRegistry();
  assert.throws(
    () => kopf.on.validate("kopfexamples", { registry, retries: 3 } as never, () => {}),
    /kopf\.on\.validate\(\.\.\.\): the option "retries" is not for validating handlers/,
  );
  assert.throws(
    () => kopf.on.create("kopfexamples", { registry, sideEffects: true } as never, () => {}),
    /the option "sideEffects" is not for create handlers; it is for kopf\.on\.validate and kopf\.on\.mutate/,
  );
  assert.throws(
    () => kopf.on.mutate("kopfexamples", { registry, operation: "PATCH" } as never, () => {}),
    /operation must be one of "CREATE", "UPDATE", "DELETE", "CONNECT", not "PATCH"/,
  );
  assert.throws(
    () =>
      kopf.on.validate("kopfexamples", { registry, id: "x" }, () => {}) &&
      kopf.on.mutate("kopfexamples", { registry, id: "x" }, () => {}),
    kopf.DuplicateHandlerError,
  );
  kopf.on.mutate("kex", {
    registry,
    id: "full",
    operations: ["CREATE", "UPDATE"],
    subresource: "status",
    persistent: true,
    sideEffects: true,
    ignoreFailures: true,
  }, () => {});
  const h = registry.webhookHandlers("mutating").find((h) => h.id === "full")!;
  assert.deepEqual(
    [h.reason, h.operations, h.subresource, h.persistent, h.sideEffects, h.ignoreFailures],
    ["mutating", ["CREATE", "UPDATE"], "status", true, true, true],
  );
});

Deno.test("a request for a handler's DNS segment (a service path's) reaches that handler; an exact id wins", async () => {
  const { registry, options } = setup();
  const called: string[] = [];
  kopf.on.validate("kopfexamples", { registry }, function check_spec() {
    called.push("check_spec");
  });
  kopf.on.validate("kopfexamples", { registry, id: "Other_One" }, () => {
    called.push("Other_One");
  });
  kopf.on.validate("kopfexamples", { registry, id: "a_b" }, () => {
    called.push("a_b");
  });
  kopf.on.validate("kopfexamples", { registry, id: "a-b" }, () => {
    called.push("a-b");
  });
  for (
    const [webhook, expected] of [
      ["check-spec", ["check_spec"]],
      ["check_spec", ["check_spec"]],
      ["other-one", ["Other_One"]],
      ["a-b", ["a-b"]], // the exact id, not a_b's segment
      ["a_b", ["a_b"]],
      ["nothing", []],
    ] as const
  ) {
    called.length = 0;
    const answer = await serveAdmission(review(), options, { webhook, reason: "validating" });
    assert.equal(answer.response.allowed, true, webhook);
    assert.deepEqual(called, expected, webhook);
  }
});
