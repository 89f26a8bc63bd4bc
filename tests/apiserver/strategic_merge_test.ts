import assert from "node:assert/strict";
import {
  applyStrategicMergePatch,
  StrategicMergeError,
} from "../../src/apiserver/objects/strategic_merge.ts";

type Obj = Record<string, unknown>;

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** Applies a patch to frozen copies, so that any mutation fails the test. */
function apply(original: Obj, patch: Obj, kind: string): Obj {
  return applyStrategicMergePatch(
    deepFreeze(structuredClone(original)),
    deepFreeze(structuredClone(patch)),
    kind,
  );
}

function patchError(original: Obj, patch: Obj, kind: string): string {
  try {
    apply(original, patch, kind);
  } catch (error) {
    assert.ok(error instanceof StrategicMergeError, `not a StrategicMergeError: ${error}`);
    assert.equal(error.name, "StrategicMergeError");
    return error.message;
  }
  assert.fail("the patch applied without an error");
}

const pod = (containers: unknown[], extra: Obj = {}): Obj => ({
  metadata: { name: "web" },
  spec: { containers, ...extra },
});

Deno.test("`applyStrategicMergePatch()` merges maps recursively and deletes keys set to null", () => {
  assert.deepEqual(
    apply(
      { metadata: { name: "cm", labels: { a: "1", b: "2" } }, data: { x: "1", y: "2" } },
      { metadata: { labels: { b: null, c: "3" } }, data: { y: null, z: "3" } },
      "ConfigMap",
    ),
    { metadata: { name: "cm", labels: { a: "1", c: "3" } }, data: { x: "1", z: "3" } },
  );
});

Deno.test("`applyStrategicMergePatch()` merges containers by name", () => {
  const original = pod([
    { name: "app", image: "app:1", args: ["--a"] },
    { name: "proxy", image: "envoy:1" },
  ]);
  assert.deepEqual(
    apply(original, { spec: { containers: [{ name: "proxy", image: "envoy:2" }] } }, "Pod"),
    pod([
      { name: "app", image: "app:1", args: ["--a"] },
      { name: "proxy", image: "envoy:2" },
    ]),
  );
});

Deno.test("`applyStrategicMergePatch()` replaces lists that have no merge key, like args", () => {
  const original = pod([{ name: "app", image: "app:1", args: ["--a", "--b"] }], {
    tolerations: [{ key: "a", operator: "Exists" }],
  });
  assert.deepEqual(
    apply(
      original,
      { spec: { containers: [{ name: "app", args: ["--c"] }], tolerations: [{ key: "b" }] } },
      "Pod",
    ),
    pod([{ name: "app", image: "app:1", args: ["--c"] }], { tolerations: [{ key: "b" }] }),
  );
});

Deno.test("`applyStrategicMergePatch()` orders items as Kubernetes does without $setElementOrder", () => {
  const original = pod([{ name: "a" }, { name: "b", image: "b:1" }, { name: "c" }]);
  // Patched items take the patch's order; the server-only item stays in front
  // of the patched item that followed it on the server.
  assert.deepEqual(
    apply(original, {
      spec: { containers: [{ name: "c", image: "c:2" }, { name: "a", image: "a:2" }] },
    }, "Pod"),
    pod([{ name: "b", image: "b:1" }, { name: "c", image: "c:2" }, { name: "a", image: "a:2" }]),
  );
  // A new item at the head of the patch lands before the server's items.
  assert.deepEqual(
    apply(pod([{ name: "a" }, { name: "b" }]), { spec: { containers: [{ name: "new" }] } }, "Pod"),
    pod([{ name: "new" }, { name: "a" }, { name: "b" }]),
  );
  // After an existing item, it lands after that item.
  assert.deepEqual(
    apply(pod([{ name: "a" }, { name: "b" }]), {
      spec: { containers: [{ name: "b" }, { name: "new" }] },
    }, "Pod"),
    pod([{ name: "a" }, { name: "b" }, { name: "new" }]),
  );
});

Deno.test("`applyStrategicMergePatch()` merges env, ports and volumeMounts inside containers", () => {
  const original = pod([{
    name: "app",
    env: [{ name: "A", value: "1" }, { name: "B", value: "2" }],
    ports: [{ containerPort: 80, name: "http" }, { containerPort: 443, name: "https" }],
    volumeMounts: [{ name: "data", mountPath: "/data" }],
  }]);
  const patch = {
    spec: {
      containers: [{
        name: "app",
        env: [{ name: "B", value: "20" }, { name: "C", value: "3" }],
        ports: [{ containerPort: 443, protocol: "TCP" }],
        volumeMounts: [{ mountPath: "/data", readOnly: true }],
      }],
    },
  };
  assert.deepEqual(
    apply(original, patch, "Pod"),
    pod([{
      name: "app",
      env: [{ name: "A", value: "1" }, { name: "B", value: "20" }, { name: "C", value: "3" }],
      ports: [
        { containerPort: 80, name: "http" },
        { containerPort: 443, name: "https", protocol: "TCP" },
      ],
      volumeMounts: [{ name: "data", mountPath: "/data", readOnly: true }],
    }]),
  );
});

Deno.test("`applyStrategicMergePatch()` deletes list items with $patch: delete", () => {
  const original = pod([{
    name: "app",
    env: [{ name: "A", value: "1" }, { name: "B", value: "2" }, { name: "B", value: "dup" }],
  }, { name: "sidecar" }]);
  assert.deepEqual(
    apply(original, {
      spec: {
        containers: [
          { name: "app", env: [{ $patch: "delete", name: "B" }, { $patch: "delete", name: "Z" }] },
          { name: "sidecar", $patch: "delete" },
        ],
      },
    }, "Pod"),
    pod([{ name: "app", env: [{ name: "A", value: "1" }] }]),
  );
});

Deno.test("`applyStrategicMergePatch()` replaces a list with a $patch: replace item", () => {
  const original = pod([{ name: "a" }, { name: "b" }]);
  assert.deepEqual(
    apply(
      original,
      { spec: { containers: [{ name: "c", image: "c:1" }, { $patch: "replace" }] } },
      "Pod",
    ),
    pod([{ name: "c", image: "c:1" }]),
  );
  assert.deepEqual(
    apply(original, { spec: { containers: [{ $patch: "replace" }] } }, "Pod"),
    pod([]),
  );
});

Deno.test("`applyStrategicMergePatch()` replaces or empties a map with $patch", () => {
  const original = {
    metadata: { name: "x" },
    spec: { selector: { a: "1", b: "2" }, type: "ClusterIP" },
  };
  assert.deepEqual(
    apply(original, { spec: { selector: { $patch: "replace", c: "3" } } }, "Service"),
    { metadata: { name: "x" }, spec: { selector: { c: "3" }, type: "ClusterIP" } },
  );
  assert.deepEqual(
    apply(original, { spec: { selector: { $patch: "delete" } } }, "Service"),
    { metadata: { name: "x" }, spec: { selector: {}, type: "ClusterIP" } },
  );
});

Deno.test("`applyStrategicMergePatch()` orders a list by $setElementOrder and drops the directive", () => {
  const original = pod([{ name: "a", image: "a:1" }, { name: "b" }, { name: "c" }]);
  assert.deepEqual(
    apply(original, {
      spec: {
        "$setElementOrder/containers": [{ name: "c" }, { name: "a" }, { name: "b" }],
        containers: [{ name: "a", image: "a:2" }],
      },
    }, "Pod"),
    pod([{ name: "c" }, { name: "a", image: "a:2" }, { name: "b" }]),
  );
});

Deno.test("`applyStrategicMergePatch()` reorders a list named only in $setElementOrder", () => {
  assert.deepEqual(
    apply(pod([{ name: "b" }, { name: "a" }]), {
      spec: { "$setElementOrder/containers": [{ name: "a" }, { name: "b" }] },
    }, "Pod"),
    pod([{ name: "a" }, { name: "b" }]),
  );
});

Deno.test("`applyStrategicMergePatch()` keeps server-only items in place around $setElementOrder", () => {
  // The kubectl apply case from the Kubernetes proposal: the server added ENV5 and ENV4.
  const original = pod([{
    name: "app",
    env: [
      { name: "ENV2", value: "bar" },
      { name: "ENV5", value: "server-added-2" },
      { name: "ENV1", value: "foo" },
      { name: "ENV3", value: "baz" },
      { name: "ENV4", value: "server-added-1" },
    ],
  }]);
  const patch = {
    spec: {
      containers: [{
        name: "app",
        "$setElementOrder/env": [{ name: "ENV1" }, { name: "ENV2" }, { name: "ENV6" }],
        env: [{ name: "ENV3", $patch: "delete" }, { name: "ENV6", value: "new-env" }],
      }],
    },
  };
  assert.deepEqual(
    apply(original, patch, "Pod"),
    pod([{
      name: "app",
      env: [
        { name: "ENV5", value: "server-added-2" },
        { name: "ENV1", value: "foo" },
        { name: "ENV2", value: "bar" },
        { name: "ENV6", value: "new-env" },
        { name: "ENV4", value: "server-added-1" },
      ],
    }]),
  );
});

Deno.test("`applyStrategicMergePatch()` ignores $setElementOrder items that are not in the list", () => {
  assert.deepEqual(
    apply(pod([{ name: "a" }, { name: "c" }]), {
      spec: {
        "$setElementOrder/containers": [{ name: "c" }, { name: "b" }, { name: "a" }],
        containers: [{ name: "c", image: "c" }, { name: "a", image: "a" }],
      },
    }, "Pod"),
    pod([{ name: "c", image: "c" }, { name: "a", image: "a" }]),
  );
});

Deno.test("`applyStrategicMergePatch()` rejects a patch list out of $setElementOrder's order", () => {
  const message = patchError(pod([{ name: "a" }, { name: "b" }]), {
    spec: {
      "$setElementOrder/containers": [{ name: "a" }, { name: "b" }],
      containers: [{ name: "b", image: "b" }, { name: "a", image: "a" }],
    },
  }, "Pod");
  assert.match(
    message,
    /order of the items in "spec.containers" does not match its \$setElementOrder/,
  );
  assert.match(
    patchError(pod([]), {
      spec: { "$setElementOrder/containers": [{ name: "a" }], containers: [{ name: "x" }] },
    }, "Pod"),
    /does not match/,
  );
});

Deno.test("`applyStrategicMergePatch()` clears keys not listed in $retainKeys", () => {
  const original = {
    metadata: { name: "web" },
    spec: {
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    },
  };
  assert.deepEqual(
    apply(
      original,
      { spec: { strategy: { $retainKeys: ["type"], type: "Recreate" } } },
      "Deployment",
    ),
    { metadata: { name: "web" }, spec: { strategy: { type: "Recreate" } } },
  );
  assert.deepEqual(
    apply(original, {
      spec: {
        strategy: { $retainKeys: ["rollingUpdate", "type"], rollingUpdate: { maxSurge: 2 } },
      },
    }, "Deployment"),
    {
      metadata: { name: "web" },
      spec: {
        strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 2, maxUnavailable: 0 } },
      },
    },
  );
});

Deno.test("`applyStrategicMergePatch()` applies $retainKeys to volumes merged by name", () => {
  const original = pod([], {
    volumes: [{ name: "data", emptyDir: {} }, { name: "cfg", configMap: { name: "c" } }],
  });
  assert.deepEqual(
    apply(original, {
      spec: {
        volumes: [{
          name: "data",
          $retainKeys: ["name", "persistentVolumeClaim"],
          persistentVolumeClaim: { claimName: "p" },
        }],
      },
    }, "Pod"),
    pod([], {
      volumes: [{ name: "data", persistentVolumeClaim: { claimName: "p" } }, {
        name: "cfg",
        configMap: { name: "c" },
      }],
    }),
  );
});

Deno.test("`applyStrategicMergePatch()` rejects a patch that sets a key $retainKeys does not list", () => {
  assert.match(
    patchError({ spec: { strategy: {} } }, {
      spec: { strategy: { $retainKeys: ["type"], type: "Recreate", rollingUpdate: {} } },
    }, "Deployment"),
    /"spec.strategy" sets "rollingUpdate", which its \$retainKeys does not list/,
  );
  assert.match(
    patchError({}, { spec: { $retainKeys: "type" } }, "Deployment"),
    /"spec" has a malformed \$retainKeys/,
  );
});

Deno.test("`applyStrategicMergePatch()` merges finalizers as a set", () => {
  const original = { metadata: { name: "x", finalizers: ["a", "b"] } };
  assert.deepEqual(
    apply(original, { metadata: { finalizers: ["b", "c"] } }, "ConfigMap"),
    { metadata: { name: "x", finalizers: ["a", "b", "c"] } },
  );
  assert.deepEqual(
    apply({ metadata: { finalizers: ["a", "a"] } }, { metadata: { finalizers: ["a"] } }, "Pod"),
    { metadata: { finalizers: ["a"] } },
  );
  assert.deepEqual(
    apply({ metadata: {} }, { metadata: { finalizers: ["a", "b", "a"] } }, "Pod"),
    { metadata: { finalizers: ["a", "b"] } },
  );
  // Kubernetes puts a lone new item first.
  assert.deepEqual(
    apply(original, { metadata: { finalizers: ["c"] } }, "ConfigMap"),
    { metadata: { name: "x", finalizers: ["c", "a", "b"] } },
  );
});

Deno.test("`applyStrategicMergePatch()` deletes from a primitive list with $deleteFromPrimitiveList", () => {
  const original = { metadata: { name: "x", finalizers: ["a", "b", "c", "b"] } };
  assert.deepEqual(
    apply(original, { metadata: { "$deleteFromPrimitiveList/finalizers": ["b", "zzz"] } }, "Pod"),
    { metadata: { name: "x", finalizers: ["a", "c"] } },
  );
  assert.deepEqual(
    apply({ metadata: { name: "x" } }, {
      metadata: { "$deleteFromPrimitiveList/finalizers": ["b"] },
    }, "Pod"),
    { metadata: { name: "x" } },
  );
  // It works on lists without a merge strategy too, as in Kubernetes.
  assert.deepEqual(
    apply(pod([{ name: "a", args: ["x", "y"] }]), {
      spec: { containers: [{ name: "a", "$deleteFromPrimitiveList/args": ["x"] }] },
    }, "Pod"),
    pod([{ name: "a", args: ["y"] }]),
  );
});

Deno.test("`applyStrategicMergePatch()` applies kubectl's finalizer patch: order, deletions and additions", () => {
  const original = { metadata: { finalizers: ["b", "e", "a", "c", "d"] } };
  assert.deepEqual(
    apply(original, {
      metadata: {
        "$setElementOrder/finalizers": ["a", "b", "f"],
        "$deleteFromPrimitiveList/finalizers": ["c"],
        finalizers: ["f"],
      },
    }, "Pod"),
    { metadata: { finalizers: ["e", "a", "b", "f", "d"] } },
  );
});

Deno.test("`applyStrategicMergePatch()` merges ownerReferences by uid and conditions by type", () => {
  const original = {
    metadata: { ownerReferences: [{ uid: "u1", name: "rs-1" }, { uid: "u2", name: "rs-2" }] },
    status: {
      conditions: [
        { type: "Available", status: "False" },
        { type: "Progressing", status: "True" },
      ],
    },
  };
  assert.deepEqual(
    apply(original, {
      metadata: { ownerReferences: [{ uid: "u2", controller: true }] },
      status: { conditions: [{ type: "Available", status: "True" }] },
    }, "Deployment"),
    {
      metadata: {
        ownerReferences: [{ uid: "u1", name: "rs-1" }, {
          uid: "u2",
          name: "rs-2",
          controller: true,
        }],
      },
      status: {
        conditions: [
          { type: "Available", status: "True" },
          { type: "Progressing", status: "True" },
        ],
      },
    },
  );
});

Deno.test("`applyStrategicMergePatch()` merges service ports by port and service account secrets by name", () => {
  assert.deepEqual(
    apply(
      { spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] } },
      { spec: { ports: [{ port: 80, targetPort: 9090 }] } },
      "Service",
    ),
    { spec: { ports: [{ port: 80, targetPort: 9090 }, { port: 443 }] } },
  );
  assert.deepEqual(
    apply(
      { secrets: [{ name: "a" }] },
      { secrets: [{ name: "a" }, { name: "b" }] },
      "ServiceAccount",
    ),
    { secrets: [{ name: "a" }, { name: "b" }] },
  );
});

Deno.test("`applyStrategicMergePatch()` finds pod templates in every workload kind", () => {
  const template = (containers: unknown[]) => ({ spec: { containers } });
  const before = [{ name: "a", image: "a:1" }, { name: "b" }];
  const after = [{ name: "a", image: "a:2" }, { name: "b" }];
  const change = [{ name: "a", image: "a:2" }];
  for (const kind of ["Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job"]) {
    assert.deepEqual(
      apply(
        { spec: { template: template(before) } },
        { spec: { template: template(change) } },
        kind,
      ),
      { spec: { template: template(after) } },
      kind,
    );
  }
  assert.deepEqual(
    apply(
      { spec: { jobTemplate: { spec: { template: template(before) } } } },
      { spec: { jobTemplate: { spec: { template: template(change) } } } },
      "CronJob",
    ),
    { spec: { jobTemplate: { spec: { template: template(after) } } } },
  );
});

Deno.test("`applyStrategicMergePatch()` accepts plural and lowercase kind names", () => {
  for (const kind of ["deployments", "deployment", "DEPLOYMENT", "Deployments"]) {
    assert.deepEqual(
      apply(
        { spec: { template: { spec: { containers: [{ name: "a" }, { name: "b" }] } } } },
        { spec: { template: { spec: { containers: [{ name: "b", image: "b" }] } } } },
        kind,
      ),
      { spec: { template: { spec: { containers: [{ name: "a" }, { name: "b", image: "b" }] } } } },
      kind,
    );
  }
});

Deno.test("`applyStrategicMergePatch()` replaces lists outside the table, and of unknown kinds", () => {
  // A pod's containers path means nothing in a Deployment, and vice versa.
  assert.deepEqual(
    apply(
      { spec: { containers: [{ name: "a" }] } },
      { spec: { containers: [{ name: "b" }] } },
      "Deployment",
    ),
    { spec: { containers: [{ name: "b" }] } },
  );
  assert.deepEqual(
    apply(
      { metadata: { finalizers: ["a"] }, spec: { items: [{ name: "a" }] } },
      { metadata: { finalizers: ["b"] }, spec: { items: [{ name: "b" }] } },
      "Widget",
    ),
    { metadata: { finalizers: ["b", "a"] }, spec: { items: [{ name: "b" }] } },
  );
});

Deno.test("`applyStrategicMergePatch()` strips directives and nulls from values it adds", () => {
  assert.deepEqual(
    apply({ metadata: { name: "web" } }, {
      spec: {
        nodeName: null,
        "$setElementOrder/containers": [{ name: "b" }, { name: "a" }],
        containers: [
          { name: "b", image: "b", resources: { limits: null } },
          {
            name: "a",
            image: "a",
            env: [{ name: "X", value: "1" }, { name: "Y", $patch: "delete" }],
          },
        ],
      },
    }, "Pod"),
    {
      metadata: { name: "web" },
      spec: {
        containers: [{ name: "b", image: "b", resources: {} }, {
          name: "a",
          image: "a",
          env: [{ name: "X", value: "1" }],
        }],
      },
    },
  );
});

Deno.test("`applyStrategicMergePatch()` replaces a value of a different type", () => {
  assert.deepEqual(
    apply({ spec: { a: [1], b: { x: 1 }, c: "s" } }, {
      spec: { a: { y: 2 }, b: [2], c: { z: null } },
    }, "Widget"),
    { spec: { a: { y: 2 }, b: [2], c: {} } },
  );
});

Deno.test("`applyStrategicMergePatch()` never mutates its inputs and shares untouched subtrees", () => {
  const status = { phase: "Running" };
  const original = deepFreeze({
    metadata: { name: "web", labels: { a: "1" } },
    spec: { containers: [{ name: "app", image: "app:1" }] },
    status,
  });
  const patch = deepFreeze({
    metadata: { labels: { b: "2" } },
    spec: { containers: [{ name: "app", image: "app:2" }] },
  });
  const result = applyStrategicMergePatch(original, patch, "Pod");
  assert.deepEqual(result, {
    metadata: { name: "web", labels: { a: "1", b: "2" } },
    spec: { containers: [{ name: "app", image: "app:2" }] },
    status: { phase: "Running" },
  });
  assert.equal(result.status, status);
  assert.equal(original.spec.containers[0]?.image, "app:1");
});

Deno.test("`applyStrategicMergePatch()` applies a realistic kubectl apply patch of a Deployment", () => {
  const lastApplied = (image: string) =>
    JSON.stringify({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web" },
      spec: { image },
    });
  const original: Obj = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: "default",
      uid: "d1",
      resourceVersion: "100",
      generation: 3,
      labels: { app: "web" },
      annotations: {
        "deployment.kubernetes.io/revision": "3",
        "kubectl.kubernetes.io/last-applied-configuration": lastApplied("web:1"),
      },
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: "web" } },
      strategy: {
        type: "RollingUpdate",
        rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" },
      },
      template: {
        metadata: { labels: { app: "web" } },
        spec: {
          containers: [
            {
              name: "web",
              image: "web:1",
              env: [{ name: "MODE", value: "prod" }, { name: "DEBUG", value: "0" }],
              ports: [{ containerPort: 8080, protocol: "TCP" }],
              resources: { limits: { cpu: "1", memory: "1Gi" } },
              terminationMessagePath: "/dev/termination-log",
            },
            { name: "injected-by-webhook", image: "mesh:1" },
          ],
          restartPolicy: "Always",
          dnsPolicy: "ClusterFirst",
        },
      },
    },
    status: { replicas: 2, conditions: [{ type: "Available", status: "True" }] },
  };
  // What `kubectl apply` sends after the manifest changed the image, replaced
  // DEBUG by LOG_LEVEL, dropped the memory limit, added a sidecar and a port,
  // and scaled to 3.
  const patch: Obj = {
    metadata: {
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": lastApplied("web:2") },
    },
    spec: {
      replicas: 3,
      template: {
        spec: {
          "$setElementOrder/containers": [{ name: "web" }, { name: "log-shipper" }],
          containers: [
            {
              name: "web",
              image: "web:2",
              "$setElementOrder/env": [{ name: "MODE" }, { name: "LOG_LEVEL" }],
              env: [{ name: "LOG_LEVEL", value: "info" }, { $patch: "delete", name: "DEBUG" }],
              "$setElementOrder/ports": [{ containerPort: 8080 }, { containerPort: 9090 }],
              ports: [{ containerPort: 9090, name: "metrics" }],
              resources: { limits: { memory: null } },
            },
            { name: "log-shipper", image: "fluent-bit:3" },
          ],
        },
      },
    },
  };
  const result = apply(original, patch, "Deployment");
  assert.deepEqual(result, {
    ...original,
    metadata: {
      ...(original.metadata as Obj),
      annotations: {
        "deployment.kubernetes.io/revision": "3",
        "kubectl.kubernetes.io/last-applied-configuration": lastApplied("web:2"),
      },
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: "web" } },
      strategy: {
        type: "RollingUpdate",
        rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" },
      },
      template: {
        metadata: { labels: { app: "web" } },
        spec: {
          containers: [
            {
              name: "web",
              image: "web:2",
              env: [{ name: "MODE", value: "prod" }, { name: "LOG_LEVEL", value: "info" }],
              ports: [{ containerPort: 8080, protocol: "TCP" }, {
                containerPort: 9090,
                name: "metrics",
              }],
              resources: { limits: { cpu: "1" } },
              terminationMessagePath: "/dev/termination-log",
            },
            // Patched items first, in $setElementOrder's order; the server-only
            // container keeps its place after the item it followed.
            { name: "log-shipper", image: "fluent-bit:3" },
            { name: "injected-by-webhook", image: "mesh:1" },
          ],
          restartPolicy: "Always",
          dnsPolicy: "ClusterFirst",
        },
      },
    },
  });
  assert.ok(!JSON.stringify(result).includes("$"), "no directive may reach the result");
});

Deno.test("`applyStrategicMergePatch()` requires the merge key in every list item of the patch", () => {
  assert.match(
    patchError(pod([{ name: "a" }]), { spec: { containers: [{ image: "x" }] } }, "Pod"),
    /the patch item \{"image":"x"\} of "spec.containers" does not contain its merge key "name"/,
  );
  assert.match(
    patchError(pod([{ name: "a" }]), { spec: { containers: [{ $patch: "delete" }] } }, "Pod"),
    /does not contain its merge key "name"/,
  );
  assert.match(
    patchError(pod([{ name: "a" }]), { spec: { containers: ["a"] } }, "Pod"),
    /"spec.containers" must hold maps, but the patch has "a"/,
  );
  assert.match(
    patchError(pod([]), { spec: { "$setElementOrder/containers": ["a"] } }, "Pod"),
    /must hold maps, but the \$setElementOrder has "a"/,
  );
});

Deno.test("`applyStrategicMergePatch()` answers malformed directives with StrategicMergeError", () => {
  assert.match(
    patchError({ spec: {} }, { spec: { $patch: "merge" } }, "Pod"),
    /"spec" has an unknown \$patch directive "merge" for a map/,
  );
  assert.match(
    patchError(
      pod([{ name: "a" }]),
      { spec: { containers: [{ name: "a", $patch: "merge" }] } },
      "Pod",
    ),
    /"spec.containers" has an unknown \$patch directive "merge" in a list item/,
  );
  assert.match(
    patchError({ metadata: {} }, { metadata: { "$setElementOrder/finalizers": "a" } }, "Pod"),
    /"metadata" has a malformed "\$setElementOrder\/finalizers"/,
  );
  assert.match(
    patchError({ metadata: {} }, { metadata: { "$setElementOrder/": [] } }, "Pod"),
    /malformed "\$setElementOrder\/"/,
  );
  assert.match(
    patchError({ metadata: {} }, {
      metadata: { "$deleteFromPrimitiveList/finalizers": [{ a: 1 }] },
    }, "Pod"),
    /malformed "\$deleteFromPrimitiveList\/finalizers"/,
  );
  assert.match(
    patchError({ metadata: {} }, { metadata: { finalizers: [{ a: 1 }] } }, "Pod"),
    /"metadata.finalizers" is a list of primitives, but the patch has \{"a":1\}/,
  );
  assert.throws(
    () => applyStrategicMergePatch({}, [] as unknown as Obj, "Pod"),
    /a strategic merge patch must be a JSON object, got \[\]/,
  );
  assert.throws(
    () => applyStrategicMergePatch(null as unknown as Obj, {}, "Pod"),
    /the original object must be a JSON object, got null/,
  );
});

Deno.test("`applyStrategicMergePatch()` answers a top-level $patch directive", () => {
  assert.deepEqual(apply({ a: 1, b: 2 }, { $patch: "replace", c: 3 }, "Pod"), { c: 3 });
  assert.deepEqual(apply({ a: 1 }, { $patch: "delete" }, "Pod"), {});
});

Deno.test("`applyStrategicMergePatch()` treats other $-keys as ordinary fields", () => {
  // CRD schemas hold keys like $ref and $schema.
  assert.deepEqual(
    apply({ spec: { schema: { $ref: "#/a" } } }, {
      spec: { schema: { $ref: "#/b", $schema: "x" } },
    }, "CustomResourceDefinition"),
    { spec: { schema: { $ref: "#/b", $schema: "x" } } },
  );
});
