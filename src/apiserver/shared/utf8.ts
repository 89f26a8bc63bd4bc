/**
 * The length of a string in UTF-8 bytes, as Go's len() counts it: the
 * store holds objects to etcd's byte limit and validation holds names,
 * labels and data to theirs, so both need the count without encoding.
 *
 * @module
 */

/**
 * The length of a string in UTF-8 bytes, without encoding it.
 *
 * @param s The string.
 * @returns Its UTF-8 byte count.
 *
 * @example
 * ```ts
 * import { utf8Length } from "./utf8.ts";
 * if (utf8Length("a€😀") !== 1 + 3 + 4) throw new Error("expected 8 bytes");
 * ```
 */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}
