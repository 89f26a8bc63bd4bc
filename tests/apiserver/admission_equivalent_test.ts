/**
 * Admission webhooks with `matchPolicy: Equivalent` across the versions of a
 * CRD, as kube-apiserver calls them: a webhook whose rules name only v2 is
 * called for a write at v1 with the objects converted to v2 (the CRD's
 * conversion: strategy None rewrites the apiVersion, strategy Webhook asks
 * the in-test converter, which renames `spec.field` (v1) to `spec.renamed`
 * (v2)); the review says `kind` v2 and `requestKind` v1; a mutation made at
 * v2 is converted back before the write goes on. `matchPolicy: Exact` and
 * exact matches are not converted.
 *
 * @module
 */

import { type RunningApiServer, startApiServer } from "../../testing.ts";
import type { TlsBundle } from "../../src/apiserver/shared/tls.ts";
import { ReviewServer } from "./_review_server.ts";
import { call as http } from "./_http.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function assert(condition: unknown, message = "assertion failed"): asserts condition {
  if (!condition) throw new Error(message);
}

function assertEquals(actual: unknown, expected: unknown, what = ""): void {
  const a = JSON.stringify(actual), e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what ? what + ": " : ""}expected ${e}\n           got ${a}`);
}

const V1 = "/apis/kopf.dev/v1/namespaces/default/kopfexamples";
const V2 = "/apis/kopf.dev/v2/namespaces/default/kopfexamples";
const MERGE = "application/merge-patch+json";
const TLS: TlsBundle = await ReviewServer.certificates();

/** An HTTPS admission webhook: records the reviews; answers with `answer` (allowed by default). */
class Webhook extends ReviewServer {
  answer: (request: Json) => Record<string, unknown> = () => ({ allowed: true });

  constructor() {
    super(TLS, (review) => ({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: review.request.uid, ...this.answer(review.request) },
    }));
  }

  get requests(): Json[] {
    return this.reviews.map((r) => r.request);
  }
}

/** An HTTPS conversion webhook between v1 (`spec.field`) and v2 (`spec.renamed`). */
class Converter extends ReviewServer {
  fail: string | undefined;

  constructor() {
    super(TLS, (review) => {
      const { uid, desiredAPIVersion, objects } = review.request;
      const response = this.fail ? { uid, result: { status: "Failure", message: this.fail } } : {
        uid,
        result: { status: "Success" },
        convertedObjects: objects.map((o: Json) => convert(o, desiredAPIVersion)),
      };
      return { apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview", response };
    });
  }

  /** The CRD's `spec.conversion` pointing here. */
  get conversion(): Json {
    return {
      strategy: "Webhook",
      webhook: {
        clientConfig: { url: `${this.origin}/convert`, caBundle: this.caBundle },
        conversionReviewVersions: ["v1"],
      },
    };
  }
}

function convert(obj: Json, desired: string): Json {
  const { field, renamed, ...spec } = obj.spec ?? {};
  if (desired === "kopf.dev/v2" && field !== undefined) spec.renamed = field;
  if (desired === "kopf.dev/v1" && renamed !== undefined) spec.field = renamed;
  return { ...obj, apiVersion: desired, spec };
}

function call(api: RunningApiServer, method: string, path: string, body?: unknown, type?: string) {
  return http(api.url, method, path, body, type);
}

/** A CRD serving v1 (storage, `spec.field`) and v2 (`spec.renamed`); None keeps both fields. */
async function setUpCrd(api: RunningApiServer, conversion: Json): Promise<void> {
  const version = (name: string, fields: string[]) => ({
    name,
    served: true,
    storage: name === "v1",
    schema: {
      openAPIV3Schema: {
        type: "object",
        properties: {
          spec: {
            type: "object",
            properties: Object.fromEntries(fields.map((f) => [f, { type: "string" }])),
          },
        },
      },
    },
  });
  const webhook = conversion.strategy === "Webhook";
  const r = await call(api, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "kopfexamples.kopf.dev" },
    spec: {
      group: "kopf.dev",
      scope: "Namespaced",
      names: { plural: "kopfexamples", singular: "kopfexample", kind: "KopfExample" },
      versions: [
        version("v1", webhook ? ["field"] : ["field", "renamed"]),
        version("v2", webhook ? ["renamed"] : ["field", "renamed"]),
      ],
      conversion,
    },
  });
  assertEquals(r.status, 201, JSON.stringify(r.body));
}

/** Stores a webhook configuration with one webhook for kopfexamples at `versions`. */
async function configure(
  api: RunningApiServer,
  kind: "Validating" | "Mutating",
  hook: Webhook,
  versions: string[],
  extra: Json = {},
): Promise<void> {
  const plural = `${kind.toLowerCase()}webhookconfigurations`;
  const name = `${kind.toLowerCase()}.kopf.dev`;
  const r = await call(api, "POST", `/apis/admissionregistration.k8s.io/v1/${plural}`, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: [{
      name,
      clientConfig: { url: hook.origin, caBundle: hook.caBundle },
      rules: [{
        operations: ["CREATE", "UPDATE"],
        apiGroups: ["kopf.dev"],
        apiVersions: versions,
        resources: ["kopfexamples"],
      }],
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
      ...extra,
    }],
  });
  assertEquals(r.status, 201, JSON.stringify(r.body));
}

function kex(version: string, name: string, spec: Json): Json {
  return { apiVersion: `kopf.dev/${version}`, kind: "KopfExample", metadata: { name }, spec };
}

const kindAt = (version: string) => ({ group: "kopf.dev", version, kind: "KopfExample" });
const resourceAt = (version: string) => ({ group: "kopf.dev", version, resource: "kopfexamples" });

Deno.test("Equivalent (the default): a write at v1 reaches a v2-only validating webhook at v2; its denial refuses the write", async () => {
  await using api = await startApiServer();
  await using hook = new Webhook();
  await setUpCrd(api, { strategy: "None" });
  await configure(api, "Validating", hook, ["v2"]);
  hook.answer = (req) =>
    req.object.spec.field === "deny"
      ? { allowed: false, status: { code: 403, reason: "Forbidden", message: "no" } }
      : { allowed: true };

  let r = await call(api, "POST", V1, kex("v1", "a", { field: "ok" }));
  assertEquals(r.status, 201, JSON.stringify(r.body));
  assertEquals(r.body.apiVersion, "kopf.dev/v1");
  const [created] = hook.requests;
  assertEquals(created.kind, kindAt("v2"), "kind");
  assertEquals(created.resource, resourceAt("v2"), "resource");
  assertEquals(created.requestKind, kindAt("v1"), "requestKind");
  assertEquals(created.requestResource, resourceAt("v1"), "requestResource");
  assertEquals(created.object.apiVersion, "kopf.dev/v2");
  assertEquals(created.object.spec, { field: "ok" });

  // An update: the old object is at v2 too.
  r = await call(api, "PATCH", `${V1}/a`, { spec: { field: "changed" } }, MERGE);
  assertEquals(r.status, 200, JSON.stringify(r.body));
  const updated = hook.requests[1];
  assertEquals(updated.operation, "UPDATE");
  assertEquals([updated.object.apiVersion, updated.oldObject.apiVersion], [
    "kopf.dev/v2",
    "kopf.dev/v2",
  ]);
  assertEquals([updated.object.spec.field, updated.oldObject.spec.field], ["changed", "ok"]);

  assert(!("requestSubResource" in updated) && !("subResource" in updated), "no subresource");

  r = await call(api, "POST", V1, kex("v1", "b", { field: "deny" }));
  assertEquals(r.status, 403, JSON.stringify(r.body));
  assertEquals(r.body.message, 'admission webhook "validating.kopf.dev" denied the request: no');
  assertEquals((await call(api, "GET", `${V1}/b`)).status, 404);
});

Deno.test("Exact: a write at v1 does not reach a v2-only webhook; one at v2 does", async () => {
  await using api = await startApiServer();
  await using hook = new Webhook();
  await setUpCrd(api, { strategy: "None" });
  await configure(api, "Validating", hook, ["v2"], { matchPolicy: "Exact" });
  hook.answer = () => ({ allowed: false, status: { message: "no" } });

  const r = await call(api, "POST", V1, kex("v1", "a", { field: "x" }));
  assertEquals(r.status, 201, JSON.stringify(r.body));
  assertEquals(hook.requests.length, 0);
  assertEquals((await call(api, "POST", V2, kex("v2", "b", { field: "x" }))).status, 400);
  assertEquals(hook.requests.map((q) => q.requestKind.version), ["v2"]);
});

Deno.test("Equivalent with a conversion webhook: a write at v1 is mutated at v2, converted back and stored right", async () => {
  await using api = await startApiServer();
  await using converter = new Converter();
  await using mutating = new Webhook();
  await using validating = new Webhook();
  await setUpCrd(api, converter.conversion);
  await configure(api, "Mutating", mutating, ["v2"]);
  await configure(api, "Validating", validating, ["v2"]);
  const patch = [
    { op: "replace", path: "/spec/renamed", value: "mutated at v2" },
    { op: "add", path: "/metadata/labels", value: { mutated: "yes" } },
  ];
  mutating.answer = () => ({
    allowed: true,
    patchType: "JSONPatch",
    patch: btoa(JSON.stringify(patch)),
  });

  const r = await call(api, "POST", V1, kex("v1", "a", { field: "original" }));
  assertEquals(r.status, 201, JSON.stringify(r.body));
  assertEquals([r.body.apiVersion, r.body.spec], ["kopf.dev/v1", { field: "mutated at v2" }]);
  assertEquals(r.body.metadata.labels, { mutated: "yes" });

  const [mutate] = mutating.requests;
  assertEquals([mutate.kind, mutate.requestKind], [kindAt("v2"), kindAt("v1")]);
  assertEquals([mutate.object.apiVersion, mutate.object.spec], [
    "kopf.dev/v2",
    { renamed: "original" },
  ]);
  const [validate] = validating.requests;
  assertEquals([validate.kind, validate.requestKind], [kindAt("v2"), kindAt("v1")]);
  assertEquals([validate.object.apiVersion, validate.object.spec], [
    "kopf.dev/v2",
    { renamed: "mutated at v2" },
  ]);
  assertEquals(validate.object.metadata.labels, { mutated: "yes" });
  assert(validate.object.metadata.uid, "the validating webhook sees the object as stored");

  const at1 = await call(api, "GET", `${V1}/a`);
  assertEquals([at1.body.spec, at1.body.metadata.labels], [{ field: "mutated at v2" }, {
    mutated: "yes",
  }]);
  const at2 = await call(api, "GET", `${V2}/a`);
  assertEquals(at2.body.spec, { renamed: "mutated at v2" });
  const stored = api.server.store.get("kopfexamples.kopf.dev", "default", "a")!;
  assertEquals([stored.apiVersion, stored.spec], ["kopf.dev/v1", { field: "mutated at v2" }]);

  // A failed conversion for a webhook is a 500, whatever its failurePolicy.
  converter.fail = "cannot convert";
  const failed = await call(api, "POST", V1, kex("v1", "b", { field: "x" }));
  assertEquals(failed.status, 500, JSON.stringify(failed.body));
  assertEquals(
    failed.body.message,
    "Internal error occurred: conversion webhook for kopf.dev/v1, Kind=KopfExample failed: cannot convert",
  );
  assertEquals(failed.body.reason, "InternalError");
});

Deno.test("an exact-version match is not converted, even when a rule lists another version first", async () => {
  await using api = await startApiServer();
  await using converter = new Converter();
  await using mutating = new Webhook();
  await using validating = new Webhook();
  await setUpCrd(api, converter.conversion);
  await configure(api, "Mutating", mutating, ["v2", "v1"]);
  await configure(api, "Validating", validating, ["v2", "v1"]);

  const r = await call(api, "POST", V1, kex("v1", "a", { field: "x" }));
  assertEquals(r.status, 201, JSON.stringify(r.body));
  for (const request of [...mutating.requests, ...validating.requests]) {
    assertEquals([request.kind, request.requestKind], [kindAt("v1"), kindAt("v1")]);
    assertEquals([request.object.apiVersion, request.object.spec], ["kopf.dev/v1", { field: "x" }]);
  }
  assertEquals([mutating.requests.length, validating.requests.length], [1, 1]);
  assertEquals(converter.reviews.length, 0, "no conversion");
});
