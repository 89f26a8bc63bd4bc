import assert from "node:assert/strict";
import { findCycles, judge, judgeCycle, judgeLength } from "../../tools/check_layers.ts";

Deno.test("`judge()` allows imports down the layers and within a layer", () => {
  assert.equal(judge("src/core/reactor/x.ts", "src/core/actions/y.ts"), undefined);
  assert.equal(judge("src/cogs/clients/x.ts", "src/cogs/structs/y.ts"), undefined);
  assert.equal(judge("src/kits/x.ts", "src/cogs/aio/y.ts"), undefined);
  assert.equal(judge("src/cli/x.ts", "src/apiserver/y.ts"), undefined);
  assert.equal(judge("testing.ts", "src/apiserver/serving/start.ts"), undefined);
  assert.equal(judge("tests/apiserver/x_test.ts", "src/apiserver/storage/store.ts"), undefined);
});

Deno.test("`judge()` forbids upward imports", () => {
  assert.match(judge("src/cogs/structs/x.ts", "src/core/reactor/y.ts")!, /upward/);
  assert.match(judge("src/core/actions/x.ts", "src/core/engines/y.ts")!, /upward/);
  assert.match(judge("src/cogs/aio/x.ts", "src/cogs/clients/y.ts")!, /upward/);
});

Deno.test("`judge()` keeps the API server apart from the operator layers, both ways", () => {
  assert.match(judge("src/apiserver/objects/x.ts", "src/core/intents/y.ts")!, /may import only/);
  assert.match(judge("src/apiserver/serving/x.ts", "src/cogs/clients/y.ts")!, /may import only/);
  assert.equal(judge("src/apiserver/objects/x.ts", "src/cogs/structs/y.ts"), undefined);
  assert.match(
    judge("src/core/reactor/x.ts", "src/apiserver/y.ts")!,
    /must not import the embedded API server/,
  );
});

Deno.test("`judge()` holds the order of the API server's rooms", () => {
  assert.equal(judge("src/apiserver/serving/x.ts", "src/apiserver/objects/y.ts"), undefined);
  assert.equal(judge("src/apiserver/objects/x.ts", "src/apiserver/shared/y.ts"), undefined);
  assert.equal(judge("src/apiserver/storage/x.ts", "src/apiserver/storage/y.ts"), undefined);
  assert.match(
    judge("src/apiserver/storage/x.ts", "src/apiserver/serving/y.ts")!,
    /upward import between the API server's rooms \(storage\/ below serving\/;/,
  );
  assert.match(judge("src/apiserver/shared/x.ts", "src/apiserver/wire/y.ts")!, /upward/);
  assert.match(judge("src/apiserver/auth/x.ts", "src/apiserver/webhooks/y.ts")!, /siblings/);
  assert.match(
    judge("src/apiserver/x.ts", "src/apiserver/shared/y.ts")!,
    /src\/apiserver\/x.ts is in no room/,
  );
  assert.match(judge("src/apiserver/serving/x.ts", "src/apiserver/attic/y.ts")!, /in no room/);
});

Deno.test("`judge()` sends examples through the public files only", () => {
  assert.match(
    judge("examples/01-minimal/example.ts", "src/core/intents/y.ts")!,
    /only the public files/,
  );
  assert.equal(judge("examples/01-minimal/example.ts", "mod.ts"), undefined);
  assert.match(judge("src/core/x.ts", "mod.ts")!, /must not import the public files/);
});

const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

Deno.test("`findCycles()` finds no circle in a graph that only runs down", () => {
  assert.deepEqual(findCycles(graph({ a: ["b", "c"], b: ["c"], c: [] })), []);
});

Deno.test("`findCycles()` names every file of each circle, and only those", () => {
  const cycles = findCycles(graph({
    top: ["x1"],
    x1: ["x2"],
    x2: ["x3", "leaf"],
    x3: ["x1"],
    p: ["q"],
    q: ["p", "leaf"],
    leaf: [],
  }));
  assert.deepEqual(cycles, [["p", "q"], ["x1", "x2", "x3"]]);
});

Deno.test("`findCycles()` finds a file that imports itself and edges to unlisted files", () => {
  assert.deepEqual(findCycles(graph({ a: ["a", "gone"] })), [["a"]]);
});

Deno.test("`findCycles()` copes with a long chain without overflowing the stack", () => {
  const edges: Record<string, string[]> = {};
  for (let i = 0; i < 20_000; i++) edges[`f${i}`] = [`f${i + 1}`];
  edges["f20000"] = ["f0"];
  assert.equal(findCycles(graph(edges))[0]?.length, 20_001);
});

Deno.test("`judgeCycle()` forbids circles under src/, the API server's too", () => {
  assert.match(
    judgeCycle(["src/core/reactor/changing.ts", "src/core/reactor/processing.ts"])!,
    /circle of 2 files: src\/core\/reactor\/changing.ts, src\/core\/reactor\/processing.ts/,
  );
  assert.match(
    judgeCycle(["src/apiserver/objects/a.ts", "src/apiserver/objects/b.ts"])!,
    /circle of 2 files/,
  );
  assert.match(judgeCycle(["src/apiserver/a.ts", "src/cogs/aio/b.ts"])!, /circle/);
  assert.equal(judgeCycle(["tests/a_test.ts", "tests/b_test.ts"]), undefined);
});

Deno.test("`judgeLength()`: a file under src/ over 500 lines is refused, with its count; others are not judged", () => {
  assert.equal(judgeLength("src/core/a.ts", "line\n".repeat(500)), undefined);
  assert.equal(judgeLength("src/core/a.ts", "line\n".repeat(499) + "last"), undefined);
  assert.equal(
    judgeLength("src/core/a.ts", "line\n".repeat(501)),
    "src/core/a.ts: 501 lines (at most 500 under src/): split it by concern",
  );
  assert.equal(judgeLength("tests/core/a_test.ts", "line\n".repeat(2000)), undefined);
});
