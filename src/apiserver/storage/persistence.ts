/**
 * Optional persistence for the embedded API server (`--data-dir`).
 *
 * ## The promise
 *
 * A write is answered with success only after its change is durable: with the
 * default `fsync: "group"`, the change's line is in the change log and the log
 * has been `fdatasync`ed; a write that cannot be stored (a full disk, an I/O
 * error) is refused with a 500 and leaves no trace, in memory or on disk. So
 * an acknowledged write survives a crash of the process (kill -9) and of the
 * machine (power loss). A refused write is never served, watched or loaded.
 *
 * Caveats: with `"group"`, other readers and watchers may see a change a few
 * milliseconds before it is durable (while its fdatasync runs). If the machine
 * loses power in that window, the change is gone after the restart, though it
 * was seen — but it was never acknowledged to its writer. When an fdatasync
 * fails, the writers waiting on it get a 500 (their changes stay in memory:
 * whether they reached the disk is unknown) and the directory refuses every
 * later write until a restart: a failed fsync is not retried, as the kernel
 * may have dropped the pages. Compaction runs synchronously inside a commit:
 * with a large store (hundreds of MiB), that one write waits for the snapshot.
 *
 * ## Modes (`fsync`)
 * - `"group"` (default): the line is written synchronously when the change is
 *   committed (so a full disk refuses the change); one `fdatasync` is shared by
 *   every change written while the previous one ran; the server awaits
 *   {@link DataDir.flushed} before answering a mutating request.
 * - `"write"`: an `fdatasync` per change, inside the commit (blocks the event
 *   loop for each write; slower under concurrency, same promise).
 * - `"off"`: no `fdatasync` of the log: an acknowledged write survives a crash
 *   of the process (the line is in the OS's page cache), not a power loss.
 *   Snapshots are always fsynced.
 *
 * ## Files (0600, in a directory created 0700)
 * - `snapshot.jsonl`: a header line `{"format":2,"resourceVersion":R}`, one
 *   line `{"key","object"}` per object, a trailer `{"end":true,"objects":N}`.
 * - `changes.jsonl`: one line per committed change since (or a bit before) the
 *   snapshot: `{"type","key","rv","object"}`. Lines with `rv <= R` are already
 *   in the snapshot and are skipped on load.
 * - `snapshot.json`: the format-1 snapshot of earlier versions; read if no
 *   `snapshot.jsonl` exists, removed by the first compaction.
 *
 * Both are read line by line (never as one string: a log may be far larger
 * than V8's largest string, a line up to ~1.5 MiB).
 *
 * ## Torn lines
 * A change is appended as one line ending in `\n`. A crash mid-append leaves a
 * torn tail (no `\n`, or garbage after a power loss); it was never
 * acknowledged, and load truncates it so the next append starts on a fresh
 * line. A bad line followed by good ones is damage, not a crash: load refuses
 * with one line naming `file:line`. A failed append (ENOSPC) is cut back to
 * the last good length at once; if even that fails, the directory refuses all
 * writes until a restart (whose load drops the torn tail).
 *
 * ## Compaction, and why it is crash-safe
 * When the log grows over max(`compactBytes` = 64 MiB, 2 × the snapshot), the
 * next commit first (synchronously, with the store as of the last change):
 * 1. writes `snapshot.jsonl.tmp`, fsyncs it;
 * 2. renames it over `snapshot.jsonl`, fsyncs the directory;
 * 3. truncates `changes.jsonl` to empty.
 *
 * A crash before 2 leaves the old snapshot and the whole log; after 2 and
 * before 3, the new snapshot and a log whose every line has `rv <= R` (skipped
 * on load); after 3, the new snapshot and an empty log. Each of these loads to
 * the same state. A clean stop compacts the same way.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import { Store } from "./store.ts";
import type { Change, KObject } from "../shared/types.ts";
import {
  exists,
  firstLine,
  parseLine,
  readLines,
  removeIfExists,
  syncDir,
  tighten,
} from "./data_files.ts";
import {
  LEGACY_SNAPSHOT,
  readLegacySnapshot,
  readSnapshot,
  SNAPSHOT,
  writeSnapshot,
} from "./snapshots.ts";

const LOG = "changes.jsonl";

/** How the change log is made durable; see the module doc. */
export type FsyncMode = "group" | "write" | "off";

/** Options of a {@link DataDir}. */
export interface DataDirOptions {
  /** When an acknowledged change is on disk (default `"group"`: before the answer). */
  fsync?: FsyncMode;
  /** Compact when the log is over max(this, 2 × the snapshot), in bytes (default 64 MiB). */
  compactBytes?: number;
  /** Where one-line notices go (a torn tail dropped, a failed compaction); default console.error. */
  warn?: (line: string) => void;
}

interface LogLine {
  type: Change["type"];
  key: string;
  rv: number;
  object: KObject;
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
 * await data.flushed(); // durable from here on
 * // A crash now (no close): the log alone brings the object back.
 * const again = new DataDir(dir).load();
 * if (again.get("configmaps", "default", "a") === undefined) throw new Error("lost");
 * data.close(store);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class DataDir {
  /** The directory. */
  readonly path: string;
  /** How many compactions ran while attached (not counting the clean stop's). */
  compactions = 0;
  #fsync: FsyncMode;
  #compactBytes: number;
  #warn: (line: string) => void;
  #store: Store | undefined;
  #log: Deno.FsFile | undefined;
  #logBytes = 0;
  #snapshotBytes = 0;
  #encoder = new TextEncoder();
  /** Why the directory refuses writes (an fsync failed, or a failed append could not be cut back). */
  #broken: Error | undefined;
  #appended = 0;
  #synced = 0;
  #waiters: Array<{ upTo: number; resolve: () => void; reject: (e: Error) => void }> = [];
  #syncing = false;

  /**
   * @param path The directory (created 0700 if missing).
   * @param options Durability mode, compaction threshold, notices.
   */
  constructor(path: string, options: DataDirOptions = {}) {
    this.path = path;
    this.#fsync = options.fsync ?? "group";
    this.#compactBytes = options.compactBytes ?? 64 * 1024 * 1024;
    this.#warn = options.warn ?? ((line) => console.error(line));
  }

  /** How the log is made durable. */
  get fsync(): FsyncMode {
    return this.#fsync;
  }

  /**
   * Loads the snapshot and replays the log into a new store. A torn tail of
   * the log (a crash mid-append) is cut off; the files are made 0600.
   *
   * @param historySize The store's history size.
   * @returns The store with every persisted object.
   * @throws {Error} One line naming the file (and line) and what to do, when the data is damaged.
   */
  load(historySize?: number): Store {
    try {
      return this.#load(historySize);
    } catch (e) {
      if (e instanceof Error && e.message.startsWith(this.path)) throw e;
      throw new Error(
        `${this.path} cannot be loaded (${
          firstLine(e)
        }): give the server read and write access to it and its files`,
        { cause: e },
      );
    }
  }

  #load(historySize?: number): Store {
    Deno.mkdirSync(this.path, { recursive: true, mode: 0o700 });
    removeIfExists(`${this.path}/${SNAPSHOT}.tmp`);
    const objects = new Map<string, { key: string; object: KObject }>();
    const id = (key: string, o: KObject) =>
      `${key}\0${o.metadata.namespace ?? ""}\0${o.metadata.name}`;
    let snapshotRv = 0;
    const snapshotPath = `${this.path}/${SNAPSHOT}`;
    if (exists(snapshotPath)) {
      tighten(snapshotPath);
      this.#snapshotBytes = Deno.statSync(snapshotPath).size;
      snapshotRv = readSnapshot(snapshotPath, (entry) => {
        objects.set(id(entry.key, entry.object), entry);
      });
    } else if (exists(`${this.path}/${LEGACY_SNAPSHOT}`)) {
      const legacyPath = `${this.path}/${LEGACY_SNAPSHOT}`;
      tighten(legacyPath);
      snapshotRv = readLegacySnapshot(legacyPath, (entry) => {
        objects.set(id(entry.key, entry.object), entry);
      });
      this.#snapshotBytes = Deno.statSync(legacyPath).size;
    }
    let rv = snapshotRv;
    const logPath = `${this.path}/${LOG}`;
    if (exists(logPath)) {
      tighten(logPath);
      let firstBad: { line: number; offset: number } | undefined;
      const end = readLines(logPath, (bytes, line, offset) => {
        const change = parseLine(bytes) as LogLine | undefined;
        if (!change || typeof change.rv !== "number" || !change.object?.metadata) {
          firstBad ??= { line, offset };
          return;
        }
        if (firstBad) {
          throw new Error(
            `${logPath}:${firstBad.line} is damaged (not a change, yet changes follow it): ` +
              `cut the file before that line to keep the changes before it, or move the data directory away to start empty`,
          );
        }
        if (change.rv <= snapshotRv) return; // already in the snapshot (a crash mid-compaction)
        rv = Math.max(rv, change.rv);
        if (change.type === "DELETED") objects.delete(id(change.key, change.object));
        else objects.set(id(change.key, change.object), change);
      });
      const good = firstBad?.offset ?? end.complete;
      if (good < end.size) {
        const f = Deno.openSync(logPath, { write: true });
        try {
          f.truncateSync(good);
          f.syncSync();
        } finally {
          f.close();
        }
        this.#warn(
          `${logPath}: dropped a torn last change (${
            end.size - good
          } bytes, never acknowledged: a crash mid-write)`,
        );
      }
      this.#logBytes = good;
    }
    const store = new Store(historySize !== undefined ? { historySize } : {});
    for (const { key, object } of objects.values()) store.load(key, object);
    store.restoreResourceVersion(rv);
    return store;
  }

  /**
   * Starts logging every change of the store: each is appended to the log
   * before it is applied (a store guard), so one that cannot be stored is
   * refused with a 500 and never seen.
   *
   * @param store The store loaded from this directory.
   */
  attach(store: Store): void {
    const logPath = `${this.path}/${LOG}`;
    const created = !exists(logPath);
    this.#log = Deno.openSync(logPath, { append: true, create: true, mode: 0o600 });
    this.#logBytes = this.#log.statSync().size;
    if (created) syncDir(this.path);
    this.#store = store;
    store.guard((change, encoded) => this.#append(change, encoded));
  }

  /**
   * Resolves when every change appended so far is durable (at once with
   * `fsync: "off"` or `"write"`): the server awaits it before answering a
   * mutating request. Changes appended while one `fdatasync` runs share the
   * next one.
   *
   * @returns A promise of durability.
   * @throws {ApiError} 500 (rejected) when the fdatasync failed.
   */
  flushed(): Promise<void> {
    if (this.#synced >= this.#appended) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#waiters.push({ upTo: this.#appended, resolve, reject });
      if (!this.#syncing) void this.#syncLoop();
    });
  }

  /**
   * Writes a fresh snapshot and empties the log (a clean stop). When the
   * snapshot cannot be written, the log is kept (it holds every change) and
   * a notice says why.
   *
   * @param store The store.
   */
  close(store: Store): void {
    try {
      if (!this.#broken) {
        this.#snapshotBytes = writeSnapshot(this.path, store);
        this.#log?.truncateSync(0);
        this.#logBytes = 0;
      }
    } catch (e) {
      this.#warn(
        `${this.path}: the snapshot at stop could not be written (${
          firstLine(e)
        }); the change log keeps every change`,
      );
    }
    this.#log?.close();
    this.#log = undefined;
    this.#synced = this.#appended;
    for (const w of this.#waiters.splice(0)) w.resolve();
  }

  #append(change: Change, encoded: string): void {
    const log = this.#log;
    if (!log) return;
    if (this.#broken) throw this.#storageError(this.#broken);
    if (this.#logBytes > Math.max(this.#compactBytes, 2 * this.#snapshotBytes)) this.#compact();
    const bytes = this.#encoder.encode(
      `{"type":"${change.type}","key":${
        JSON.stringify(change.key)
      },"rv":${change.rv},"object":${encoded}}\n`,
    );
    const start = this.#logBytes;
    try {
      let written = 0;
      while (written < bytes.length) written += log.writeSync(bytes.subarray(written));
    } catch (e) {
      this.#cutBack(log, start, e);
      throw this.#storageError(e);
    }
    if (this.#fsync === "write") {
      try {
        log.syncDataSync();
      } catch (e) {
        this.#cutBack(log, start, e);
        // An fsync error is not retried: the kernel may have dropped the pages (fsyncgate).
        this.#broken ??= e instanceof Error ? e : new Error(String(e));
        throw this.#storageError(e);
      }
    }
    this.#logBytes = start + bytes.length;
    this.#appended++;
    if (this.#fsync !== "group") this.#synced = this.#appended;
  }

  /** Cuts a failed append off, so that the next one starts on a fresh line. */
  #cutBack(log: Deno.FsFile, length: number, cause: unknown): void {
    try {
      log.truncateSync(length);
    } catch (e) {
      this.#broken = new Error(
        `${firstLine(cause)}, and the torn change could not be cut off (${
          firstLine(e)
        }): restart the server`,
      );
    }
  }

  #storageError(cause: unknown): ApiError {
    return new ApiError(
      500,
      "InternalError",
      `the data directory ${this.path} could not store the change (${
        firstLine(cause)
      }): free space or fix the disk there; the change was not applied`,
    );
  }

  async #syncLoop(): Promise<void> {
    this.#syncing = true;
    try {
      while (this.#waiters.length) {
        const upTo = this.#appended;
        const log = this.#log;
        try {
          if (log && !this.#broken) await log.syncData();
          else if (this.#broken) throw this.#broken;
        } catch (e) {
          this.#broken ??= e instanceof Error ? e : new Error(String(e));
          const error = new ApiError(
            500,
            "InternalError",
            `the data directory ${this.path} could not make the change durable (${
              firstLine(e)
            }): fix the disk there and restart the server`,
          );
          for (const w of this.#waiters.splice(0)) w.reject(error);
          return;
        }
        this.#synced = Math.max(this.#synced, upTo);
        this.#waiters = this.#waiters.filter((w) => {
          if (w.upTo > this.#synced) return true;
          w.resolve();
          return false;
        });
      }
    } finally {
      this.#syncing = false;
    }
  }

  /** Snapshot and truncate while running; a failure is a notice, and the log keeps growing. */
  #compact(): void {
    try {
      this.#snapshotBytes = writeSnapshot(this.path, this.#store!);
      this.#log!.truncateSync(0);
      this.#logBytes = 0;
      this.compactions++;
    } catch (e) {
      // Try again once the log has grown by another quarter.
      this.#compactBytes = Math.max(this.#compactBytes, this.#logBytes * 1.25);
      this.#warn(
        `${this.path}: compaction failed (${
          firstLine(e)
        }); the change log keeps every change and grows`,
      );
    }
  }
}
