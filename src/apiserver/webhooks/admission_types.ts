/**
 * What an admission review is about: the operation, the request's resource,
 * URL parts and caller, and the varying part of `request`. The admission
 * caller, its webhook matching, its wire format and the server's routing all
 * name these, so they sit in this bottom module of the room rather than in
 * any one of them.
 *
 * @module
 */

import type { ResourceDef } from "../shared/resources.ts";
import type { KObject } from "../shared/types.ts";

/** An admission operation. */
export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/** Who makes the request, as `request.userInfo` carries it. */
export interface AdmissionUserInfo {
  username: string;
  uid?: string;
  groups?: string[];
}

/** What a request is about: the resource, its URL parts and the caller. */
export interface AdmissionRequestInfo {
  /** The resource of the URL. */
  def: ResourceDef;
  /** The namespace of the URL ("" for cluster-scoped). */
  namespace: string;
  /** The name of the URL ("" on create). */
  name: string;
  /** The subresource of the URL, e.g. "status". */
  subresource?: string;
  /** The caller. */
  userInfo: AdmissionUserInfo;
}

/** What a webhook is told about a request (the parts of `request` that vary). */
export interface Review {
  operation: AdmissionOperation;
  object: KObject | null;
  oldObject: KObject | null;
  dryRun: boolean;
  options: Record<string, unknown> | null;
}
