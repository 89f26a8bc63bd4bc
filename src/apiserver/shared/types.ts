/**
 * The shapes every room of the API server speaks: a stored object and its
 * metadata, a committed change, the JSON schema of a resource, and the
 * identity a client proved with its certificate. They live in this bottom
 * module so that a room can name them without importing the room that
 * produces them (the store, the schemas, the listener).
 *
 * @module
 */

/** Object metadata, loosely typed: the server reads the fields it needs. */
export interface Meta {
  /** The name, unique per resource and namespace. */
  name?: string;
  /** A prefix from which the server generates a name when `name` is absent. */
  generateName?: string;
  /** The namespace; absent for cluster-scoped objects. */
  namespace?: string;
  /** The unique id, set on creation. */
  uid?: string;
  /** The object's resourceVersion: the store's counter at its last write, as a string. */
  resourceVersion?: string;
  /** Counts the changes of everything but `metadata` and `status`, from 1. */
  generation?: number;
  /** When the object was created (RFC 3339, seconds). */
  creationTimestamp?: string;
  /** When the deletion was requested; the object stays until its finalizers are gone. */
  deletionTimestamp?: string;
  /** The grace period of the pending deletion, in seconds. */
  deletionGracePeriodSeconds?: number;
  /** The labels. */
  labels?: Record<string, string>;
  /** The annotations. */
  annotations?: Record<string, string>;
  /** The finalizers that hold back the deletion. */
  finalizers?: string[];
  /** The owners, for garbage collection. */
  ownerReferences?: OwnerReference[];
  /** The field managers' entries of server-side apply. */
  managedFields?: unknown[];
  /** Any other metadata field, kept as sent. */
  [key: string]: unknown;
}

/** An owner reference, as garbage collection reads it. */
export interface OwnerReference {
  /** The owner's API version. */
  apiVersion: string;
  /** The owner's kind. */
  kind: string;
  /** The owner's name. */
  name: string;
  /** The owner's UID (a dependent whose owner UID is gone is collected). */
  uid: string;
  /** Whether the owner is the managing controller. */
  controller?: boolean;
  /** Whether the owner's foreground deletion waits for this dependent. */
  blockOwnerDeletion?: boolean;
}

/** A Kubernetes object as stored. */
export interface KObject {
  /** The group and version, e.g. `"v1"`. */
  apiVersion?: string;
  /** The kind. */
  kind?: string;
  /** The metadata. */
  metadata: Meta;
  /** The payload: `spec`, `status`, `data`, and so on. */
  [key: string]: unknown;
}

/** The kind of a change. */
export type EventType = "ADDED" | "MODIFIED" | "DELETED";

/** One committed change. */
export interface Change {
  /** Whether the object was added, modified or deleted. */
  type: EventType;
  /** The storage key of the resource (`plural.group`). */
  key: string;
  /** The object after the change (for DELETED: the last state, with the deletion's RV). */
  object: KObject;
  /** The object before the change, if any (for selector transitions in watches). */
  previous: KObject | undefined;
  /** The store's resourceVersion of this change. */
  rv: number;
}

/** The identity a TLS listener verified from a client certificate. */
export interface ClientIdentity {
  /** The certificate subject's common name (CN): the user name. */
  commonName: string;
  /** The certificate subject's organizations (O): the groups. */
  organizations: string[];
}

/**
 * The subset of an OpenAPI v3 schema (as CRDs use it) that these functions
 * understand. Unknown `x-` extensions are allowed and ignored.
 */
export type JsonSchema = {
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  description?: string;
  title?: string;
  example?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  /** A schema for undeclared keys; `true` keeps them as they are; `false` forbids them. */
  additionalProperties?: boolean | JsonSchema;
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  /** OpenAPI v3.0 style: makes `minimum` exclusive. */
  exclusiveMinimum?: boolean;
  /** OpenAPI v3.0 style: makes `maximum` exclusive. */
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  default?: unknown;
  format?: string;
  allOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  not?: JsonSchema;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-embedded-resource"?: boolean;
  [extension: `x-${string}`]: unknown;
};
