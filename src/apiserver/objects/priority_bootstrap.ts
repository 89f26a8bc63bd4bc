/**
 * The system PriorityClasses a cluster starts with, stored when the server starts (and after a
 * data directory's reload, only those missing): `system-cluster-critical` and
 * `system-node-critical`, as the scheduling API's post-start hook stores them.
 *
 * @module
 */

import { SYSTEM_PRIORITY_CLASSES } from "../builtins/priority_classes.ts";
import type { Objects } from "./objects.ts";

const GROUP = "scheduling.k8s.io";

/**
 * Creates the system PriorityClasses that are missing.
 *
 * @param objects The write path of the server.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer();
 * const res = await fetch(`${api.url}/apis/scheduling.k8s.io/v1/priorityclasses`);
 * const names = (await res.json()).items.map((pc: { metadata: { name: string } }) => pc.metadata.name);
 * assert.deepEqual(names, ["system-cluster-critical", "system-node-critical"]);
 * ```
 */
export function bootstrapPriorityClasses(objects: Objects): void {
  const def = objects.registry.find(GROUP, "v1", "priorityclasses");
  if (!def) return;
  for (const { name, value, description } of SYSTEM_PRIORITY_CLASSES) {
    if (objects.store.get(`priorityclasses.${GROUP}`, "", name)) continue;
    objects.create(def, "", {
      apiVersion: `${GROUP}/v1`,
      kind: "PriorityClass",
      metadata: { name },
      value,
      description,
    });
  }
}
