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
 * always one of the candidates of a line in the compact spelling servers send (no spaces around
 * a colon, no `\u` escape: a key can be spelled otherwise only so); a line not so spelled, a uid
 * that is not a plain string, and one candidate that is not skipped — a nested `uid` — decode
 * the line: a wrong skip cannot come of it, only a decoded line more. (An object with no uid of
 * its own is no Kubernetes object: it is skipped if its nested uids all are.)
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

const UID = '"uid":';
/** Whitespace around a key's colon: not the compact spelling (the object's uid key may hide). */
const SPACED = /"[ \t\r]+:|":[ \t\r]/;
const RV = '"resourceVersion":"';
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
    // A \u escape may spell a key ("\u0075id"), spaces may part it from its value: decoded.
    if (line.includes("\\u") || SPACED.test(line)) return undefined;
    let at = line.indexOf(UID);
    if (at < 0) return undefined;
    do {
      // A uid that is not a string: decoded.
      if (line.charCodeAt(at + UID.length) !== 0x22) return undefined;
      const start = at + UID.length + 1;
      const end = line.indexOf('"', start);
      if (end < 0) return undefined;
      // An escape in the value: not its plain spelling; decoded.
      if (line.charCodeAt(end - 1) === 0x5c) return undefined;
      if (!skip(line.slice(start, end))) return undefined;
      at = line.indexOf(UID, end);
    } while (at >= 0);
    const rv = line.indexOf(RV);
    if (rv < 0 || line.indexOf(RV, rv + RV.length) >= 0) return BARE;
    const start = rv + RV.length;
    const end = line.indexOf('"', start);
    if (end < 0 || line.charCodeAt(end - 1) === 0x5c) return BARE;
    return { type: SKIPPED, object: { metadata: { resourceVersion: line.slice(start, end) } } };
  };
}
