/**
 * Kubernetes Events about objects: from the per-object loggers (records at or
 * above `settings.posting.level`) and from `kopf.event/info/warn/exception`.
 * Both go to the operator's event recorder (`event_recorder.ts`), which
 * correlates them as client-go does and writes them in the background, so a
 * handler never waits for them and a failing post never fails a handler.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { buildObjectReference } from "../../cogs/structs/bodies.ts";
import type { AnyObject } from "../actions/invocation.ts";
import { type Level, levelAtLeast } from "../actions/loggers.ts";
import type { EventRecorder } from "./event_recorder.ts";

/** What `kopf.event()` needs from the running operator (filled in as the operator starts). */
export interface PostingScope {
  /** The operator's event recorder (see `event_recorder.ts`). */
  poster: Pick<EventRecorder, "post"> | undefined;
  /** The current posting settings (they may change in startup handlers). */
  posting: () => { enabled: boolean; level: string };
}

/** The operator that the current code runs in (for `kopf.event()` inside handlers). */
export const postingScope: AsyncLocalStorage<PostingScope> = new AsyncLocalStorage<PostingScope>();

const LEVEL_OF_TYPE: Record<string, Level> = { Normal: "info", Warning: "warning", Error: "error" };

/**
 * Posts a Kubernetes Event about one or several objects (`kopf.event`),
 * through the operator running the current handler. Honours
 * `settings.posting.enabled` and `settings.posting.level` as Kopf does.
 *
 * @param objs An object (a body with apiVersion, kind, metadata) or a list of them.
 * @param event The type, reason and message.
 * @throws {Error} When called outside of a running operator.
 */
export function event(
  objs: AnyObject | AnyObject[],
  event: { type: string; reason: string; message?: string },
): void {
  const scope = postingScope.getStore();
  if (!scope?.poster) {
    throw new Error(
      "kopf.event() works only inside a running operator (in a handler or a task it started)",
    );
  }
  const posting = scope.posting();
  const level = LEVEL_OF_TYPE[event.type] ?? "info";
  if (!posting.enabled || !levelAtLeast(level, posting.level as Level)) return;
  for (const obj of Array.isArray(objs) ? objs : [objs]) {
    scope.poster!.post(buildObjectReference(obj), event.type, event.reason, event.message ?? "");
  }
}

/**
 * Posts a Normal event (`kopf.info`).
 *
 * @param objs The object(s).
 * @param event The reason and message.
 */
export function info(
  objs: AnyObject | AnyObject[],
  event: { reason: string; message?: string },
): void {
  postEvent(objs, { type: "Normal", ...event });
}

/**
 * Posts a Warning event (`kopf.warn`).
 *
 * @param objs The object(s).
 * @param event The reason and message.
 */
export function warn(
  objs: AnyObject | AnyObject[],
  event: { reason: string; message?: string },
): void {
  postEvent(objs, { type: "Warning", ...event });
}

/**
 * Posts an Error event with an error's text appended (`kopf.exception`).
 *
 * @param objs The object(s).
 * @param event The reason, message and error.
 */
export function exception(
  objs: AnyObject | AnyObject[],
  event: { reason?: string; message?: string; error?: unknown } = {},
): void {
  const error = event.error;
  const text = error instanceof Error ? error.message : error !== undefined ? String(error) : "";
  const message = [event.message ?? "", text].filter(Boolean).join(" ");
  postEvent(objs, { type: "Error", reason: event.reason ?? "", message });
}

const postEvent = event;
