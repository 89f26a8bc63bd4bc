/**
 * CRD schemas checked as kube-apiserver checks them, over real HTTP and with
 * kubectl: keywords of the wrong JSON type are a 400 (the Go decoder's
 * message), what v1 does not support and patterns that do not compile are a
 * 422 naming the field; patterns are enforced on custom objects (RE2 syntax);
 * CRDs whose names another CRD of the group holds are not accepted, not
 * established and not served.
 *
 * @module
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { type Answer, call } from "./_http.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const ROOT = "spec.versions[0].schema.openAPIV3Schema";
const CANNOT = 'CustomResourceDefinition in version "v1" cannot be handled as a ' +
  "CustomResourceDefinition: json: cannot unmarshal";

/** A CRD `things.example.com` with the given schema (or names). */
function crd(
  openAPIV3Schema: unknown,
  names: Record<string, unknown> = { plural: "things", kind: "Thing" },
) {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${names.plural}.example.com` },
    spec: {
      group: "example.com",
      scope: "Namespaced",
      names,
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema } }],
    },
  };
}

/** A schema whose `spec.x` has the given keywords. */
const withX = (x: Record<string, unknown>) => ({
  type: "object",
  properties: { spec: { type: "object", properties: { x: { type: "string", ...x } } } },
});

Deno.test("CRD schema: keywords of the wrong JSON type are a 400 with the Go decoder's message, and nothing is stored", async () => {
  await using api = await startApiServer();
  const refused = async (schema: unknown): Promise<Answer> => {
    const r = await call(api.url, "POST", CRDS, crd(schema));
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.reason, "BadRequest");
    return r;
  };
  const props = await refused({ type: "object", properties: "nope" });
  assert.equal(
    props.body.message,
    `${CANNOT} string into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties of type map[string]v1.JSONSchemaProps`,
  );
  assert.equal((await call(api.url, "GET", `${CRDS}/things.example.com`)).status, 404);

  const nested = await refused({ type: "object", properties: { spec: "string" } });
  assert.equal(
    nested.body.message,
    `${CANNOT} string into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties of type v1.JSONSchemaProps`,
  );
  const required = await refused({
    type: "object",
    properties: { spec: { type: "object", required: "x" } },
  });
  assert.equal(
    required.body.message,
    `${CANNOT} string into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.required of type []string`,
  );
  const minLength = await refused(withX({ minLength: 1.5 }));
  assert.match(
    minLength.body.message,
    /cannot unmarshal number 1\.5 into .*\.minLength of type int64$/,
  );
  const minimum = await refused(withX({ type: "integer", minimum: "0" }));
  assert.match(minimum.body.message, /cannot unmarshal string into .*\.minimum of type float64$/);
  const enumeration = await refused(withX({ enum: "a" }));
  assert.match(enumeration.body.message, /\.enum of type \[\]v1\.JSON$/);
  const type = await refused(withX({ type: 5 }));
  assert.equal(
    type.body.message,
    `${CANNOT} number into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.properties.type of type string`,
  );
  const items = await refused({ type: "object", properties: { l: { type: "array", items: "x" } } });
  assert.equal(
    items.body.message,
    'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: items must be either an object or an array',
  );
  const pattern = await refused(withX({ pattern: 1 }));
  assert.match(pattern.body.message, /\.pattern of type string$/);
});

Deno.test("CRD schema: a pattern that does not compile is a 422 naming the field; RE2-only syntax is refused", async () => {
  await using api = await startApiServer();
  const r = await call(api.url, "POST", CRDS, crd(withX({ pattern: '(["' })));
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.equal(r.body.reason, "Invalid");
  const [cause, ...rest] = r.body.details.causes;
  assert.deepEqual(rest, []);
  assert.equal(cause.reason, "FieldValueInvalid");
  assert.equal(cause.field, `${ROOT}.properties[spec].properties[x].pattern`);
  assert.ok(
    cause.message.startsWith(
      `Invalid value: "([\\"": must be a valid regular expression, but isn't: error parsing regexp: `,
    ),
    cause.message,
  );
  assert.ok(
    r.body.message.startsWith(
      `CustomResourceDefinition.apiextensions.k8s.io "things.example.com" is invalid: ${ROOT}.properties[spec].properties[x].pattern: Invalid value:`,
    ),
    r.body.message,
  );
  // Under a junctor too; and Go's RE2 has no lookarounds nor backreferences.
  const inAllOf = await call(
    api.url,
    "POST",
    CRDS,
    crd({
      type: "object",
      properties: {
        spec: { type: "object", allOf: [{ properties: { y: { pattern: "a(?=b)" } } }] },
      },
    }),
  );
  assert.equal(inAllOf.status, 422);
  assert.deepEqual(inAllOf.body.details.causes, [{
    reason: "FieldValueInvalid",
    field: `${ROOT}.properties[spec].allOf[0].properties[y].pattern`,
    message:
      'Invalid value: "a(?=b)": must be a valid regular expression, but isn\'t: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
  }]);
  const backref = await call(api.url, "POST", CRDS, crd(withX({ pattern: "(a)\\1" })));
  assert.equal(backref.status, 422);
  assert.match(backref.body.details.causes[0].message, /invalid escape sequence: `\\1`$/);
});

Deno.test("CRD schema: patterns are enforced on custom objects, with kube-apiserver's message (RE2 flags too)", async () => {
  await using api = await startApiServer();
  const schema = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: {
          x: { type: "string", pattern: "^a+$" },
          y: { type: "string", pattern: "(?i)^ab\\z" },
          z: { type: "string", pattern: "^[[:digit:]]+$" },
        },
      },
    },
  };
  assert.equal((await call(api.url, "POST", CRDS, crd(schema))).status, 201);
  const path = "/apis/example.com/v1/namespaces/default/things";
  const thing = (name: string, spec: unknown) => ({
    apiVersion: "example.com/v1",
    kind: "Thing",
    metadata: { name },
    spec,
  });
  const bad = await call(api.url, "POST", path, thing("t1", { x: "ab", y: "abc", z: "1a" }));
  assert.equal(bad.status, 422, JSON.stringify(bad.body));
  assert.deepEqual(bad.body.details.causes, [
    {
      reason: "FieldValueInvalid",
      field: "spec.x",
      message: `Invalid value: "ab": spec.x in body should match '^a+$'`,
    },
    {
      reason: "FieldValueInvalid",
      field: "spec.y",
      message: `Invalid value: "abc": spec.y in body should match '(?i)^ab\\z'`,
    },
    {
      reason: "FieldValueInvalid",
      field: "spec.z",
      message: `Invalid value: "1a": spec.z in body should match '^[[:digit:]]+$'`,
    },
  ]);
  const good = await call(api.url, "POST", path, thing("t2", { x: "aaa", y: "AB", z: "42" }));
  assert.equal(good.status, 201, JSON.stringify(good.body));
  assert.deepEqual(good.body.spec, { x: "aaa", y: "AB", z: "42" });
});

Deno.test("CRD schema: what apiextensions.k8s.io/v1 does not support is a 422 naming the field", async () => {
  await using api = await startApiServer();
  const causes = async (schema: unknown) => {
    const r = await call(api.url, "POST", CRDS, crd(schema));
    assert.equal(r.status, 422, JSON.stringify(r.body));
    return r.body.details.causes.map((c: { field: string; message: string }) =>
      `${c.field}: ${c.message}`
    );
  };
  const s = `${ROOT}.properties[spec]`;
  const obj = (extra: Record<string, unknown>) => ({
    type: "object",
    properties: { spec: { type: "object", ...extra } },
  });
  assert.deepEqual(await causes(obj({ additionalItems: false })), [
    `${s}.additionalItems: Forbidden: additionalItems is not supported`,
  ]);
  assert.deepEqual(await causes(obj({ patternProperties: { "^a": { type: "string" } } })), [
    `${s}.patternProperties: Forbidden: patternProperties is not supported`,
  ]);
  assert.deepEqual(await causes(obj({ definitions: { a: { type: "string" } } })), [
    `${s}.definitions: Forbidden: definitions are not supported`,
  ]);
  assert.deepEqual(await causes(obj({ dependencies: { a: ["b"] } })), [
    `${s}.dependencies: Forbidden: dependencies are not supported`,
  ]);
  assert.deepEqual(await causes(obj({ id: "x" })), [`${s}.id: Forbidden: id is not supported`]);
  assert.deepEqual(
    await causes({
      type: "object",
      properties: { l: { type: "array", items: [{ type: "string" }] } },
    }),
    [
      `${ROOT}.properties[l].items: Forbidden: items must be a schema object and not an array`,
    ],
  );
  assert.deepEqual(await causes(obj({ "x-kubernetes-preserve-unknown-fields": false })), [
    `${s}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`,
  ]);
  assert.deepEqual(
    await causes({
      type: "object",
      properties: {
        l: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "bag" },
      },
    }),
    [
      `${ROOT}.properties[l].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
    ],
  );
  assert.deepEqual(
    await causes({
      type: "object",
      properties: {
        l: { type: "array", items: { type: "object" }, "x-kubernetes-list-type": "map" },
      },
    }),
    [
      `${ROOT}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
    ],
  );
  // The brief's example: a field without a type.
  assert.deepEqual(await causes(obj({ properties: { x: { minLength: 1 } } })), [
    `${s}.properties[x].type: Required value: must not be empty for specified object fields`,
  ]);
});

Deno.test("CRD names: a CRD claiming names another CRD of the group holds is not accepted, not established, not served", async () => {
  await using api = await startApiServer();
  const schema = { type: "object", "x-kubernetes-preserve-unknown-fields": true };
  const first = await call(
    api.url,
    "POST",
    CRDS,
    crd(schema, { plural: "widgets", singular: "widget", kind: "Widget", shortNames: ["wd"] }),
  );
  assert.equal(first.status, 201);
  const condition = (obj: { status: { conditions: Array<{ type: string }> } }, type: string) => {
    const c = obj.status.conditions.find((c) => c.type === type) as Record<string, string>;
    return { status: c.status, reason: c.reason, message: c.message };
  };
  assert.deepEqual(condition(first.body, "NamesAccepted"), {
    status: "True",
    reason: "NoConflicts",
    message: "no conflicts found",
  });

  const cases: Array<[Record<string, unknown>, string, string]> = [
    // The last conflict found names the reason (kind WidgetList, defaulted, would be ListKindConflict).
    [
      { plural: "gadgets", kind: "Widget", listKind: "GadgetList" },
      "KindConflict",
      '"Widget" is already in use',
    ],
    [
      { plural: "gizmos", kind: "Gizmo", shortNames: ["wd"] },
      "ShortNamesConflict",
      '"wd" is already in use',
    ],
    [{ plural: "widget", kind: "Thingy" }, "PluralConflict", '"widget" is already in use'],
    [
      { plural: "doodads", singular: "wd", kind: "Doodad" },
      "SingularConflict",
      '"wd" is already in use',
    ],
  ];
  for (const [names, reason, message] of cases) {
    const r = await call(api.url, "POST", CRDS, crd(schema, names));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(condition(r.body, "NamesAccepted"), { status: "False", reason, message });
    assert.deepEqual(condition(r.body, "Established"), {
      status: "False",
      reason: "NotAccepted",
      message: "not all names are accepted",
    });
    const plural = names.plural as string;
    const served = await call(api.url, "GET", `/apis/example.com/v1/namespaces/default/${plural}`);
    assert.equal(served.status, 404, `${plural} must not be served`);
  }
  const discovery = await call(api.url, "GET", "/apis/example.com/v1");
  assert.deepEqual(
    discovery.body.resources.map((r: { name: string }) => r.name),
    ["widgets"],
  );
  // The first CRD is untouched and still served.
  const list = await call(api.url, "GET", "/apis/example.com/v1/namespaces/default/widgets");
  assert.equal(list.status, 200);
  // Renaming the kind to a free one is accepted on update: established and served.
  const gadgets = (await call(api.url, "GET", `${CRDS}/gadgets.example.com`)).body;
  gadgets.spec.names.kind = "Gadget";
  // Its singular was defaulted from the kind it had ("widget", taken), as kube defaults it.
  assert.equal(gadgets.spec.names.singular, "widget");
  gadgets.spec.names.singular = "gadget";
  const renamed = await call(api.url, "PUT", `${CRDS}/gadgets.example.com`, gadgets);
  assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
  assert.equal(condition(renamed.body, "NamesAccepted").status, "True");
  assert.equal(condition(renamed.body, "Established").status, "True");
  assert.equal(
    (await call(api.url, "GET", "/apis/example.com/v1/namespaces/default/gadgets")).status,
    200,
  );
  // Once the holder of a name is gone, the CRDs that wanted it are judged again and served.
  assert.equal((await call(api.url, "DELETE", `${CRDS}/widgets.example.com`)).status, 200);
  const deadline = Date.now() + 5_000;
  let gizmos = (await call(api.url, "GET", `${CRDS}/gizmos.example.com`)).body;
  while (condition(gizmos, "Established").status !== "True") {
    assert.ok(
      Date.now() < deadline,
      `gizmos not established 5 s after widgets went: ${JSON.stringify(gizmos.status)}`,
    );
    await new Promise((r) => setTimeout(r, 50));
    gizmos = (await call(api.url, "GET", `${CRDS}/gizmos.example.com`)).body;
  }
  assert.deepEqual(condition(gizmos, "NamesAccepted"), {
    status: "True",
    reason: "NoConflicts",
    message: "no conflicts found",
  });
  assert.deepEqual(gizmos.status.acceptedNames.shortNames, ["wd"]);
  // Judged in turn (here in creation order): gizmos took "wd" first, doodads still wants it.
  const doodads = (await call(api.url, "GET", `${CRDS}/doodads.example.com`)).body;
  assert.deepEqual(condition(doodads, "NamesAccepted"), {
    status: "False",
    reason: "SingularConflict",
    message: '"wd" is already in use',
  });
  assert.equal(
    (await call(api.url, "GET", "/apis/example.com/v1/namespaces/default/gizmos")).status,
    200,
  );
});

testEachKubectl(
  ["1.33"],
  `kubectl apply of a CRD with a bad schema shows the server's error`,
  async (binary) => {
    await using api = await startApiServer();
    await using kubectl = await Kubectl.create(binary, api.kubeconfig.path);
    const pattern = await kubectl.fails(["apply", "-f", "-"], {
      stdin: JSON.stringify(crd(withX({ pattern: '(["' }))),
    });
    assert.match(
      pattern.stderr,
      new RegExp(
        `The CustomResourceDefinition "things.example.com" is invalid: ${
          ROOT.replaceAll(/[.[\]]/g, "\\$&")
        }\\.properties\\[spec\\]\\.properties\\[x\\]\\.pattern: Invalid value: .*must be a valid regular expression`,
      ),
    );
    const props = await kubectl.fails(["apply", "-f", "-"], {
      stdin: JSON.stringify(crd({ type: "object", properties: "nope" })),
    });
    assert.match(
      props.stderr,
      /Error from server \(BadRequest\).*cannot unmarshal string into Go struct field JSONSchemaProps\.spec\.versions\.schema\.openAPIV3Schema\.properties of type map\[string\]v1\.JSONSchemaProps/,
    );
  },
);
