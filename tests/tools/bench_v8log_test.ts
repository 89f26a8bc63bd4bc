/** The summary of V8's tick logs (`bench/v8log.ts`, `trickle_probe.ts` mode `prof`). */

import assert from "node:assert/strict";
import { summarizeV8Log } from "../../bench/v8log.ts";

const LOG = [
  "v8-version,14,0,0,0,0,0",
  "shared-library,/usr/bin/deno,0x100000,0x900000,0",
  "shared-library,/lib/libc.so.6,0xf00000,0xf80000,0",
  // A function whose name has a comma (V8 quotes such a field), first in Sparkplug, then Maglev
  // at another address; a builtin; a regular expression.
  'code-creation,JS,0,5,0xa000,0x100,"get a,b file:///work/src/x.ts:1:2",0xb000,^',
  'code-creation,JS,0,6,0xa800,0x100,"get a,b file:///work/src/x.ts:1:2",0xb000,+\'',
  "code-creation,Builtin,2,7,0xc000,0x80,MapPrototypeSet",
  // Before the window: counted out.
  "tick,0xa010,90,0,0x0,0",
  "tick,0xa010,100,0,0x0,0",
  "tick,0xa810,110,0,0x0,0",
  // The Maglev code moves (a GC); a tick at the new address, one at the old (nothing there now).
  "code-move,0xa800,0xd000",
  "tick,0xd010,120,0,0x0,0",
  "tick,0xa810,130,0,0x0,1",
  "tick,0xd030,135,0,0x0,0",
  // Native ticks: in libc called from the builtin called from the function; in deno with no
  // JavaScript on the stack.
  "tick,0xf00100,140,0,0x0,6,0xc010,0xd020",
  "tick,0x200000,150,0,0x0,1",
  // The Sparkplug code is deleted: its address means nothing afterwards.
  "code-delete,0xa000",
  "tick,0xa010,160,0,0x0,0",
  // After the window.
  "tick,0xa810,300,0,0x0,0",
].join("\n");

Deno.test("v8log: ticks in the window, by tier, kind and state; code moved and deleted", () => {
  const s = summarizeV8Log(LOG, 100, 200);
  assert.equal(s.ticks, 8);
  assert.deepEqual(s.states, [["JS", 5], ["GC", 2], ["EXTERNAL", 1]]);
  assert.deepEqual(s.kinds, [
    ["JS +", 3],
    ["unknown", 2],
    ["JS ^", 1],
    ["native deno", 1],
    ["native libc.so.6", 1],
  ]);
  assert.deepEqual(s.code.slice(0, 3), [
    ["JS + get a,b x.ts:1:2", 3],
    ["unknown unknown", 2],
    ["JS ^ get a,b x.ts:1:2", 1],
  ]);
});

Deno.test("v8log: native ticks are named by the first JavaScript or builtin frame", () => {
  const s = summarizeV8Log(LOG, 100, 200);
  assert.deepEqual(s.nativeCallers, [
    ["deno <- (none)", 1],
    ["libc.so.6 <- Builtin MapPrototypeSet", 1],
  ]);
});

Deno.test("v8log: without a window, every tick counts", () => {
  assert.equal(summarizeV8Log(LOG).ticks, 10);
});

Deno.test("v8log: a line cut short (a log still being written) or not the log's is not counted", () => {
  const torn = [
    LOG,
    "tick,0xd010,170,0",
    "code-creation,JS,0,5,0xe000",
    "tick,0xd010",
    "tick,x,180,0,0x0,0",
    "garbage",
  ]
    .join("\n");
  assert.equal(summarizeV8Log(torn).ticks, 10);
  assert.equal(summarizeV8Log(torn, 100, 200).ticks, 8);
});
