/**
 * Optional persistence for the embedded API server (`--data-dir`): a snapshot
 * of all objects plus an append-only log of every committed change since the
 * snapshot. A change is appended before the request that made it is answered,
 * so no acknowledged write is lost on a clean stop (or a crash of the process:
 * the log is in the OS's hands once written). A clean stop writes a fresh
 * snapshot atomically (temp file, then rename) and empties the log.
 *
 * @module
 */

import { Store } from "./store.ts";
import type { Change, KObject } from "./store.ts";

const SNAPSHOT = "snapshot.json";
const LOG = "changes.jsonl";

interface Snapshot {
  format: 1;
  resourceVersion: number;
  objects: Array<{ key: string; object: KObject }>;
}

/**
 * A data directory holding the API server's state.
 *
 * @example
 * ```ts
 * import { DataDir } from "./persistence.ts";
 * const dir = await Deno.makeTempDir();
 * const data = new DataDir(dir);
 * const store = data.load();
 * data.attach(store);
 * store.commit("ADDED", "configmaps", { metadata: { name: "a", namespace: "default" } });
 * data.close(store);
 * console.log(new DataDir(dir).load().get("configmaps", "default", "a") !== undefined); // true
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class DataDir {
  readonly path: string;
  #log: Deno.FsFile | undefined;
  #encoder = new TextEncoder();

  /** @param path The directory (created if missing). */
  constructor(path: string) {
    this.path = path;
  }

  /**
   * Loads the snapshot and replays the log into a new store.
   *
   * @param historySize The store's history size.
   * @returns The store with every persisted object.
   * @throws {Error} With the file and line when the data is unreadable.
   */
  load(historySize?: number): Store {
    Deno.mkdirSync(this.path, { recursive: true });
    const store = new Store(historySize !== undefined ? { historySize } : {});
    const objects = new Map<string, { key: string; object: KObject }>();
    const id = (key: string, o: KObject) =>
      `${key}\0${o.metadata.namespace ?? ""}\0${o.metadata.name}`;
    let rv = 0;
    const snapshotText = readIfExists(`${this.path}/${SNAPSHOT}`);
    if (snapshotText) {
      let snap: Snapshot;
      try {
        snap = JSON.parse(snapshotText);
      } catch (e) {
        throw new Error(
          `${this.path}/${SNAPSHOT} is not valid JSON (${
            (e as Error).message
          }): move it away to start empty`,
        );
      }
      rv = snap.resourceVersion;
      for (const entry of snap.objects) objects.set(id(entry.key, entry.object), entry);
    }
    const logText = readIfExists(`${this.path}/${LOG}`);
    if (logText) {
      const lines = logText.split("\n");
      lines.forEach((line, i) => {
        if (!line.trim()) return;
        let change: { type: string; key: string; rv: number; object: KObject };
        try {
          change = JSON.parse(line);
        } catch {
          // A torn last line (the process died mid-write) was never acknowledged: skip it.
          if (i >= lines.length - 2) return;
          throw new Error(
            `${this.path}/${LOG}:${
              i + 1
            } is not valid JSON: move the data directory away to start empty`,
          );
        }
        rv = Math.max(rv, change.rv);
        if (change.type === "DELETED") objects.delete(id(change.key, change.object));
        else objects.set(id(change.key, change.object), { key: change.key, object: change.object });
      });
    }
    for (const { key, object } of objects.values()) store.load(key, object);
    store.restoreResourceVersion(rv);
    return store;
  }

  /**
   * Starts logging every committed change of the store.
   *
   * @param store The store loaded from this directory.
   */
  attach(store: Store): void {
    this.#log = Deno.openSync(`${this.path}/${LOG}`, { append: true, create: true });
    store.onCommit((change) => this.#append(change));
  }

  #append(change: Change): void {
    if (!this.#log) return;
    const line =
      JSON.stringify({ type: change.type, key: change.key, rv: change.rv, object: change.object }) +
      "\n";
    const bytes = this.#encoder.encode(line);
    let written = 0;
    while (written < bytes.length) written += this.#log.writeSync(bytes.subarray(written));
  }

  /**
   * Writes a fresh snapshot and empties the log (a clean stop).
   *
   * @param store The store.
   */
  close(store: Store): void {
    const snap: Snapshot = { format: 1, resourceVersion: store.resourceVersion, objects: [] };
    for (const key of store.keys()) {
      for (const object of store.list(key)) snap.objects.push({ key, object });
    }
    const tmp = `${this.path}/${SNAPSHOT}.tmp`;
    Deno.writeTextFileSync(tmp, JSON.stringify(snap));
    Deno.renameSync(tmp, `${this.path}/${SNAPSHOT}`);
    this.#log?.close();
    this.#log = undefined;
    Deno.writeTextFileSync(`${this.path}/${LOG}`, "");
  }
}

function readIfExists(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}
