/**
 * Pod specs defaulted and validated once per distinct spec (`pod_spec_memo.ts`): the same
 * answers as defaulting each time — specs of one JSON text share one result (made from a copy of
 * its own, not from the request's objects), values JSON cannot tell apart (YAML's `.nan`,
 * timestamps) are never taken for one another, a created Pod's kept spec follows the
 * PriorityClasses, validation causes are kept per path, and a spec object changed between two
 * in-process writes is read again.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  admittedPodSpec,
  defaultedTemplateSpec,
  isKeptSpec,
  keptCauses,
  oneWrite,
  specKey,
} from "../../src/apiserver/builtins/pod_spec_memo.ts";
import { Store } from "../../src/apiserver/storage/store.ts";
import { ResourceRegistry } from "../../src/apiserver/objects/registry.ts";
import { Objects } from "../../src/apiserver/objects/objects.ts";
import type { KObject } from "../../src/apiserver/shared/types.ts";
import { startApiServer } from "../../testing.ts";
import { call } from "./_http.ts";

type Obj = Record<string, unknown>;

const container = (image: string) => ({ name: "main", image, ports: [{ containerPort: 80 }] });

Deno.test("specs of one JSON text share one defaulted spec, made from a copy; another text gets its own", () => {
  const a = defaultedTemplateSpec({ containers: [container("memo-a:1")] }) as Obj;
  const again = defaultedTemplateSpec({ containers: [container("memo-a:1")] });
  const b = defaultedTemplateSpec({ containers: [container("memo-b:1")] }) as Obj;
  assert.equal(again, a);
  assert.notEqual(b, a);
  // Made from a copy: the request's objects are not part of it (their sender may change them).
  const sent = { containers: [container("memo-copy:1")] };
  const kept = defaultedTemplateSpec(sent) as { containers: Obj[] };
  assert.notEqual(kept.containers[0]!.ports, sent.containers[0]!.ports);
  assert.deepEqual((a.containers as Obj[])[0]?.imagePullPolicy, "IfNotPresent");
  // Defaulting a kept template spec again gives itself.
  assert.equal(defaultedTemplateSpec(a), a);
});

Deno.test("values JSON cannot tell apart are defaulted each time, never taken for a kept text", () => {
  const spec = (grace: unknown) => ({
    containers: [container("memo-nan:1")],
    ...{ terminationGracePeriodSeconds: grace },
  });
  // null is unset: kube's default applies. NaN (YAML's .nan) is a value: it stays.
  const unset = defaultedTemplateSpec(spec(null)) as Obj;
  assert.equal(unset.terminationGracePeriodSeconds, 30);
  const nan = defaultedTemplateSpec(spec(NaN)) as Obj;
  assert.ok(Number.isNaN(nan.terminationGracePeriodSeconds));
  // A timestamp (YAML's) is no string with the same JSON text.
  const when = new Date(0);
  const text = defaultedTemplateSpec({ containers: [{ name: "c", image: when.toJSON() }] });
  const date = defaultedTemplateSpec({ containers: [{ name: "c", image: when }] }) as Obj;
  assert.notEqual(date, text);
  assert.equal((date.containers as Obj[])[0]?.image, when);
  assert.equal(specKey({ a: -0 }), undefined);
  assert.equal(specKey({ a: [1, , 2] }), undefined); // a hole
  assert.equal(specKey({ a: undefined }), undefined);
});

Deno.test("a created Pod's kept spec follows the PriorityClasses' revision", () => {
  const spec = () => ({ containers: [container("memo-pod:1")] });
  const stored: { chosen?: KObject } = {};
  const classes = { get: () => undefined, list: () => [], globalDefault: () => stored.chosen };
  const first = admittedPodSpec(spec(), "p", classes, 1);
  assert.equal(admittedPodSpec(spec(), "q", classes, 1), first);
  assert.equal(first.priority, 0);
  stored.chosen = { metadata: { name: "default-high" }, value: 7, globalDefault: true };
  const next = admittedPodSpec(spec(), "r", classes, 2);
  assert.deepEqual([next.priorityClassName, next.priority], ["default-high", 7]);
  // Without a revision, nothing is kept.
  assert.notEqual(admittedPodSpec(spec(), "s", classes, undefined), next);
});

Deno.test("a kept spec's validation causes are found once per path", () => {
  const spec = defaultedTemplateSpec({
    containers: [container("memo-causes:1")],
    dnsPolicy: "Bogus",
  });
  let runs = 0;
  const validate = (path: string) => () => {
    runs++;
    return [{ reason: "FieldValueNotSupported", message: "x", field: `${path}.dnsPolicy` }];
  };
  const once = keptCauses(spec, "spec", validate("spec"));
  assert.equal(keptCauses(spec, "spec", validate("spec")), once);
  const other = keptCauses(spec, "spec.template.spec", validate("spec.template.spec"));
  assert.deepEqual([runs, other[0]?.field], [2, "spec.template.spec.dnsPolicy"]);
  // A spec not kept here is validated each time.
  keptCauses({ containers: [] }, "spec", validate("spec"));
  keptCauses({ containers: [] }, "spec", validate("spec"));
  assert.equal(runs, 4);
});

Deno.test("a spec's text is remembered within one write only", () => {
  const spec: { containers: Obj[] } = { containers: [{ name: "a" }] };
  oneWrite(() => {
    assert.equal(specKey(spec), '{"containers":[{"name":"a"}]}');
  });
  spec.containers[0]!.name = "b";
  oneWrite(() => {
    assert.equal(specKey(spec), '{"containers":[{"name":"b"}]}');
  });
});

Deno.test("an in-process write of a spec object changed since its last write stores the change", () => {
  const store = new Store();
  const objects = new Objects(store, new ResourceRegistry());
  objects.bootstrap();
  const def = objects.registry.find("apps", "v1", "deployments")!;
  const containers: Obj[] = [{ name: "c", image: "memo-inproc:1" }];
  const podSpec = { containers }; // one object, sent in every write
  const body = (name: string) => ({
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: "a" } },
      template: { metadata: { labels: { app: "a" } }, spec: podSpec },
    },
  });
  const image = (o: KObject) =>
    (o.spec as { template: { spec: { containers: Obj[] } } }).template.spec.containers[0]!.image;
  assert.equal(image(objects.create(def, "default", body("one")).object), "memo-inproc:1");
  containers[0]!.image = "memo-inproc:2"; // the same objects, changed
  assert.equal(image(objects.create(def, "default", body("two")).object), "memo-inproc:2");
  containers[0]!.bogus = true;
  assert.throws(
    () => objects.create(def, "default", body("three"), { fieldValidation: "Strict" }),
    /unknown field "spec.template.spec.containers\[0\].bogus"/,
  );
});

Deno.test("a template kept clean still has its unknown fields pruned when one is added", async () => {
  await using api = await startApiServer();
  const path = "/apis/apps/v1/namespaces/default/deployments";
  const deployment = (name: string, extra: Obj = {}) => ({
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: "a" } },
      template: {
        metadata: { labels: { app: "a" } },
        spec: { containers: [{ ...container("memo-prune:1"), ...extra }] },
      },
    },
  });
  for (const name of ["a", "b"]) {
    assert.equal((await call(api.url, "POST", path, deployment(name))).status, 201);
  }
  // An unknown field is found however often its text comes: dropped with a warning, refused.
  const warned = await call(api.url, "POST", path, deployment("c", { bogus: 1 }));
  assert.equal(warned.status, 201);
  assert.match(warned.headers.get("warning") ?? "", /unknown field/);
  const strict = await call(
    api.url,
    "POST",
    `${path}?fieldValidation=Strict`,
    deployment("d", { bogus: 1 }),
  );
  assert.equal(strict.status, 400);
  assert.match(strict.body.message, /unknown field "spec.template.spec.containers\[0\].bogus"/);
  // The stored templates of one text are one object.
  const stored = (name: string) =>
    (api.server.store.get("deployments.apps", "default", name)!.spec as Obj).template as Obj;
  assert.equal(stored("a").spec, stored("b").spec);
});

Deno.test("two servers in one process: a Pod's kept spec never carries the other server's default PriorityClass", async () => {
  // The same writes on both servers except the class's globalDefault, so that a revision counted
  // per store would be the same number on both: the kept spec must still follow its own store.
  await using a = await startApiServer();
  await using b = await startApiServer();
  const klass = (globalDefault: boolean) => ({
    apiVersion: "scheduling.k8s.io/v1",
    kind: "PriorityClass",
    metadata: { name: "memo-two-servers" },
    value: 4242,
    globalDefault,
  });
  const classes = "/apis/scheduling.k8s.io/v1/priorityclasses";
  assert.equal((await call(a.url, "POST", classes, klass(true))).status, 201);
  assert.equal((await call(b.url, "POST", classes, klass(false))).status, 201);
  const pod = { metadata: { name: "p" }, spec: { containers: [container("memo-two-servers:1")] } };
  const onA = await call(a.url, "POST", "/api/v1/namespaces/default/pods", pod);
  const onB = await call(b.url, "POST", "/api/v1/namespaces/default/pods", pod);
  assert.equal(onA.status, 201);
  assert.equal(onB.status, 201);
  assert.deepEqual([onA.body.spec.priorityClassName, onA.body.spec.priority], [
    "memo-two-servers",
    4242,
  ]);
  assert.deepEqual([onB.body.spec.priorityClassName, onB.body.spec.priority], [undefined, 0]);
});

Deno.test("Pods created from one kept spec share a status within a second, not across seconds or specs", () => {
  const store = new Store();
  const objects = new Objects(store, new ResourceRegistry());
  objects.bootstrap();
  const def = objects.registry.find("", "v1", "pods")!;
  const limits = { cpu: "1", memory: "1Gi" };
  const guaranteed = { containers: [{ name: "c", image: "status:1", resources: { limits } }] };
  const bestEffort = { containers: [{ name: "c", image: "status:1" }] };
  const scheduled = { ...bestEffort, nodeName: "n1" };
  const create = (name: string, spec: Obj, now: string) => {
    objects.now = () => now;
    return objects.create(def, "default", { metadata: { name }, spec: structuredClone(spec) })
      .object.status as { qosClass: string; conditions?: Array<{ lastTransitionTime: string }> };
  };
  const a = create("a", guaranteed, "2026-01-01T00:00:00Z");
  const b = create("b", guaranteed, "2026-01-01T00:00:00Z");
  assert.equal(a, b); // one second, one kept spec: one status
  const c = create("c", guaranteed, "2026-01-01T00:00:01Z");
  assert.equal(c.conditions?.[0]?.lastTransitionTime, "2026-01-01T00:00:01Z");
  assert.equal(a.conditions?.[0]?.lastTransitionTime, "2026-01-01T00:00:00Z");
  const d = create("d", bestEffort, "2026-01-01T00:00:01Z");
  assert.deepEqual([c.qosClass, d.qosClass], ["Guaranteed", "BestEffort"]);
  const e = create("e", scheduled, "2026-01-01T00:00:01Z");
  assert.deepEqual([e.qosClass, e.conditions], ["BestEffort", undefined]);
});

Deno.test("a stored Pod's JSON copies its kept spec's and status's texts: exactly JSON.stringify's, created and patched", () => {
  const store = new Store();
  const objects = new Objects(store, new ResourceRegistry());
  objects.bootstrap();
  const def = objects.registry.find("", "v1", "pods")!;
  const spec = {
    containers: [{ name: "c", image: "text:1", resources: { requests: { cpu: "100m" } } }],
  };
  const stored: KObject[] = [];
  for (const name of ["a", "b"]) {
    stored.push(
      objects.create(def, "default", { metadata: { name }, spec: structuredClone(spec) }).object,
    );
  }
  stored.push(
    objects.patch(def, "default", "a", "merge", { metadata: { annotations: { x: "<&>" } } }, {})
      .object,
  );
  assert.equal(stored[0]!.spec, stored[2]!.spec); // one kept spec, shared
  for (const obj of stored) assert.equal(store.encodingOf(obj), JSON.stringify(obj));
  assert.equal(isKeptSpec(stored[0]!.spec), true);
});
