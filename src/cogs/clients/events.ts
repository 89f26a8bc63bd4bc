/**
 * Posting Kubernetes events about objects, exactly as Kopf posts them, so
 * that `kubectl describe` shows the same "From kopf" lines for operators
 * written with either — and, as client-go does for an event that occurs
 * again, patching an Event's `count`, `lastTimestamp` and message instead of
 * posting another (which ones to post or patch is the operator's event
 * recorder's decision: `core/engines/event_recorder.ts`).
 *
 * Events are helpful but auxiliary: a failure to post one (the namespace is
 * gone, the server refuses, the network is down) must never fail the
 * handling of the object. Such failures are logged and swallowed; only a
 * missing login, a missing permission, and cancellation escalate.
 *
 * @module
 */

import type { ObjectReference } from "../structs/bodies.ts";
import { Resource } from "../structs/references.ts";
import type { ApiClient, RequestOptions } from "./api.ts";
import { ApiConnectionError } from "./connection_errors.ts";
import { ApiError } from "./errors.ts";
import type { RawBody } from "./types.ts";
import { DEFAULTS, setting, type Some } from "./_settings.ts";
import type { PostingSettings } from "../configs/settings.ts";

/** Events longer than this are cut in the middle (the API rejects longer ones). */
export const MAX_MESSAGE_LENGTH = 1024;
const CUT_MESSAGE_INFIX = "...";

/** The core v1 events resource. */
export const EVENTS_RESOURCE: Resource = new Resource({
  group: "",
  version: "v1",
  plural: "events",
  kind: "Event",
  singular: "event",
  namespaced: true,
  shortcuts: ["ev"],
});

/** One event to post. */
export interface EventSpec {
  /** The object the event is about. */
  ref: ObjectReference;
  /** `Normal` or `Warning` (free text for Kubernetes). */
  type: string;
  /** A short CamelCase reason, e.g. `Logging`, `Success`, `Error`. */
  reason: string;
  /** The message (cut to 1024 characters). */
  message?: string | undefined;
  /** How many times it occurred (client-go's `count`; left out when not given, as Kopf does). */
  count?: number | undefined;
  /** When it first occurred (default: now); also the `eventTime`. */
  firstTimestamp?: Date | undefined;
  /** When it last occurred (default: the first time). */
  lastTimestamp?: Date | undefined;
}

/** Options of {@link postEvent}. */
export interface PostEventOptions {
  /**
   * Reporting component and instance, name prefix: `OperatorSettings.posting`,
   * or some of these three; the others have its defaults.
   */
  posting?:
    | Some<Pick<PostingSettings, "reportingComponent" | "reportingInstance" | "eventNamePrefix">>
    | undefined;
  /** The events resource (default core v1 events). */
  resource?: Resource | undefined;
  /** Stops the request. */
  signal?: AbortSignal | undefined;
  /** The request's priority (see {@link RequestOptions.priority}; default normal). */
  priority?: RequestOptions["priority"];
}

/**
 * Posts an event about an object. Cluster-scoped objects get their events in
 * the credentials' default namespace, else `default`. Events about core v1
 * events are not posted (that would loop).
 *
 * @param api The API client.
 * @param event The object reference, type, reason, message.
 * @param options Posting settings, signal.
 * @returns The created event, or undefined if it was skipped or failed.
 * @throws {LoginError} When no valid credentials are left.
 * @throws {AccessError} When Deno may not connect.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { ApiClient } from "./api.ts";
 * import { postEvent } from "./events.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const ref = { apiVersion: "v1", kind: "ConfigMap", name: "cm1", namespace: "default", uid: "u1" };
 * const event = await postEvent(new ApiClient({ vault }), { ref, type: "Normal", reason: "Logging", message: "hi" });
 * assert.equal(event?.reportingComponent, "kopf");
 * assert.match(String(event?.metadata?.name), /^kopf-event-/);
 * ```
 */
export async function postEvent(
  api: ApiClient,
  event: EventSpec,
  options: PostEventOptions = {},
): Promise<RawBody | undefined> {
  const { ref, type, reason } = event;
  if (ref.apiVersion === "v1" && ref.kind === "Event") return undefined;

  const namespace = ref.namespace || (await api.defaultNamespace(options.signal)) || "default";
  const message = cutMessage(event.message ?? "");
  const first = isoString(event.firstTimestamp ?? new Date());
  const last = event.lastTimestamp ? isoString(event.lastTimestamp) : first;
  // eventTime is a MicroTime: Kubernetes parses it with exactly six fractional digits.
  const micro = `${first.slice(0, -1)}000Z`; // an ISO string ends with ".mmmZ"
  const posting = options.posting;
  const component = setting(posting, DEFAULTS.posting, "reportingComponent");
  const body = {
    metadata: { namespace, generateName: setting(posting, DEFAULTS.posting, "eventNamePrefix") },
    action: "Action?",
    type,
    reason,
    message,
    ...(event.count !== undefined ? { count: event.count } : {}),
    reportingComponent: component,
    reportingInstance: setting(posting, DEFAULTS.posting, "reportingInstance"),
    source: { component },
    involvedObject: { ...ref, namespace },
    firstTimestamp: first,
    lastTimestamp: last,
    eventTime: micro,
  };
  const resource = options.resource ?? EVENTS_RESOURCE;
  try {
    return await api.request<RawBody>("POST", collectionUrl(resource, namespace), {
      body,
      signal: options.signal,
      priority: options.priority,
    });
  } catch (error) {
    if (!(error instanceof ApiError || error instanceof ApiConnectionError)) throw error;
    if (options.signal?.aborted) return undefined; // stopped on purpose: the caller counts it
    api.logger.warn(
      `Failed to post an event. Ignoring and continuing. ${error.message} ` +
        `Event: type=${JSON.stringify(type)}, reason=${JSON.stringify(reason)}, ` +
        `message=${JSON.stringify(message)}.`,
    );
    return undefined;
  }
}

/** What a repeated event changes in its Event (client-go's patch of a counted event). */
export interface EventRepeat {
  /** The new count. */
  count: number;
  /** When it last occurred. */
  lastTimestamp: Date;
  /** The message (cut to 1024 characters); a combined message may change with each repeat. */
  message: string;
}

/**
 * Bumps an existing Event's `count`, `lastTimestamp` and `message` with a
 * strategic merge patch, as client-go does for an event that occurs again.
 * Failures are logged and swallowed as in {@link postEvent}; a missing Event
 * is not a failure: the caller creates it anew (as client-go does).
 *
 * @param api The API client.
 * @param target The Event's namespace and name.
 * @param repeat The new count, last timestamp and message.
 * @param options The events resource, signal.
 * @returns The patched Event; `null` when it is gone (404); undefined when the patch failed.
 * @throws {LoginError} When no valid credentials are left.
 * @throws {AccessError} When Deno may not connect.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 * import { ApiClient } from "./api.ts";
 * import { patchEvent, postEvent } from "./events.ts";
 *
 * await using server = await startApiServer();
 * using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
 * const api = new ApiClient({ vault });
 * const ref = { apiVersion: "v1", kind: "ConfigMap", name: "cm1", namespace: "default" };
 * const posted = await postEvent(api, { ref, type: "Normal", reason: "Logging", message: "hi", count: 1 });
 * const target = { namespace: "default", name: String(posted?.metadata?.name) };
 * const patched = await patchEvent(api, target, { count: 2, lastTimestamp: new Date(), message: "hi" });
 * assert.equal(patched?.count, 2);
 * assert.equal(await patchEvent(api, { ...target, name: "gone" }, { count: 3, lastTimestamp: new Date(), message: "hi" }), null);
 * ```
 */
export async function patchEvent(
  api: ApiClient,
  target: { namespace: string; name: string },
  repeat: EventRepeat,
  options: Omit<PostEventOptions, "posting"> = {},
): Promise<RawBody | null | undefined> {
  const resource = options.resource ?? EVENTS_RESOURCE;
  const message = cutMessage(repeat.message);
  const body = { count: repeat.count, lastTimestamp: isoString(repeat.lastTimestamp), message };
  try {
    return await api.request<RawBody>(
      "PATCH",
      resource.getUrl({ namespace: target.namespace, name: target.name }),
      {
        body,
        contentType: "application/strategic-merge-patch+json",
        signal: options.signal,
        priority: options.priority,
      },
    );
  } catch (error) {
    if (!(error instanceof ApiError || error instanceof ApiConnectionError)) throw error;
    if (error instanceof ApiError && error.code === 404) return null;
    if (options.signal?.aborted) return undefined;
    api.logger.warn(
      `Failed to update an event. Ignoring and continuing. ${error.message} ` +
        `Event: count=${repeat.count}, message=${JSON.stringify(message)}.`,
    );
    return undefined;
  }
}

/**
 * A time as an ISO string (`toISOString()`'s), its part up to the second
 * kept: formatting a date costs more than the rest of an Event's body, and
 * the Events of a burst are mostly of a few seconds, so that most are the
 * kept part and the milliseconds.
 */
function isoString(date: Date): string {
  const ms = date.getTime();
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond.second) {
    if (!(ms >= 0)) return date.toISOString(); // before 1970 (or invalid: it throws)
    isoSecond.second = second;
    isoSecond.prefix = date.toISOString().slice(0, -4); // up to the dot: "…T03:04:05."
  }
  const milli = ms - second * 1000;
  return `${isoSecond.prefix}${milli < 10 ? "00" : milli < 100 ? "0" : ""}${milli}Z`;
}

const isoSecond = { second: NaN, prefix: "" };

/** The URL of a namespace's events, the last one kept (an operator's Events are mostly in a few namespaces). */
function collectionUrl(resource: Resource, namespace: string): string {
  const last = lastUrl;
  if (last.resource === resource && last.namespace === namespace) return last.url;
  const url = resource.getUrl({ namespace });
  lastUrl = { resource, namespace, url };
  return url;
}

let lastUrl: { resource?: Resource; namespace?: string; url: string } = { url: "" };

/**
 * Cuts a message to {@link MAX_MESSAGE_LENGTH} characters, keeping its start
 * and its end around `...` (as Kopf does).
 *
 * @param message The message.
 * @returns The message, at most 1024 characters long.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cutMessage } from "./events.ts";
 * const cut = cutMessage("a".repeat(600) + "b".repeat(600));
 * assert.deepEqual([cut.length, cut.slice(509, 514)], [1024, "aa..."]);
 * ```
 */
export function cutMessage(message: string): string {
  if (message.length <= MAX_MESSAGE_LENGTH) return message;
  const infix = CUT_MESSAGE_INFIX;
  const head = Math.floor(MAX_MESSAGE_LENGTH / 2) - Math.floor(infix.length / 2);
  const tail = Math.floor(MAX_MESSAGE_LENGTH / 2) - (infix.length - Math.floor(infix.length / 2));
  return `${message.slice(0, head)}${infix}${message.slice(message.length - tail)}`;
}
