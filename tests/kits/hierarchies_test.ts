import assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { load as parseYaml } from "js-yaml";
import {
  adjustNamespace,
  adopt,
  appendOwnerReference,
  buildObjectReference,
  buildOwnerReference,
  harmonizeNaming,
  label,
  removeOwnerReference,
} from "../../src/kits/hierarchies.ts";
import { handlerScope } from "../../src/core/actions/execution.ts";
import * as kopf from "../../mod.ts";
import { setup } from "../core/_handling.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const OWNER = {
  apiVersion: "kopf.dev/v1",
  kind: "KopfExample",
  metadata: {
    name: "kopf-example-1",
    uid: "6b931859-5d50-4b5c-956b-ea2fed0d1058",
    namespace: "default",
    labels: { somelabel: "somevalue" },
  },
};

const REF = {
  apiVersion: "kopf.dev/v1",
  kind: "KopfExample",
  name: "kopf-example-1",
  uid: "6b931859-5d50-4b5c-956b-ea2fed0d1058",
  controller: true,
  blockOwnerDeletion: true,
};

function owner(): typeof OWNER {
  return structuredClone(OWNER);
}

/** A client-node owner, as a model deserialized from the API. */
function modelOwner(): k8s.V1ConfigMap {
  const cm = new k8s.V1ConfigMap();
  cm.apiVersion = "v1";
  cm.kind = "ConfigMap";
  const meta = new k8s.V1ObjectMeta();
  meta.name = "cm-owner";
  meta.uid = "cm-uid";
  meta.namespace = "ns1";
  meta.labels = { app: "cm" };
  cm.metadata = meta;
  return cm;
}

// ---------------------------------------------------------------------------
// buildOwnerReference() / buildObjectReference()

Deno.test("`buildOwnerReference()` builds a controller reference by default", () => {
  assert.deepEqual(buildOwnerReference(owner()), REF);
});

Deno.test("`buildOwnerReference()` honours controller/blockOwnerDeletion, null omits them", () => {
  assert.deepEqual(buildOwnerReference(owner(), { controller: false, blockOwnerDeletion: false }), {
    ...REF,
    controller: false,
    blockOwnerDeletion: false,
  });
  const ref = buildOwnerReference(owner(), { controller: null, blockOwnerDeletion: null });
  assert.deepEqual(ref, {
    apiVersion: REF.apiVersion,
    kind: REF.kind,
    name: REF.name,
    uid: REF.uid,
  });
});

Deno.test("`buildOwnerReference()` reads a client-node model owner", () => {
  assert.deepEqual(buildOwnerReference(modelOwner()), {
    apiVersion: "v1",
    kind: "ConfigMap",
    name: "cm-owner",
    uid: "cm-uid",
    controller: true,
    blockOwnerDeletion: true,
  });
});

Deno.test("`buildOwnerReference()` throws a TypeError naming the missing field", () => {
  const noUid = owner() as Any;
  delete noUid.metadata.uid;
  assert.throws(() => buildOwnerReference(noUid), {
    name: "TypeError",
    message: /has no metadata\.uid; pass the owner as read from the API/,
  });
  const noName = owner() as Any;
  delete noName.metadata.name;
  assert.throws(() => buildOwnerReference(noName), /has no metadata\.name/);
  assert.throws(() => buildOwnerReference({ ...owner(), kind: undefined }), /has no kind/);
  assert.throws(() => buildOwnerReference({ ...owner(), apiVersion: "" }), /has no apiVersion/);
  assert.throws(() => buildOwnerReference({}), TypeError);
  assert.throws(() => buildOwnerReference(null as Any), /the owner is null/);
  assert.throws(() => buildOwnerReference({ ...owner(), metadata: "x" } as Any), TypeError);
});

Deno.test("`buildOwnerReference()` error messages are one line", () => {
  try {
    buildOwnerReference({ kind: "X" });
    assert.fail("no error");
  } catch (error) {
    assert.ok(error instanceof TypeError);
    assert.ok(!error.message.includes("\n"));
    assert.match(error.message, /^buildOwnerReference\(\): /);
  }
});

Deno.test("`buildObjectReference()` includes the known fields and omits the absent ones", () => {
  assert.deepEqual(buildObjectReference(owner()), {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    name: "kopf-example-1",
    uid: "6b931859-5d50-4b5c-956b-ea2fed0d1058",
    namespace: "default",
  });
  assert.deepEqual(buildObjectReference({ kind: "Node", metadata: { name: "n1" } }), {
    kind: "Node",
    name: "n1",
  });
  assert.deepEqual(buildObjectReference({}), {});
  assert.deepEqual(buildObjectReference(modelOwner()), {
    apiVersion: "v1",
    kind: "ConfigMap",
    name: "cm-owner",
    uid: "cm-uid",
    namespace: "ns1",
  });
  assert.throws(() => buildObjectReference("x" as Any), TypeError);
});

// ---------------------------------------------------------------------------
// appendOwnerReference() / removeOwnerReference()

Deno.test("`appendOwnerReference()` adds the reference to each object of an array", () => {
  const objs: Any[] = [{ kind: "Job" }, { kind: "Deployment" }];
  appendOwnerReference(objs, owner());
  assert.deepEqual(objs, [
    { kind: "Job", metadata: { ownerReferences: [REF] } },
    { kind: "Deployment", metadata: { ownerReferences: [REF] } },
  ]);
  // Each child gets its own copy, not a shared object.
  assert.notEqual(objs[0]?.metadata.ownerReferences[0], objs[1]?.metadata.ownerReferences[0]);
});

Deno.test("`appendOwnerReference()` accepts one object and returns nothing", () => {
  const obj: Any = { kind: "Job", metadata: { name: "j" } };
  const result: unknown = appendOwnerReference(obj, owner());
  assert.equal(result, undefined);
  assert.deepEqual(obj, { kind: "Job", metadata: { name: "j", ownerReferences: [REF] } });
});

Deno.test("`appendOwnerReference()` does not duplicate a reference with the same uid", () => {
  const existing = { apiVersion: "x/v1", kind: "Old", name: "old-name", uid: REF.uid };
  const other = { apiVersion: "v1", kind: "Other", name: "o", uid: "other-uid" };
  const obj: Any = { metadata: { ownerReferences: [other, existing] } };
  appendOwnerReference(obj, owner());
  appendOwnerReference([obj, obj], owner());
  assert.deepEqual(obj.metadata.ownerReferences, [other, existing]);
});

Deno.test("`appendOwnerReference()` keeps other owners and appends after them", () => {
  const other = { apiVersion: "v1", kind: "Other", name: "o", uid: "other-uid" };
  const obj: Any = { metadata: { ownerReferences: [other] } };
  appendOwnerReference(obj, owner(), { controller: false, blockOwnerDeletion: false });
  assert.deepEqual(obj.metadata.ownerReferences, [
    other,
    { ...REF, controller: false, blockOwnerDeletion: false },
  ]);
});

Deno.test("`appendOwnerReference()` edits a V1Pod in place, keeping it a V1Pod", () => {
  const pod = new k8s.V1Pod();
  appendOwnerReference(pod, owner());
  assert.ok(pod instanceof k8s.V1Pod);
  assert.deepEqual(pod.metadata?.ownerReferences, [REF]);
  appendOwnerReference(pod, owner());
  assert.equal(pod.metadata?.ownerReferences?.length, 1);

  // Existing model metadata stays the same instance.
  const withMeta = new k8s.V1Pod();
  const meta = new k8s.V1ObjectMeta();
  withMeta.metadata = meta;
  appendOwnerReference(withMeta, modelOwner());
  assert.equal(withMeta.metadata, meta);
  assert.ok(withMeta.metadata instanceof k8s.V1ObjectMeta);
  assert.equal(withMeta.metadata.ownerReferences?.[0]?.uid, "cm-uid");
});

Deno.test("`appendOwnerReference()` output serializes with client-node", () => {
  const pod = new k8s.V1Pod();
  pod.apiVersion = "v1";
  pod.kind = "Pod";
  appendOwnerReference(pod, owner());
  assert.deepEqual(parseYaml(k8s.dumpYaml(pod)), {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { ownerReferences: [REF] },
  });
});

Deno.test("`removeOwnerReference()` removes only the owner's reference, in place", () => {
  const other = { apiVersion: "v1", kind: "Other", name: "o", uid: "other-uid" };
  const refs = [REF, other, { ...REF }];
  const obj: Any = { metadata: { ownerReferences: refs } };
  removeOwnerReference(obj, owner());
  assert.equal(obj.metadata.ownerReferences, refs);
  assert.deepEqual(refs, [other]);
});

Deno.test("`removeOwnerReference()` on arrays and models; absent references are no-ops", () => {
  const pod = new k8s.V1Pod();
  const job: Any = { kind: "Job" };
  const cm: Any = { kind: "ConfigMap", metadata: { name: "x" } };
  appendOwnerReference(pod, owner());
  removeOwnerReference([pod, job, cm], owner());
  assert.deepEqual(pod.metadata?.ownerReferences, []);
  assert.ok(pod instanceof k8s.V1Pod);
  assert.deepEqual(job, { kind: "Job" });
  assert.deepEqual(cm, { kind: "ConfigMap", metadata: { name: "x" } });
});

Deno.test("`removeOwnerReference()` needs only the owner's uid", () => {
  const obj: Any = { metadata: { ownerReferences: [REF] } };
  removeOwnerReference(obj, { metadata: { uid: REF.uid } });
  assert.deepEqual(obj.metadata.ownerReferences, []);
  assert.throws(() => removeOwnerReference(obj, { metadata: { name: "x" } }), /no metadata\.uid/);
});

// ---------------------------------------------------------------------------
// harmonizeNaming()

Deno.test("`harmonizeNaming()` sets generateName `<name>-` on unnamed objects", () => {
  const objs: Any[] = [{ kind: "Job" }, { kind: "Deployment", metadata: {} }];
  harmonizeNaming(objs, "kopf-example-1");
  assert.deepEqual(objs, [
    { kind: "Job", metadata: { generateName: "kopf-example-1-" } },
    { kind: "Deployment", metadata: { generateName: "kopf-example-1-" } },
  ]);
});

Deno.test("`harmonizeNaming()` with strict sets the exact name", () => {
  const obj: Any = { kind: "Job" };
  harmonizeNaming(obj, "kopf-example-1", { strict: true });
  assert.deepEqual(obj, { kind: "Job", metadata: { name: "kopf-example-1" } });
});

Deno.test("`harmonizeNaming()` keeps existing names and prefixes unless forced", () => {
  const named: Any = { metadata: { name: "own" } };
  const prefixed: Any = { metadata: { generateName: "own-" } };
  harmonizeNaming([named, prefixed], "x");
  harmonizeNaming([named, prefixed], "x", { strict: true });
  assert.deepEqual(named.metadata, { name: "own" });
  assert.deepEqual(prefixed.metadata, { generateName: "own-" });

  harmonizeNaming([named, prefixed], "x", { forced: true });
  assert.deepEqual(named.metadata, { generateName: "x-" });
  assert.deepEqual(prefixed.metadata, { generateName: "x-" });

  harmonizeNaming([named, prefixed], "x", { forced: true, strict: true });
  assert.deepEqual(named.metadata, { name: "x" });
  assert.deepEqual(prefixed.metadata, { name: "x" });
});

Deno.test("`harmonizeNaming()` treats an empty name as absent", () => {
  const obj: Any = { metadata: { name: "" } };
  harmonizeNaming(obj, "x");
  assert.deepEqual(obj.metadata, { generateName: "x-" });
});

Deno.test("`harmonizeNaming()` on V1Pod and V1ConfigMap models", () => {
  const pod = new k8s.V1Pod();
  const cm = new k8s.V1ConfigMap();
  cm.metadata = new k8s.V1ObjectMeta();
  cm.metadata.name = "own";
  harmonizeNaming([pod, cm], "kopf-example-1");
  assert.ok(pod instanceof k8s.V1Pod);
  assert.equal(pod.metadata?.generateName, "kopf-example-1-");
  assert.equal(pod.metadata?.name, undefined);
  assert.equal(cm.metadata.name, "own");

  harmonizeNaming([pod, cm], "kopf-example-1", { strict: true, forced: true });
  assert.equal(pod.metadata?.name, "kopf-example-1");
  assert.equal(pod.metadata?.generateName, undefined);
  assert.equal(cm.metadata.name, "kopf-example-1");
  assert.ok(cm.metadata instanceof k8s.V1ObjectMeta);
});

Deno.test("`harmonizeNaming()` rejects an empty or non-string name", () => {
  assert.throws(
    () => harmonizeNaming({}, ""),
    /harmonizeNaming\(\): the name is .*non-empty string/,
  );
  assert.throws(() => harmonizeNaming({}, undefined as Any), TypeError);
});

// ---------------------------------------------------------------------------
// adjustNamespace()

Deno.test("`adjustNamespace()` sets the namespace where absent", () => {
  const objs: Any[] = [{ kind: "Job" }, { kind: "Pod", metadata: { namespace: "other" } }];
  adjustNamespace(objs, "default");
  assert.deepEqual(objs, [
    { kind: "Job", metadata: { namespace: "default" } },
    { kind: "Pod", metadata: { namespace: "other" } },
  ]);
});

Deno.test("`adjustNamespace()` with forced overwrites the namespace", () => {
  const obj: Any = { metadata: { namespace: "other" } };
  adjustNamespace(obj, "default", { forced: true });
  assert.deepEqual(obj.metadata, { namespace: "default" });
});

Deno.test("`adjustNamespace()` with no namespace sets nothing; forced removes it", () => {
  const bare: Any = { kind: "Job" };
  const placed: Any = { metadata: { namespace: "other" } };
  adjustNamespace([bare, placed], null);
  assert.deepEqual(bare, { kind: "Job" });
  assert.deepEqual(placed.metadata, { namespace: "other" });
  adjustNamespace([bare, placed], null, { forced: true });
  assert.deepEqual(bare, { kind: "Job" });
  assert.deepEqual(placed.metadata, {});
});

Deno.test("`adjustNamespace()` on a V1Pod model", () => {
  const pod = new k8s.V1Pod();
  adjustNamespace(pod, "ns1");
  assert.ok(pod instanceof k8s.V1Pod);
  assert.equal(pod.metadata?.namespace, "ns1");
  adjustNamespace(pod, "ns2");
  assert.equal(pod.metadata?.namespace, "ns1");
  adjustNamespace(pod, "ns2", { forced: true });
  assert.equal(pod.metadata?.namespace, "ns2");
  assert.throws(() => adjustNamespace(pod, 5 as Any), /the namespace is a number/);
});

// ---------------------------------------------------------------------------
// label()

Deno.test("`label()` labels each object of an array", () => {
  const objs: Any[] = [{ kind: "Job" }, { kind: "Deployment" }];
  label(objs, { label1: "value1", label2: "value2" });
  assert.deepEqual(objs, [
    { kind: "Job", metadata: { labels: { label1: "value1", label2: "value2" } } },
    { kind: "Deployment", metadata: { labels: { label1: "value1", label2: "value2" } } },
  ]);
});

Deno.test("`label()` keeps existing labels unless forced", () => {
  const obj: Any = { metadata: { labels: { somelabel: "mine" } } };
  label(obj, { label1: "value1", somelabel: "not-this" });
  assert.deepEqual(obj.metadata.labels, { somelabel: "mine", label1: "value1" });
  label(obj, { somelabel: "forced" }, { forced: true });
  assert.deepEqual(obj.metadata.labels, { somelabel: "forced", label1: "value1" });
});

Deno.test("`label()` with empty labels creates an empty labels object only", () => {
  const obj: Any = { kind: "Job" };
  label(obj, {});
  assert.deepEqual(obj, { kind: "Job", metadata: { labels: {} } });
});

Deno.test("`label()` labels nested spec.template when present, skips it when absent", () => {
  const objs: Any[] = [{ kind: "Job" }, { kind: "Deployment", spec: { template: {} } }];
  label(objs, { label1: "value1" }, { nested: "spec.template" });
  label(objs, { somelabel: "somevalue" }, { nested: "spec.template" });
  assert.deepEqual(objs, [
    { kind: "Job", metadata: { labels: { label1: "value1", somelabel: "somevalue" } } },
    {
      kind: "Deployment",
      metadata: { labels: { label1: "value1", somelabel: "somevalue" } },
      spec: {
        template: { metadata: { labels: { label1: "value1", somelabel: "somevalue" } } },
      },
    },
  ]);
});

Deno.test("`label()` accepts several nested paths, dotted or as key arrays", () => {
  const obj: Any = { spec: { template: {}, jobTemplate: { spec: { template: {} } } } };
  label(obj, { a: "b" }, {
    nested: ["spec.template", ["spec", "jobTemplate", "spec", "template"]],
  });
  assert.deepEqual(obj.spec.template.metadata.labels, { a: "b" });
  assert.deepEqual(obj.spec.jobTemplate.spec.template.metadata.labels, { a: "b" });
  assert.equal(obj.spec.jobTemplate.metadata, undefined);
});

Deno.test("`label()` nested keeps existing nested labels unless forced", () => {
  const obj: Any = { spec: { template: { metadata: { labels: { app: "mine" } } } } };
  label(obj, { app: "web" }, { nested: "spec.template" });
  assert.deepEqual(obj.spec.template.metadata.labels, { app: "mine" });
  label(obj, { app: "web" }, { nested: "spec.template", forced: true });
  assert.deepEqual(obj.spec.template.metadata.labels, { app: "web" });
});

Deno.test("`label()` skips null nested structures and rejects non-object ones", () => {
  const nullTemplate: Any = { spec: { template: null } };
  label(nullTemplate, { a: "b" }, { nested: "spec.template" });
  assert.deepEqual(nullTemplate, { metadata: { labels: { a: "b" } }, spec: { template: null } });

  const stringSpec: Any = { spec: "oops" };
  assert.throws(
    () => label(stringSpec, { a: "b" }, { nested: "spec.template" }),
    /label\(\): objs\.spec is a string, so nested field "spec\.template" cannot be labelled/,
  );
  assert.deepEqual(stringSpec, { spec: "oops" }, "nothing changed");
  assert.throws(
    () => label({ spec: { template: 3 } }, { a: "b" }, { nested: "spec.template" }),
    /objs\.spec\.template is a number/,
  );
  assert.throws(() => label({}, { a: "b" }, { nested: "" }), /is not a field path/);
});

Deno.test("`label()` on client-node models, including a nested V1PodTemplateSpec", () => {
  const pod = new k8s.V1Pod();
  label(pod, { app: "web" });
  assert.ok(pod instanceof k8s.V1Pod);
  assert.deepEqual(pod.metadata?.labels, { app: "web" });

  const deployment = k8s.loadYaml<k8s.V1Deployment>(
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n" +
      "spec: {selector: {}, template: {spec: {containers: []}}}",
  );
  const template = deployment.spec?.template;
  assert.ok(template instanceof k8s.V1PodTemplateSpec);
  label(deployment, { app: "web" }, { nested: "spec.template" });
  assert.equal(deployment.spec?.template, template);
  assert.ok(deployment.metadata instanceof k8s.V1ObjectMeta);
  assert.deepEqual(deployment.metadata.labels, { app: "web" });
  assert.deepEqual(template.metadata?.labels, { app: "web" });
  assert.deepEqual(parseYaml(k8s.dumpYaml(deployment)), {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "d", labels: { app: "web" } },
    spec: {
      selector: {},
      template: { metadata: { labels: { app: "web" } }, spec: { containers: [] } },
    },
  });
});

Deno.test("`label()` rejects labels that are not an object of strings", () => {
  assert.throws(() => label({}, null as Any), /label\(\): labels is null/);
  assert.throws(() => label({}, { a: 1 } as Any), /label values must be strings/);
});

// ---------------------------------------------------------------------------
// adopt()

Deno.test("`adopt()` owns, names, places and labels, as in Kopf's docs", () => {
  const objs: Any[] = [{ kind: "Job" }, { kind: "Deployment" }];
  adopt(objs, owner());
  const metadata = {
    ownerReferences: [REF],
    generateName: "kopf-example-1-",
    namespace: "default",
    labels: { somelabel: "somevalue" },
  };
  assert.deepEqual(objs, [{ kind: "Job", metadata }, { kind: "Deployment", metadata }]);
});

Deno.test("`adopt()` with strict, forced and nested", () => {
  const objs: Any[] = [
    { kind: "Job", metadata: { name: "own", namespace: "other", labels: { somelabel: "x" } } },
    { kind: "Deployment", spec: { template: {} } },
  ];
  adopt(objs, owner(), { strict: true, forced: true, nested: "spec.template" });
  const metadata = {
    ownerReferences: [REF],
    name: "kopf-example-1",
    namespace: "default",
    labels: { somelabel: "somevalue" },
  };
  assert.deepEqual(objs, [
    { kind: "Job", metadata },
    {
      kind: "Deployment",
      metadata,
      spec: { template: { metadata: { labels: { somelabel: "somevalue" } } } },
    },
  ]);
});

Deno.test("`adopt()` without forced keeps the child's own name, namespace and labels", () => {
  const obj: Any = {
    metadata: { generateName: "own-", namespace: "other", labels: { somelabel: "mine" } },
  };
  adopt(obj, owner(), { strict: true });
  assert.deepEqual(obj.metadata, {
    generateName: "own-",
    namespace: "other",
    labels: { somelabel: "mine" },
    ownerReferences: [REF],
  });
});

Deno.test("`adopt()` twice adds one owner reference", () => {
  const obj: Any = {};
  adopt(obj, owner());
  adopt(obj, owner(), { forced: true });
  assert.deepEqual(obj.metadata.ownerReferences, [REF]);
});

Deno.test("`adopt()` a V1Pod by a V1ConfigMap owner", () => {
  const pod = new k8s.V1Pod();
  pod.apiVersion = "v1";
  pod.kind = "Pod";
  adopt(pod, modelOwner());
  assert.ok(pod instanceof k8s.V1Pod);
  assert.deepEqual(parseYaml(k8s.dumpYaml(pod)), {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      generateName: "cm-owner-",
      namespace: "ns1",
      labels: { app: "cm" },
      ownerReferences: [{
        apiVersion: "v1",
        kind: "ConfigMap",
        name: "cm-owner",
        uid: "cm-uid",
        controller: true,
        blockOwnerDeletion: true,
      }],
    },
  });
});

Deno.test("`adopt()` by a cluster-scoped owner without labels sets no namespace or labels", () => {
  const obj: Any = {};
  adopt(obj, { apiVersion: "v1", kind: "Node", metadata: { name: "n1", uid: "n-uid" } });
  assert.deepEqual(obj.metadata, {
    ownerReferences: [{
      apiVersion: "v1",
      kind: "Node",
      name: "n1",
      uid: "n-uid",
      controller: true,
      blockOwnerDeletion: true,
    }],
    generateName: "n1-",
    labels: {},
  });
});

Deno.test("`adopt()` consumes a generator of objects once, for every step", () => {
  const a: Any = { kind: "A" };
  const b: Any = { kind: "B" };
  function* children() {
    yield a;
    yield [b];
  }
  adopt(children(), owner());
  for (const obj of [a, b]) {
    assert.deepEqual(obj.metadata.ownerReferences, [REF]);
    assert.equal(obj.metadata.generateName, "kopf-example-1-");
    assert.equal(obj.metadata.namespace, "default");
    assert.deepEqual(obj.metadata.labels, { somelabel: "somevalue" });
  }
});

// ---------------------------------------------------------------------------
// Objects that are not objects, and validation before mutation.

Deno.test("every function throws a TypeError for non-objects in objs, changing nothing", () => {
  const calls: Array<[string, (objs: Any) => void]> = [
    ["appendOwnerReference", (objs) => appendOwnerReference(objs, owner())],
    ["removeOwnerReference", (objs) => removeOwnerReference(objs, owner())],
    ["harmonizeNaming", (objs) => harmonizeNaming(objs, "x")],
    ["adjustNamespace", (objs) => adjustNamespace(objs, "ns")],
    ["label", (objs) => label(objs, { a: "b" })],
    ["adopt", (objs) => adopt(objs, owner())],
  ];
  for (const [name, call] of calls) {
    const first: Any = { kind: "Job" };
    assert.throws(
      () => call([first, [{}, "oops"]]),
      (error: unknown) => {
        assert.ok(error instanceof TypeError);
        assert.equal(
          error.message,
          `${name}(): objs[1][1] is a string, not a Kubernetes object; ` +
            `pass an object (plain or a client-node model) or an array of objects.`,
        );
        return true;
      },
    );
    assert.deepEqual(first, { kind: "Job" }, `${name} changed nothing`);
    assert.throws(() => call(null), /objs is null/);
    assert.throws(() => call(undefined), /objs is undefined/);
    assert.throws(() => call(42), /objs is a number/);
    assert.throws(() => call([undefined]), /objs\[0\] is undefined/);
  }
});

Deno.test("malformed metadata fields are reported before anything changes", () => {
  const good: Any = { kind: "Job" };
  assert.throws(
    () => appendOwnerReference([good, { metadata: { ownerReferences: {} } }], owner()),
    /objs\[1\]\.metadata\.ownerReferences is an object, but must be an array/,
  );
  assert.throws(
    () => label([good, { metadata: { labels: [] } }], { a: "b" }),
    /objs\[1\]\.metadata\.labels is an array, but must be an object/,
  );
  assert.throws(
    () => adopt([good, { metadata: "x" }], owner()),
    /adopt\(\): objs\[1\]\.metadata is a string, but must be an object/,
  );
  assert.deepEqual(good, { kind: "Job" });
});

Deno.test("`adopt()` with an incomplete owner throws and changes nothing", () => {
  const obj: Any = { kind: "Job" };
  const noUid = owner() as Any;
  delete noUid.metadata.uid;
  assert.throws(() => adopt(obj, noUid), /^TypeError: adopt\(\): the owner has no metadata\.uid/);
  assert.throws(() => adopt(obj, { metadata: { name: "x", uid: "u" } }), /has no apiVersion/);
  assert.deepEqual(obj, { kind: "Job" });
});

Deno.test("a list that contains itself is an error, not a hang", () => {
  const objs: Any[] = [{}];
  objs.push(objs);
  assert.throws(() => label(objs, {}), /objs\[1\] contains itself/);
});

// ---------------------------------------------------------------------------
// The owner omitted: the object being handled (Kopf's `kopf.adopt(data)`).

/** Runs `fn` as if inside a handler of `body` (the handlers' async context). */
function inHandler<T>(body: unknown, fn: () => T): T {
  return handlerScope.run({ context: { body } }, fn);
}

Deno.test("the owner, name, namespace and labels default to the handled object inside a handler", () => {
  const objs: Any[] = [{ kind: "Job", spec: { template: {} } }, { kind: "Pod" }];
  inHandler(owner(), () => adopt(objs, { strict: true, nested: "spec.template" }));
  assert.deepEqual(objs[0].metadata, {
    ownerReferences: [REF],
    name: "kopf-example-1",
    namespace: "default",
    labels: { somelabel: "somevalue" },
  });
  assert.deepEqual(objs[0].spec.template.metadata.labels, { somelabel: "somevalue" });

  const one: Any = { kind: "Job" };
  inHandler(owner(), () => {
    appendOwnerReference(one, { controller: false });
    harmonizeNaming(one);
    adjustNamespace(one);
    label(one);
  });
  assert.deepEqual(one.metadata, {
    ownerReferences: [{ ...REF, controller: false }],
    generateName: "kopf-example-1-",
    namespace: "default",
    labels: { somelabel: "somevalue" },
  });
  inHandler(owner(), () => {
    harmonizeNaming(one, { strict: true, forced: true });
    adjustNamespace(one, { forced: true });
    label(one, { forced: true });
    removeOwnerReference(one);
  });
  assert.deepEqual(one.metadata, {
    ownerReferences: [],
    name: "kopf-example-1",
    namespace: "default",
    labels: { somelabel: "somevalue" },
  });
  // Explicit values still win inside a handler; null is "no namespace".
  const other: Any = { kind: "Job" };
  inHandler(owner(), () => {
    adopt(other, modelOwner());
    adjustNamespace(other, null, { forced: true });
  });
  assert.equal(other.metadata.ownerReferences[0].name, "cm-owner");
  assert.equal(other.metadata.namespace, undefined);
});

Deno.test("an omitted owner outside of a handler is one line naming the fix", () => {
  const cases: Array<[() => void, string]> = [
    [
      () => adopt({}),
      "adopt(): the owner is omitted outside of a handler; pass it: adopt(objs, owner) " +
      "(it defaults to the handled object only inside a handler).",
    ],
    [
      () => adopt({}, { strict: true }),
      "adopt(): the owner is omitted outside of a handler; pass it: adopt(objs, owner) " +
      "(it defaults to the handled object only inside a handler).",
    ],
    [
      () => appendOwnerReference({}),
      "appendOwnerReference(): the owner is omitted outside of a handler; pass it: " +
      "appendOwnerReference(objs, owner) (it defaults to the handled object only inside a handler).",
    ],
    [
      () => removeOwnerReference({}),
      "removeOwnerReference(): the owner is omitted outside of a handler; pass it: " +
      "removeOwnerReference(objs, owner) (it defaults to the handled object only inside a handler).",
    ],
    [
      () => harmonizeNaming({}),
      "harmonizeNaming(): the name is omitted outside of a handler; pass it: " +
      "harmonizeNaming(objs, name) (it defaults to the handled object only inside a handler).",
    ],
    [
      () => adjustNamespace({}, { forced: true }),
      "adjustNamespace(): the namespace is omitted outside of a handler; pass it: " +
      "adjustNamespace(objs, namespace) (it defaults to the handled object only inside a handler).",
    ],
    [
      () => label({}),
      "label(): the labels are omitted outside of a handler; pass them: label(objs, labels) " +
      "(they default to the handled object only inside a handler).",
    ],
    [
      () => inHandler(undefined, () => adopt({})),
      "adopt(): the owner is omitted, and the running handler has no object to default to " +
      "(e.g. on.startup); pass it: adopt(objs, owner).",
    ],
  ];
  for (const [call, line] of cases) {
    assert.throws(call, (e: unknown) => {
      assert.ok(e instanceof TypeError);
      assert.equal(e.message, line);
      return true;
    });
  }
});

Deno.test("`adopt(data)` in real handlers: creation, raw events, daemons; not in startup", async () => {
  await using env = await setup();
  const registry = new kopf.OperatorRegistry();
  const seen: Record<string, Any> = {};
  let startupError = "";
  kopf.on.startup({ registry }, function startup() {
    try {
      kopf.adopt({});
    } catch (e) {
      startupError = (e as Error).message;
    }
  });
  kopf.on.create("kopfexamples", { registry }, async function create_fn() {
    await Promise.resolve(); // the default survives awaits
    const data: Any = { apiVersion: "v1", kind: "ConfigMap", data: { a: "b" } };
    kopf.adopt(data);
    seen.create = data;
    return { child: data.metadata.generateName };
  });
  kopf.on.event("kopfexamples", { registry }, function event_fn({ type }) {
    if (type === undefined) return;
    const data: Any = {};
    kopf.label(data);
    seen.event = data;
  });
  kopf.daemon("kopfexamples", { registry }, async function watcher({ signal }) {
    const data: Any = {};
    kopf.adopt(data, { strict: true });
    seen.daemon = data;
    await kopf.sleep(60, signal);
  });
  const runner = await env.operator(registry);
  const created = await env.create("kex", {}, { labels: { app: "web" } });
  const done = await env.waitFor("kex", (o) => o.status?.create_fn !== undefined);
  assert.deepEqual(done.status.create_fn, { child: "kex-" });
  const ref = {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    name: "kex",
    uid: created.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
  assert.deepEqual(seen.create.metadata, {
    ownerReferences: [ref],
    generateName: "kex-",
    namespace: "default",
    labels: { app: "web" },
  });
  assert.deepEqual(seen.event, { metadata: { labels: { app: "web" } } });
  await eventually(() => seen.daemon !== undefined);
  assert.deepEqual(seen.daemon.metadata, {
    ownerReferences: [ref],
    name: "kex",
    namespace: "default",
    labels: { app: "web" },
  });
  assert.equal(
    startupError,
    "adopt(): the owner is omitted, and the running handler has no object to default to " +
      "(e.g. on.startup); pass it: adopt(objs, owner).",
  );
  await runner.stop();
  assert.equal(runner.exception, undefined);
});

async function eventually(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(ok());
}
