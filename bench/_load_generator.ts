/**
 * The main thread's handle on the load generator worker (`_load_worker.ts`):
 * each method posts one request to the worker and resolves with its answer.
 * The operator under test runs in a process of its own; the worker keeps the
 * load (and its steady-rate timing) off the event loop of the main thread,
 * which drives the benchmark and reads the processes' counters.
 *
 * @module
 */

/** When a batch of requests started and finished (epoch ms). */
export interface Span {
  started: number;
  finished: number;
}

/** Creates, deletes and watches the benchmark's objects from a worker thread. */
export class LoadGenerator implements AsyncDisposable {
  #worker: Worker;
  #next = 0;
  #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor() {
    this.#worker = new Worker(new URL("./_load_worker.ts", import.meta.url).href, {
      type: "module",
    });
    this.#worker.onmessage = (e: MessageEvent) => {
      const { id, result, error } = e.data as { id: number; result?: unknown; error?: string };
      const call = this.#pending.get(id);
      this.#pending.delete(id);
      if (error !== undefined) call?.reject(new Error(error));
      else call?.resolve(result);
    };
    this.#worker.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      for (const call of this.#pending.values()) {
        call.reject(new Error(`the load generator failed: ${e.message}`));
      }
      this.#pending.clear();
    };
  }

  /**
   * Starts the worker and its watch of the collection.
   *
   * @param url The server's base URL.
   * @param collection The collection's path.
   * @param field The `status` field that marks an object as fully handled.
   * @returns The generator.
   */
  static async start(url: string, collection: string, field: string): Promise<LoadGenerator> {
    const generator = new LoadGenerator();
    await generator.#call("open", url, collection, field);
    return generator;
  }

  #call<T>(method: string, ...args: unknown[]): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#worker.postMessage({ id, method, args });
    });
  }

  /** Creates the objects, `concurrency` requests in flight. @returns When it started and ended. */
  create(names: string[], concurrency: number): Promise<Span> {
    return this.#call("create", names, concurrency);
  }

  /** Deletes the objects, `concurrency` requests in flight. @returns When it started and ended. */
  remove(names: string[], concurrency: number): Promise<Span> {
    return this.#call("remove", names, concurrency);
  }

  /**
   * Creates the objects at a steady rate (open loop).
   *
   * @returns When each POST was sent (epoch ms), and how late the latest one was (ms).
   */
  steady(names: string[], rate: number): Promise<{ sent: number[]; maxSendDelay: number }> {
    return this.#call("steady", names, rate);
  }

  /**
   * Waits until the server shows every object handled, or gone.
   *
   * @returns When the last one was seen so (epoch ms).
   * @throws {Error} On timeout.
   */
  awaitAll(
    names: string[],
    which: "handled" | "gone",
    timeoutMs: number,
  ): Promise<{ last: number }> {
    return this.#call("awaitAll", names, which, timeoutMs);
  }

  /** Forgets what the watch saw (between runs). */
  reset(): Promise<void> {
    return this.#call("reset");
  }

  /** Closes the watch and stops the worker. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#call("close").catch(() => {});
    this.#worker.terminate();
  }
}
