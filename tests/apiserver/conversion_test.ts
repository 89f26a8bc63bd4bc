/**
 * CRD version conversion through a webhook on the embedded API server: an
 * in-test HTTPS conversion webhook (its own CA) renames `spec.field` (v1) to
 * `spec.renamed` (v2); objects are stored at v1 and served at both versions,
 * for reads, writes, lists and watches, as kube-apiserver does; kubectl 1.27
 * and 1.33 get both versions.
 *
 * @module
 */

import { type RunningApiServer, startApiServer } from "../../testing.ts";
import type { TlsBundle } from "../../src/apiserver/shared/tls.ts";
import { ReviewServer } from "./_review_server.ts";
import { call as http, readEvents } from "./_http.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

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

/** Converts between v1 (`spec.field`) and v2 (`spec.renamed`). */
function convert(obj: Json, desired: string): Json {
  const spec = { ...obj.spec };
  if (desired === "kopf.dev/v2" && "field" in spec) {
    spec.renamed = spec.field;
    delete spec.field;
  }
  if (desired === "kopf.dev/v1" && "renamed" in spec) {
    spec.field = spec.renamed;
    delete spec.renamed;
  }
  return { ...obj, apiVersion: desired, spec };
}

/** An HTTPS conversion webhook: records the reviews; converts unless told to fail. */
class Converter extends ReviewServer {
  fail: string | undefined;

  private constructor(tls: TlsBundle) {
    super(tls, (review) => {
      const { uid, desiredAPIVersion, objects } = review.request;
      const response = this.fail ? { uid, result: { status: "Failure", message: this.fail } } : {
        uid,
        result: { status: "Success" },
        convertedObjects: objects.map((o: Json) => convert(o, desiredAPIVersion)),
      };
      return { apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview", response };
    });
  }

  static async start(): Promise<Converter> {
    return new Converter(await ReviewServer.certificates());
  }

  get url(): string {
    return `${this.origin}/convert`;
  }
}

function call(
  api: RunningApiServer,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<{ status: number; body: Json }> {
  return http(api.url, method, path, body, contentType);
}

function crd(conversion?: unknown): Json {
  const schema = (field: string) => ({
    openAPIV3Schema: {
      type: "object",
      properties: {
        spec: { type: "object", properties: { [field]: { type: "string" } } },
        status: { type: "object", x_kubernetes_preserve_unknown_fields: true },
      },
    },
  });
  const fix = (s: Json) => JSON.parse(JSON.stringify(s).replaceAll("x_kubernetes", "x-kubernetes"));
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "kopfexamples.kopf.dev" },
    spec: {
      group: "kopf.dev",
      scope: "Namespaced",
      names: { plural: "kopfexamples", singular: "kopfexample", kind: "KopfExample" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: fix(schema("field")),
          additionalPrinterColumns: [{ name: "Field", type: "string", jsonPath: ".spec.field" }],
        },
        {
          name: "v2",
          served: true,
          storage: false,
          schema: fix(schema("renamed")),
          additionalPrinterColumns: [
            { name: "Renamed", type: "string", jsonPath: ".spec.renamed" },
          ],
        },
      ],
      ...(conversion ? { conversion } : {}),
    },
  };
}

function webhookConversion(hook: { url: string; caBundle: string }): Json {
  return {
    strategy: "Webhook",
    webhook: {
      clientConfig: { url: hook.url, caBundle: hook.caBundle },
      conversionReviewVersions: ["v1"],
    },
  };
}

async function setUp(api: RunningApiServer, conversion?: unknown): Promise<void> {
  const r = await call(
    api,
    "POST",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    crd(conversion),
  );
  assertEquals(r.status, 201, JSON.stringify(r.body));
}

function kex(version: string, name: string, spec: Json): Json {
  return { apiVersion: `kopf.dev/${version}`, kind: "KopfExample", metadata: { name }, spec };
}

function stored(api: RunningApiServer, name: string): Json {
  return api.server.store.get("kopfexamples.kopf.dev", "default", name);
}

Deno.test("conversion: spec.conversion is validated with kube-apiserver's wording", async () => {
  await using api = await startApiServer();
  const cases: Array<[unknown, string]> = [
    [
      { strategy: "Sometimes" },
      'spec.conversion.strategy: Unsupported value: "Sometimes": supported values: "None", "Webhook"',
    ],
    [
      { strategy: "Webhook" },
      "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
    ],
    [
      {
        strategy: "Webhook",
        webhook: { clientConfig: { url: "http://x/convert" }, conversionReviewVersions: ["v1"] },
      },
      `spec.conversion.webhookClientConfig.url: Invalid value: "http://x/convert": 'https' is the only allowed URL scheme`,
    ],
    [
      { strategy: "Webhook", webhook: { clientConfig: { url: "https://x/convert" } } },
      "spec.conversion.conversionReviewVersions: Required value: must include at least one of v1, v1beta1",
    ],
    [
      { strategy: "None", webhook: { clientConfig: { url: "https://x/convert" } } },
      "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
    ],
  ];
  for (const [conversion, message] of cases) {
    const r = await call(
      api,
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      crd(conversion),
    );
    assertEquals(r.status, 422, JSON.stringify(conversion));
    assert(
      r.body.message.includes(message),
      `expected ${message}\n in ${r.body.message}`,
    );
  }
});

Deno.test("conversion: objects stored at v1, read and written at v2 through the webhook", async () => {
  await using api = await startApiServer();
  await using hook = await Converter.start();
  await setUp(api, webhookConversion(hook));

  // Created at v1: stored at v1; read at v2 through one review.
  let r = await call(api, "POST", V1, kex("v1", "a", { field: "one" }));
  assertEquals(r.status, 201, JSON.stringify(r.body));
  assertEquals(r.body.spec, { field: "one" });
  assertEquals(hook.reviews.length, 0, "a v1 write of a v1-stored object is not sent");
  r = await call(api, "GET", `${V2}/a`);
  assertEquals(r.status, 200, JSON.stringify(r.body));
  assertEquals([r.body.apiVersion, r.body.spec], ["kopf.dev/v2", { renamed: "one" }]);
  assertEquals(hook.reviews.length, 1);
  const review = hook.reviews[0];
  assertEquals(review.apiVersion, "apiextensions.k8s.io/v1");
  assertEquals(review.kind, "ConversionReview");
  assertEquals(review.request.desiredAPIVersion, "kopf.dev/v2");
  assertEquals(review.request.objects.map((o: Json) => o.spec), [{ field: "one" }]);
  assert(review.path.endsWith("/convert?timeout=30s"), review.path);

  // Created at v2: converted to v1 to be stored; the answer is at v2.
  hook.reviews.length = 0;
  r = await call(api, "POST", V2, kex("v2", "b", { renamed: "two" }));
  assertEquals(r.status, 201, JSON.stringify(r.body));
  assertEquals([r.body.apiVersion, r.body.spec], ["kopf.dev/v2", { renamed: "two" }]);
  assertEquals(stored(api, "b").apiVersion, "kopf.dev/v1");
  assertEquals(stored(api, "b").spec, { field: "two" });
  assertEquals(stored(api, "b").metadata.uid, r.body.metadata.uid);
  assertEquals(
    hook.reviews.map((x) => x.request.desiredAPIVersion),
    ["kopf.dev/v1", "kopf.dev/v2"],
  );
  r = await call(api, "GET", `${V1}/b`);
  assertEquals([r.body.apiVersion, r.body.spec], ["kopf.dev/v1", { field: "two" }]);

  // A merge patch at v2 works on the v2 form of the stored object.
  r = await call(api, "PATCH", `${V2}/a`, { spec: { renamed: "uno" } }, MERGE);
  assertEquals(r.status, 200, JSON.stringify(r.body));
  assertEquals(r.body.spec, { renamed: "uno" });
  assertEquals(r.body.metadata.generation, 2);
  assertEquals(stored(api, "a").spec, { field: "uno" });

  // PUT at v2 with the resourceVersion read at v2.
  const got = (await call(api, "GET", `${V2}/b`)).body;
  r = await call(api, "PUT", `${V2}/b`, { ...got, spec: { renamed: "dos" } });
  assertEquals(r.status, 200, JSON.stringify(r.body));
  assertEquals(stored(api, "b").spec, { field: "dos" });

  // A list at v2 of objects stored at v1 and (from before) at v2: one review with only the v1 ones.
  await call(api, "POST", V1, kex("v1", "c", { field: "three" }));
  hook.reviews.length = 0;
  r = await call(api, "GET", V2);
  assertEquals(r.status, 200, JSON.stringify(r.body));
  assertEquals(r.body.items.map((o: Json) => [o.metadata.name, o.apiVersion, o.spec]), [
    ["a", "kopf.dev/v2", { renamed: "uno" }],
    ["b", "kopf.dev/v2", { renamed: "dos" }],
    ["c", "kopf.dev/v2", { renamed: "three" }],
  ]);
  assertEquals(hook.reviews.length, 1, "one review per list");
  assertEquals(hook.reviews[0].request.objects.length, 3);
  hook.reviews.length = 0;
  r = await call(api, "GET", V1);
  assertEquals(r.body.items.map((o: Json) => o.spec.field), ["uno", "dos", "three"]);
  assertEquals(hook.reviews.length, 0, "objects already at v1 are not sent");

  // Delete at v2 answers at v2.
  r = await call(api, "DELETE", `${V2}/c`);
  assertEquals([r.status, r.body.apiVersion, r.body.spec], [200, "kopf.dev/v2", {
    renamed: "three",
  }]);
});

Deno.test("conversion: watches of either version see the other's writes", async () => {
  await using api = await startApiServer();
  await using hook = await Converter.start();
  await setUp(api, webhookConversion(hook));
  const rv = (await call(api, "GET", V1)).body.metadata.resourceVersion;
  const w1 = await fetch(`${api.url}${V1}?watch=true&resourceVersion=${rv}`);
  const w2 = await fetch(`${api.url}${V2}?watch=true&resourceVersion=${rv}`);
  const events1 = readEvents(w1, 3);
  const events2 = readEvents(w2, 3);
  await call(api, "POST", V2, kex("v2", "a", { renamed: "from-v2" }));
  await call(api, "POST", V1, kex("v1", "b", { field: "from-v1" }));
  await call(api, "DELETE", `${V2}/a`);
  const e1 = await events1, e2 = await events2;
  assertEquals(e1.map((e: Json) => [e.type, e.object.apiVersion, e.object.spec]), [
    ["ADDED", "kopf.dev/v1", { field: "from-v2" }],
    ["ADDED", "kopf.dev/v1", { field: "from-v1" }],
    ["DELETED", "kopf.dev/v1", { field: "from-v2" }],
  ]);
  assertEquals(e2.map((e: Json) => [e.type, e.object.apiVersion, e.object.spec]), [
    ["ADDED", "kopf.dev/v2", { renamed: "from-v2" }],
    ["ADDED", "kopf.dev/v2", { renamed: "from-v1" }],
    ["DELETED", "kopf.dev/v2", { renamed: "from-v2" }],
  ]);
});

Deno.test("conversion: a webhook that is down or fails answers as kube-apiserver", async () => {
  await using api = await startApiServer();
  const hook = await Converter.start();
  await setUp(api, webhookConversion(hook));
  await call(api, "POST", V1, kex("v1", "a", { field: "one" }));
  hook.fail = "no way to convert this";
  let r = await call(api, "GET", `${V2}/a`);
  assertEquals(r.status, 500);
  assertEquals(
    r.body.message,
    "conversion webhook for kopf.dev/v1, Kind=KopfExample failed: no way to convert this",
  );
  assertEquals(r.body.reason, undefined);
  const url = hook.url;
  await hook[Symbol.asyncDispose]();
  const port = new URL(url).port;
  r = await call(api, "GET", `${V2}/a`);
  assertEquals(r.status, 500);
  assertEquals(
    r.body.message,
    `conversion webhook for kopf.dev/v1, Kind=KopfExample failed: Post "${url}?timeout=30s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
  );
  r = await call(api, "GET", V2);
  assertEquals(r.status, 500);
  assert(
    r.body.message.startsWith(
      "conversion webhook for kopf.dev/v1, Kind=KopfExampleList failed: Post",
    ),
    r.body.message,
  );
  r = await call(api, "POST", V2, kex("v2", "b", { renamed: "x" }));
  assertEquals(r.status, 500);
  assert(
    r.body.message.startsWith("conversion webhook for kopf.dev/v2, Kind=KopfExample failed: Post"),
    r.body.message,
  );
  assertEquals(stored(api, "b"), undefined, "nothing stored");
  // v1 (the storage version) still works.
  r = await call(api, "GET", `${V1}/a`);
  assertEquals([r.status, r.body.spec], [200, { field: "one" }]);
});

Deno.test("conversion: strategy None still stores once and rewrites apiVersion", async () => {
  await using api = await startApiServer();
  await setUp(api);
  await call(api, "POST", V1, kex("v1", "a", { field: "one" }));
  const r = await call(api, "GET", `${V2}/a`);
  assertEquals(r.status, 200);
  assertEquals(r.body.apiVersion, "kopf.dev/v2");
});

testEachKubectl(
  ["1.27", "1.33"],
  `kubectl gets both versions of a converted resource`,
  async (binary) => {
    await using api = await startApiServer();
    await using hook = await Converter.start();
    await using kubectl = await Kubectl.create(binary, api.kubeconfig.path);
    await setUp(api, webhookConversion(hook));
    await kubectl.run(["create", "-f", "-"], {
      stdin: JSON.stringify(kex("v2", "made-at-v2", { renamed: "hello" })),
    });
    const v1 = await kubectl.run(["get", "kopfexamples.v1.kopf.dev", "made-at-v2"]);
    assert(/made-at-v2\s+hello/.test(v1.stdout) && v1.stdout.includes("FIELD"), v1.stdout);
    const v2 = await kubectl.run(["get", "kopfexamples.v2.kopf.dev", "made-at-v2"]);
    assert(/made-at-v2\s+hello/.test(v2.stdout) && v2.stdout.includes("RENAMED"), v2.stdout);
    const yaml = await kubectl.run(["get", "kopfexamples.v2.kopf.dev", "-o", "json"]);
    assertEquals(JSON.parse(yaml.stdout).items[0].spec, { renamed: "hello" });
    const y1 = await kubectl.run(["get", "kopfexamples.v1.kopf.dev", "-o", "json"]);
    assertEquals(JSON.parse(y1.stdout).items[0].spec, { field: "hello" });
  },
);
