/**
 * `checkResult()` (core/actions/results.ts) walks a handler's result with stacks it shares
 * between checks: a check inside a value's `toJSON()` gets its own, and every check starts
 * from empty stacks — whatever the previous one found or threw.
 */

import assert from "node:assert/strict";
import { checkResult } from "../../src/core/actions/results.ts";

Deno.test("checkResult: paths are right after a failed check, after a throwing toJSON, and for a check inside a toJSON", () => {
  const problem = (value: unknown) => {
    const checked = checkResult(value, 1024);
    return checked.ok ? undefined : checked.problem.path;
  };
  // A problem deep down leaves nothing behind for the next check.
  assert.equal(problem({ a: { b: [1, { c: 10n }] } }), "result.a.b[1].c");
  assert.equal(problem({ x: NaN }), "result.x");
  // A toJSON() that throws: its path, then a clean next check.
  const throwing = {
    toJSON: () => {
      throw new Error("no");
    },
  };
  assert.equal(problem({ deep: { t: throwing } }), "result.deep.t");
  assert.equal(problem({ fine: 1 }), undefined);
  // A check inside a value's toJSON() (nested): both paths are their own.
  let inner: string | undefined;
  const nesting = {
    toJSON() {
      inner = problem({ q: { r: 1n } });
      return "ok";
    },
  };
  assert.equal(problem({ outer: { n: nesting, bad: Infinity } }), "result.outer.bad");
  assert.equal(inner, "result.q.r");
  // Cycles are found through the shared parents, and forgotten afterwards.
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  assert.equal(problem({ c: cyclic }), "result.c.self");
  const shared = { v: 1 };
  assert.equal(problem({ x: shared, y: shared }), undefined);
  // What JSON drops is listed per check.
  const checked = checkResult({ f: () => {}, g: { h: undefined } }, 1024);
  assert.deepEqual(checked.ok && checked.dropped, ["result.f", "result.g.h"]);
  const again = checkResult({ k: 1 }, 1024);
  assert.deepEqual(again.ok && again.dropped, []);
});
