/**
 * The texts of kept parts (`storage/known_json.ts`): an object holding one is encoded with the
 * part's text copied, and the whole is exactly `JSON.stringify`'s text.
 *
 * @module
 */

import assert from "node:assert/strict";
import { encodeObject, keepJson } from "../../src/apiserver/storage/known_json.ts";

Deno.test("encodeObject() writes JSON.stringify's text, with or without kept members", () => {
  const kept = keepJson({ containers: [{ name: "c", image: "é<>" }], n: 1.5 });
  const objects: Record<string, unknown>[] = [
    {},
    { a: 1, b: "x" },
    { spec: kept },
    { spec: kept, none: undefined, fn: () => 1, sym: Symbol("s"), n: null, 'q"k': [undefined] },
    { 2: "two", 1: kept, z: new Date(0), nested: { spec: kept } },
    { only: undefined, spec: kept },
  ];
  for (const obj of objects) assert.equal(encodeObject(obj), JSON.stringify(obj));
  assert.throws(() => encodeObject({ spec: kept, big: 1n }), TypeError);
});

Deno.test("encodeObject() copies a kept member's text rather than encoding it again", () => {
  const part = keepJson({ phase: "Pending" });
  // Changing a kept part breaks its contract; done here only to see which text is written.
  part.phase = "Running";
  assert.equal(encodeObject({ status: part }), '{"status":{"phase":"Pending"}}');
  assert.equal(encodeObject({ status: { ...part } }), '{"status":{"phase":"Running"}}');
});
