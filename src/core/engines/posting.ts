/**
 * Kubernetes Events about objects: from the per-object loggers (records at or
 * above `settings.posting.level`) and from `kopf.event/info/warn/exception`.
 * Events are queued and posted in the background by one task per operator,
 * so a handler never waits for them and a failing post never fails a handler.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { buildObjectReference } from "../../cogs/structs/bodies.ts";
import type { AnyObject } from "../actions/invocation.ts";
import { type Level, levelAtLeast, type ObjectRef } from "../actions/loggers.ts";

/** One event to post. */
export interface PendingEvent {
  ref: ObjectRef;
  type: string;
  reason: string;
  message: string;
}

/** Sends one event to the API (implemented over the client; failures are the poster's to log). */
export type EventSender = (event: PendingEvent, signal: AbortSignal) => Promise<void>;

/** What `kopf.event()` needs from the running operator (filled in as the operator starts). */
export interface PostingScope {
  poster: EventPoster | undefined;
  /** The current posting settings (they may change in startup handlers). */
  posting: () => { enabled: boolean; level: string };
}

/** The operator that the current code runs in (for `kopf.event()` inside handlers). */
export const postingScope: AsyncLocalStorage<PostingScope> = new AsyncLocalStorage<PostingScope>();

/**
 * The event queue of an operator and its posting task.
 *
 * @example
 * ```ts
 * import { EventPoster } from "./posting.ts";
 * const sent: string[] = [];
 * const poster = new EventPoster(async (e) => { sent.push(e.message); });
 * poster.post({ name: "x" }, "Normal", "Reason", "Hello");
 * await poster.close();
 * console.log(sent); // ["Hello"]
 * ```
 */
export class EventPoster {
  #queue: PendingEvent[] = [];
  #send: EventSender;
  #wake: (() => void) | undefined;
  #stop = new AbortController();
  #closing = false;
  #task: Promise<void>;
  #onError: (error: unknown) => void;
  /** How many events were posted and failed. */
  readonly counts = { posted: 0, failed: 0 };

  /**
   * @param send Sends one event.
   * @param onError Receives errors of failed posts (default: ignored).
   */
  constructor(send: EventSender, onError: (error: unknown) => void = () => {}) {
    this.#send = send;
    this.#onError = onError;
    this.#task = this.#run();
  }

  /**
   * Queues an event (never blocks, never throws).
   *
   * @param ref The object.
   * @param type Normal, Warning, or Error.
   * @param reason The reason.
   * @param message The message (cut to 1024 characters when posted).
   */
  post(ref: ObjectRef, type: string, reason: string, message: string): void {
    if (this.#closing) return;
    this.#queue.push({ ref, type, reason, message });
    this.#wake?.();
  }

  /** Posts what is queued, then stops. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#wake?.();
    const timer = setTimeout(() => this.#stop.abort(), 5000);
    await this.#task;
    clearTimeout(timer);
  }

  async #run(): Promise<void> {
    while (true) {
      if (!this.#queue.length) {
        if (this.#closing) return;
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
        continue;
      }
      const event = this.#queue.shift()!;
      try {
        await this.#send(event, this.#stop.signal);
        this.counts.posted++;
      } catch (e) {
        this.counts.failed++;
        if (this.#stop.signal.aborted) return;
        this.#onError(e);
      }
    }
  }
}

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
