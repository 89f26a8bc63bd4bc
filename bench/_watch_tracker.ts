/**
 * The operator benchmark's referee: one watch of its own on the objects,
 * noting when each object first shows its create handler's result in
 * `status` (fully handled: the handler ran and its outcome is stored) and
 * when it is gone (deleted, finalizer released). It judges by what the API
 * server holds, not by what the operator says about itself.
 *
 * @module
 */

import type { BenchClient } from "./_client.ts";

interface Waiter {
  check: () => boolean;
}

/** Watches one collection and records when objects are handled and gone. */
export class WatchTracker implements AsyncDisposable {
  /** Name → when `status.<handler id>` first appeared (epoch ms, sub-ms precision). */
  readonly handled: Map<string, number> = new Map();
  /** Name → when its DELETED event arrived (epoch ms, sub-ms precision). */
  readonly gone: Map<string, number> = new Map();
  #stop: AbortController;
  #waiters: Waiter[] = [];
  #reading: Promise<void>;
  #error: Error | undefined;

  private constructor(response: Response, field: string, stop: AbortController) {
    this.#stop = stop;
    this.#reading = this.#read(response, field).catch((e) => {
      if (!this.#stop.signal.aborted) this.#error = e instanceof Error ? e : new Error(String(e));
    }).finally(() => this.#settle());
  }

  /**
   * Opens a watch from a resourceVersion.
   *
   * @param api The client.
   * @param path The collection's path, e.g. `/apis/kopf.dev/v1/namespaces/ns/kopfexamples`.
   * @param field The `status` field that marks an object as handled (the handler id).
   * @returns The tracker, watching.
   * @throws {Error} If the watch cannot be opened.
   */
  static async open(api: BenchClient, path: string, field: string): Promise<WatchTracker> {
    const list = await api.send("GET", `${path}?limit=1`, { parse: true });
    if (list.status !== 200) throw new Error(`listing ${path} failed with HTTP ${list.status}`);
    const rv = (list.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const stop = new AbortController();
    const response = await api.stream(
      `${path}?watch=1&resourceVersion=${rv}&timeoutSeconds=3600`,
      stop.signal,
    );
    return new WatchTracker(response, field, stop);
  }

  /** Forgets what was seen (between runs whose objects are all gone). */
  reset(): void {
    this.handled.clear();
    this.gone.clear();
  }

  /**
   * Waits until a condition over the records holds.
   *
   * @param check The condition, checked after every chunk of events.
   * @param timeoutMs How long to wait.
   * @param what What is awaited, for the error.
   * @returns When it holds.
   * @throws {Error} On timeout, or if the watch broke.
   */
  until(check: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
    if (this.#error) return Promise.reject(this.#error);
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        check: () => {
          if (this.#error) {
            clearTimeout(timer);
            reject(this.#error);
            return true;
          }
          if (!check()) return false;
          clearTimeout(timer);
          resolve();
          return true;
        },
      };
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what()}`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  async #read(response: Response, field: string): Promise<void> {
    if (!response.ok || !response.body) {
      throw new Error(`the watch failed with HTTP ${response.status}`);
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = "";
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += value;
      let newline: number;
      let start = 0;
      const now = performance.timeOrigin + performance.now();
      while ((newline = buffered.indexOf("\n", start)) >= 0) {
        const line = buffered.slice(start, newline);
        start = newline + 1;
        if (line) this.#note(line, field, now);
      }
      buffered = buffered.slice(start);
      this.#settle();
    }
    if (!this.#stop.signal.aborted) throw new Error("the watch ended early");
  }

  /**
   * Notes one event line. Most lines are neither a deletion nor the first
   * with the handler's result, so they are judged by their text and only the
   * interesting ones are parsed: the referee should not eat the operator's CPU.
   */
  #note(line: string, field: string, now: number): void {
    const deleted = line.startsWith('{"type":"DELETED"');
    if (!deleted && !line.includes(`"${field}"`)) return;
    const event = JSON.parse(line) as {
      type: string;
      object: { metadata?: { name?: string }; status?: object };
    };
    const name = event.object.metadata?.name;
    if (!name) return;
    if (event.type === "DELETED") {
      if (!this.gone.has(name)) this.gone.set(name, now);
    } else if (event.type !== "ERROR" && event.object.status && field in event.object.status) {
      if (!this.handled.has(name)) this.handled.set(name, now);
    }
  }

  #settle(): void {
    if (this.#waiters.length) this.#waiters = this.#waiters.filter((w) => !w.check());
  }

  /** Closes the watch. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.#stop.abort();
    await this.#reading;
  }
}
