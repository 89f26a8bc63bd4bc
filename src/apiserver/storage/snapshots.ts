/**
 * The snapshots of the data directory (`persistence.ts`): `snapshot.jsonl`
 * written crash-safely (a temp file, fsynced, renamed, the directory fsynced)
 * and read back line by line with its end line checked, and the format-1
 * `snapshot.json` of earlier versions read for an upgrade.
 *
 * @module
 */

import { jsonProblem } from "./_json_problem.ts";
import type { Store } from "./store.ts";
import type { KObject } from "../shared/types.ts";
import { parseLine, readLines, removeIfExists, syncDir } from "./data_files.ts";

/** The snapshot file. */
export const SNAPSHOT = "snapshot.jsonl";
/** The format-1 snapshot of earlier versions. */
export const LEGACY_SNAPSHOT = "snapshot.json";

const encoder = new TextEncoder();

/**
 * Writes the snapshot of a store into a data directory: a temp file, fsynced,
 * renamed, the directory fsynced; the format-1 snapshot is removed.
 *
 * @returns The snapshot's size in bytes.
 */
export function writeSnapshot(dir: string, store: Store): number {
  const tmp = `${dir}/${SNAPSHOT}.tmp`;
  const file = Deno.openSync(tmp, { write: true, create: true, truncate: true, mode: 0o600 });
  let size = 0;
  try {
    const chunks: string[] = [];
    let pending = 0;
    const flush = () => {
      const bytes = encoder.encode(chunks.join(""));
      let written = 0;
      while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
      size += bytes.length;
      chunks.length = 0;
      pending = 0;
    };
    const put = (line: string) => {
      chunks.push(line);
      pending += line.length;
      if (pending > 1 << 20) flush();
    };
    put(`{"format":2,"resourceVersion":${store.resourceVersion}}\n`);
    let n = 0;
    for (const key of store.keys()) {
      const k = JSON.stringify(key);
      for (const object of store.list(key)) {
        put(`{"key":${k},"object":${JSON.stringify(object)}}\n`);
        n++;
      }
    }
    put(`{"end":true,"objects":${n}}\n`);
    flush();
    file.syncSync();
  } catch (e) {
    file.close();
    removeIfExists(tmp);
    throw e;
  }
  file.close();
  Deno.renameSync(tmp, `${dir}/${SNAPSHOT}`);
  syncDir(dir);
  if (removeIfExists(`${dir}/${LEGACY_SNAPSHOT}`)) syncDir(dir);
  return size;
}

/**
 * Reads a format-2 snapshot line by line.
 *
 * @returns Its resource version.
 * @throws {Error} One line naming the file and line, when it is damaged or incomplete.
 */
export function readSnapshot(
  path: string,
  put: (entry: { key: string; object: KObject }) => void,
): number {
  let rv: number | undefined;
  let ended = false;
  let count = 0;
  const damaged = (line: number) =>
    new Error(
      `${path}:${line} is damaged: restore the file from a backup, or move the data directory away to start empty`,
    );
  readLines(path, (bytes, line) => {
    const entry = parseLine(bytes) as
      | { format?: number; resourceVersion?: number; end?: boolean; objects?: number }
      | { key: string; object: KObject }
      | undefined;
    if (!entry || ended) throw damaged(line);
    if (line === 1) {
      if (!("format" in entry) || entry.format !== 2) throw damaged(line);
      rv = entry.resourceVersion ?? 0;
    } else if ("end" in entry) {
      if (entry.objects !== count) throw damaged(line);
      ended = true;
    } else if ("key" in entry && entry.object?.metadata) {
      put(entry);
      count++;
    } else throw damaged(line);
  });
  if (rv === undefined || !ended) {
    throw new Error(
      `${path} is incomplete (no end line): restore the file from a backup, or move the data directory away to start empty`,
    );
  }
  return rv;
}

/**
 * Reads the format-1 snapshot (`snapshot.json`) of earlier versions.
 *
 * @returns Its resource version.
 * @throws {Error} One line naming the file and what to do, when it is not a snapshot.
 */
export function readLegacySnapshot(
  path: string,
  put: (entry: { key: string; object: KObject }) => void,
): number {
  let snap: { resourceVersion: number; objects: Array<{ key: string; object: KObject }> };
  const fix = "restore it from a backup, or move the data directory away to start empty";
  const text = Deno.readTextFileSync(path);
  try {
    snap = JSON.parse(text);
  } catch (e) {
    // JSON.parse's message quotes the text (new lines, binary): the position and words instead.
    throw new Error(`${path} is not valid JSON (${jsonProblem(text, e)}): ${fix}`, { cause: e });
  }
  const entries: unknown = (snap as { objects?: unknown } | null)?.objects;
  const broken = Array.isArray(entries)
    ? entries.findIndex((e) => typeof e?.key !== "string" || !e?.object?.metadata)
    : -1;
  const bad = !Array.isArray(entries)
    ? 'no "objects" list'
    : broken >= 0
    ? `objects[${broken}] is not a key and an object`
    : typeof snap.resourceVersion !== "number"
    ? 'no "resourceVersion" number'
    : undefined;
  if (bad) throw new Error(`${path} is not a snapshot of the API server (${bad}): ${fix}`);
  for (const entry of snap.objects) put(entry);
  return snap.resourceVersion;
}
