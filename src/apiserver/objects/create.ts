/**
 * The create verb (kube-apiserver's `rest.BeforeCreate` and the generic
 * store's `Create`): the namespace of the URL and of the body agree and the
 * namespace exists and is not terminating; mutating admission; a generated
 * name; the uid, creation timestamp and first generation; the shared checks;
 * the kind's defaults; validating admission; the storage version; then one
 * commit (or none, for a dry run).
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import { apiVersionOf, type ResourceDef, storageKey } from "../shared/resources.ts";
import type { KObject, Meta } from "../shared/types.ts";
import type { WriteOptions, Writer, WriteResult } from "./write_types.ts";
import { keepsGeneration } from "../builtins/builtin_strategies.ts";
import { admitObject, asObject } from "./admit.ts";
import { afterWrite, onCreate } from "./kind_hooks.ts";

const NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789";

/** Creates an object (see `Objects.create`). */
export function createObject(
  w: Writer,
  def: ResourceDef,
  namespace: string,
  body: unknown,
  options: WriteOptions = {},
): WriteResult {
  const obj = asObject(body, def);
  const meta: Meta = { ...(obj.metadata ?? {}) };
  if (def.namespaced) {
    if (meta.namespace && namespace && meta.namespace !== namespace) {
      throw ApiError.badRequest(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    }
    meta.namespace = namespace || meta.namespace || "";
    if (!meta.namespace) {
      throw ApiError.badRequest(
        "the server could not find the requested resource: a namespace is required",
      );
    }
    requireNamespace(w, meta.namespace);
  } else {
    delete meta.namespace;
  }
  if (options.admission?.mutate) {
    const mutated = options.admission.mutate({ ...obj, metadata: meta }, undefined);
    return createAdmitted(w, def, mutated, { ...(mutated.metadata ?? {}) }, options);
  }
  return createAdmitted(w, def, obj, meta, options);
}

function createAdmitted(
  w: Writer,
  def: ResourceDef,
  obj: KObject,
  meta: Meta,
  options: WriteOptions,
): WriteResult {
  if (!meta.name && meta.generateName) {
    let name: string;
    do name = meta.generateName + randomSuffix(); while (
      w.store.get(storageKey(def), meta.namespace ?? "", name)
    );
    meta.name = name;
  }
  if (!meta.name) {
    throw ApiError.invalid(def.kind, def.group, "", [
      {
        reason: "FieldValueRequired",
        message: "Required value: name or generateName is required",
        field: "metadata.name",
      },
    ]);
  }
  if (w.store.get(storageKey(def), meta.namespace ?? "", meta.name)) {
    throw ApiError.alreadyExists(def.plural, def.group, meta.name);
  }
  meta.uid = newUid();
  meta.creationTimestamp = w.now();
  if (keepsGeneration(def)) meta.generation = 1;
  else delete meta.generation;
  delete meta.resourceVersion;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  if (meta.managedFields && !Array.isArray(meta.managedFields)) delete meta.managedFields;
  let draft: KObject = { ...obj, apiVersion: apiVersionOf(def), kind: def.kind, metadata: meta };
  if (def.statusSubresource && !def.builtin) delete draft.status;
  const warnings: string[] = [];
  draft = admitObject(w, def, draft, undefined, options, warnings);
  draft = onCreate(w, def, draft);
  if (options.admission?.validate) draft = options.admission.validate(draft, undefined);
  if (options.conversion) draft = options.conversion.encode(draft);
  if (options.dryRun) {
    return { object: { ...draft, metadata: { ...draft.metadata } }, warnings, created: true };
  }
  const stored = w.store.commit("ADDED", storageKey(def), draft);
  afterWrite(w, def, stored);
  return { object: stored, warnings, created: true };
}

/** A namespace to create in: it exists (404) and is not terminating (403). */
function requireNamespace(w: Writer, namespace: string): void {
  const ns = w.store.get("namespaces", "", namespace);
  if (!ns) {
    throw new ApiError(404, "NotFound", `namespaces "${namespace}" not found`, {
      name: namespace,
      kind: "namespaces",
    });
  }
  if (ns.metadata.deletionTimestamp) {
    throw new ApiError(
      403,
      "Forbidden",
      `unable to create new content in namespace ${namespace} because it is being terminated`,
      { name: namespace, kind: "namespaces" },
    );
  }
}

/** The character codes of the hex digits. */
const HEX = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
/** One uid's character codes, filled for each uid. */
const UID = new Array<number>(36).fill(0x2d);
/** Random bytes drawn 4 KiB at a time (256 uids): one call into the runtime, not one per uid. */
let random = new Uint8Array(0);
let used = 0;

/**
 * A random (version 4) UUID, as `crypto.randomUUID()` makes one — but a flat string of V8's
 * own making. The one `crypto.randomUUID()` returns sends V8's `JSON.stringify` down its slow
 * path for every object that holds it; one built by `+=` is a rope (a cons string) that sends
 * the first encoding of the object holding it down that path (a created Pod: 8 µs, 3 µs with a
 * flat uid). Every version of an object keeps its uid and is encoded on each write and watch
 * event; a created object is encoded once by the store and answered with that text.
 */
function newUid(): string {
  if (used + 16 > random.length) {
    random = crypto.getRandomValues(new Uint8Array(4096));
    used = 0;
  }
  const at = used;
  used += 16;
  random[at + 6] = (random[at + 6]! & 0x0f) | 0x40;
  random[at + 8] = (random[at + 8]! & 0x3f) | 0x80;
  let j = 0;
  for (let i = 0; i < 16; i++) {
    const b = random[at + i]!;
    UID[j++] = HEX[b >> 4]!;
    UID[j++] = HEX[b & 15]!;
    if (i === 3 || i === 5 || i === 7 || i === 9) j++; // the dashes stay in place
  }
  return String.fromCharCode.apply(null, UID);
}

function randomSuffix(): string {
  let s = "";
  const bytes = crypto.getRandomValues(new Uint8Array(5));
  for (const b of bytes) s += NAME_CHARS[b % NAME_CHARS.length];
  return s;
}
