/**
 * How many times `Admission.write` runs the write it admits: once when no
 * webhook's rules can match (no dry passes), twice when only one stage
 * (mutating or validating) can, three times when both can. The webhooks here
 * point at a closed port with `failurePolicy: Ignore`, so their calls fail
 * fast and the writes go on.
 *
 * @module
 */

import { Admission } from "../../src/apiserver/webhooks/admission.ts";
import { Objects } from "../../src/apiserver/objects/objects.ts";
import type { WriteOptions } from "../../src/apiserver/objects/write_types.ts";
import { ResourceRegistry } from "../../src/apiserver/objects/registry.ts";
import { Store } from "../../src/apiserver/storage/store.ts";

function assertEquals(actual: unknown, expected: unknown, what = ""): void {
  const a = JSON.stringify(actual), e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what ? what + ": " : ""}expected ${e}\n           got ${a}`);
}

function setUp(): { objects: Objects; admission: Admission; registry: ResourceRegistry } {
  const registry = new ResourceRegistry();
  const objects = new Objects(new Store(), registry);
  objects.bootstrap();
  return { objects, admission: new Admission(objects), registry };
}

/** Stores a webhook configuration whose one webhook takes writes of `resource`. */
function configure(
  { objects, registry }: ReturnType<typeof setUp>,
  kind: "Mutating" | "Validating",
  resource: string,
): void {
  const plural = `${kind.toLowerCase()}webhookconfigurations`;
  const def = registry.find("admissionregistration.k8s.io", "v1", plural)!;
  objects.create(def, "", {
    metadata: { name: `${kind.toLowerCase()}-${resource}` },
    webhooks: [{
      name: `${resource}.example.com`,
      clientConfig: { url: "https://127.0.0.1:1/" },
      rules: [{
        operations: ["CREATE", "UPDATE"],
        apiGroups: [""],
        apiVersions: ["v1"],
        resources: [resource],
      }],
      failurePolicy: "Ignore",
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
    }],
  });
}

/** Creates a configmap through admission; answers how many times the write ran. */
async function passes(env: ReturnType<typeof setUp>, name: string): Promise<number> {
  const def = env.registry.find("", "v1", "configmaps")!;
  const info = { def, namespace: "default", name: "", userInfo: { username: "me" } };
  let runs = 0;
  const { object } = await env.admission.write(info, {}, (options: WriteOptions) => {
    runs++;
    return env.objects.create(def, "default", { metadata: { name } }, options);
  });
  assertEquals(object.metadata.name, name);
  assertEquals(!!env.objects.store.get("configmaps", "default", name), true, "stored");
  return runs;
}

Deno.test("`Admission.write()` runs a write no webhook's rules can match once", async () => {
  const env = setUp();
  try {
    assertEquals(await passes(env, "none-configured"), 1);
    configure(env, "Mutating", "secrets");
    configure(env, "Validating", "secrets");
    assertEquals(await passes(env, "other-resource"), 1);
  } finally {
    env.admission.close();
  }
});

Deno.test("`Admission.write()` skips the stage no webhook's rules can match", async () => {
  const env = setUp();
  try {
    configure(env, "Validating", "configmaps");
    assertEquals(await passes(env, "validating-only"), 2);
  } finally {
    env.admission.close();
  }
  const other = setUp();
  try {
    configure(other, "Mutating", "configmaps");
    assertEquals(await passes(other, "mutating-only"), 2);
    configure(other, "Validating", "configmaps");
    assertEquals(await passes(other, "both"), 3);
  } finally {
    other.admission.close();
  }
});
