/**
 * Skipping watch events undecoded: a replica of a shard group receives every event of every
 * object, and most are of objects another replica owns. Such an event is told from its line, with
 * the runtime's own string search and no JSON decoding: the line's uid candidates — every
 * `"uid":"…"` in it — are asked about, and only when every one of them is to be skipped is the
 * line left undecoded: a {@link SKIPPED} event then stands for it, with the line's
 * resourceVersion if it has exactly one (the watch resumes from there), else none.
 *
 * Why every candidate, and not the first: the key `uid` is also an owner reference's (and may
 * be any nested field's), and its order among the metadata's keys is the server's (a custom
 * resource's metadata comes sorted: `ownerReferences` before `uid`). The object's own uid is
 * always one of the candidates (a key `"uid"` with whatever spacing; a line with a `\u` escape,
 * which could spell the key otherwise, is decoded); a candidate not in the compact spelling
 * servers send (`"uid":"…"`), a uid that is not a plain string, and a candidate that is not to
 * be skipped — a nested `uid` — decode the line: a wrong skip cannot come of it, only a decoded
 * line more. (An object with no uid of its own is no Kubernetes object: it is skipped if its
 * nested uids all are.) The cost: a few searches of the line by the runtime and one hash of the
 * uid, about a third of what decoding the line costs, and none of what follows a decoded event
 * (the watcher's inventory, the per-object queues).
 *
 * Only ADDED and MODIFIED lines in the compact spelling servers send
 * (`{"type":"ADDED",…`) are skipped; DELETED, BOOKMARK and ERROR lines, and any other
 * spelling, are decoded as before.
 *
 * @module
 */

import type { RawWatchEvent } from "./watch_events.ts";

/** The event that stands for a skipped line: its type is not a server's. */
export const SKIPPED = "SKIPPED";

/** The keys looked for, without their opening quote: searched from a rarer first character. */
const UID = 'uid"';
const RV = 'resourceVersion"';
const QUOTE = 0x22;
const COLON = 0x3a;
/** One shared stand-in for the lines without a resourceVersion (nothing to keep per line). */
const BARE: RawWatchEvent = Object.freeze({
  type: SKIPPED,
  object: Object.freeze({ metadata: Object.freeze({}) }),
}) as RawWatchEvent;

/**
 * A line prefilter (for the `JsonLineSplitter`) that skips the events of the objects `skip`
 * says to skip (see the module doc).
 *
 * @param skip Whether to skip an object by its uid.
 * @returns The prefilter: a {@link SKIPPED} event for a skipped line, undefined for a line to
 *   decode.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { skippingLines } from "./watch_skipping.ts";
 * const skip = skippingLines((uid) => uid !== "mine");
 * const line = (uid: string) =>
 *   `{"type":"MODIFIED","object":{"metadata":{"uid":"${uid}","resourceVersion":"7"}}}`;
 * assert.deepEqual(skip(line("theirs")), { type: "SKIPPED", object: { metadata: { resourceVersion: "7" } } });
 * assert.equal(skip(line("mine")), undefined); // decoded
 * // An owner reference's uid is a candidate too: one that is not skipped decodes the line.
 * const owned = `{"type":"ADDED","object":{"metadata":{"ownerReferences":[{"uid":"mine"}],"uid":"theirs"}}}`;
 * assert.equal(skip(owned), undefined);
 * assert.equal(skip('{"type":"DELETED","object":{"metadata":{"uid":"theirs"}}}'), undefined);
 * ```
 */
export function skippingLines(skip: (uid: string) => boolean): (line: string) => unknown {
  return (line) => {
    if (!line.startsWith('{"type":"MODIFIED"') && !line.startsWith('{"type":"ADDED"')) {
      return undefined;
    }
    // A \u escape may spell a key ("\u0075id"): decoded.
    if (line.includes("\\u")) return undefined;
    let candidates = 0;
    for (let at = line.indexOf(UID); at >= 0; at = line.indexOf(UID, at + UID.length)) {
      const value = valueAt(line, at, UID.length);
      if (value === null) continue; // not a key named uid (a longer key, a string "uid")
      if (value === undefined || !skip(value)) return undefined;
      candidates++;
    }
    if (!candidates) return undefined;
    let version: string | null | undefined = null;
    for (let at = line.indexOf(RV); at >= 0; at = line.indexOf(RV, at + RV.length)) {
      const value = valueAt(line, at, RV.length);
      if (value === null) continue;
      if (version !== null || value === undefined) return BARE; // which one is the object's?
      version = value;
    }
    if (version === null || version === undefined) return BARE;
    return { type: SKIPPED, object: { metadata: { resourceVersion: version } } };
  };
}

/**
 * The string value of the key whose name (with its closing quote) is at `at`: null when it is no
 * such key (a longer name, a string value that reads so); undefined when it is, but not in the
 * compact spelling with a plain string value (spaces, another type, an escape): the line is then
 * decoded.
 */
function valueAt(line: string, at: number, length: number): string | null | undefined {
  if (line.charCodeAt(at - 1) !== QUOTE) return null;
  const next = line.charCodeAt(at + length);
  if (next !== COLON) return isSpace(next) ? undefined : null;
  if (line.charCodeAt(at + length + 1) !== QUOTE) return undefined;
  const start = at + length + 2;
  const end = line.indexOf('"', start);
  if (end < 0 || line.charCodeAt(end - 1) === 0x5c) return undefined;
  return line.slice(start, end);
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
}
