import assert from "node:assert/strict";
import { ACCEPTED, unexpectedFindings } from "../../tools/check_docs.ts";

const OUTPUT = [
  "\x1b[1m\x1b[31merror[missing-jsdoc]\x1b[0m: \x1b[1mexported symbol is missing JSDoc documentation\x1b[0m",
  "  \x1b[38;5;12m-->\x1b[0m \x1b[36m/repo/src/a.ts\x1b[0m:\x1b[33m7\x1b[0m:\x1b[33m3\x1b[0m",
  "",
  "error[private-type-ref]: public type 'OperatorMetrics.prototype.registry' references private type 'Registry'",
  "  --> /repo/src/core/engines/metrics.ts:60:3",
  "",
  "error[private-type-ref]: public type 'f' references private type 'Hidden'",
  "  --> /repo/src/b.ts:1:1",
  "",
  "error: Found 3 documentation lint errors.",
].join("\n");

Deno.test("check_docs: findings other than the accepted ones fail, with where they are", () => {
  assert.deepEqual(unexpectedFindings(OUTPUT, ACCEPTED), [
    "error[missing-jsdoc]: exported symbol is missing JSDoc documentation (/repo/src/a.ts:7:3)",
    "error[private-type-ref]: public type 'f' references private type 'Hidden' (/repo/src/b.ts:1:1)",
  ]);
  assert.equal(unexpectedFindings(OUTPUT, new Map()).length, 3);
  assert.deepEqual(unexpectedFindings("Checked 4 files\n", ACCEPTED), []);
});
