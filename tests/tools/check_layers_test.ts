import assert from "node:assert/strict";
import { judge } from "../../tools/check_layers.ts";

Deno.test("`judge()` allows imports down the layers and within a layer", () => {
  assert.equal(judge("src/core/reactor/x.ts", "src/core/actions/y.ts"), undefined);
  assert.equal(judge("src/cogs/clients/x.ts", "src/cogs/structs/y.ts"), undefined);
  assert.equal(judge("src/kits/x.ts", "src/cogs/aio/y.ts"), undefined);
  assert.equal(judge("src/cli/x.ts", "src/apiserver/y.ts"), undefined);
  assert.equal(judge("testing.ts", "src/apiserver/start.ts"), undefined);
  assert.equal(judge("tests/apiserver/x_test.ts", "src/apiserver/store.ts"), undefined);
});

Deno.test("`judge()` forbids upward imports", () => {
  assert.match(judge("src/cogs/structs/x.ts", "src/core/reactor/y.ts")!, /upward/);
  assert.match(judge("src/core/actions/x.ts", "src/core/engines/y.ts")!, /upward/);
  assert.match(judge("src/cogs/aio/x.ts", "src/cogs/clients/y.ts")!, /upward/);
});

Deno.test("`judge()` keeps the API server apart from the operator layers, both ways", () => {
  assert.match(judge("src/apiserver/x.ts", "src/core/intents/y.ts")!, /may import only/);
  assert.match(judge("src/apiserver/x.ts", "src/cogs/clients/y.ts")!, /may import only/);
  assert.equal(judge("src/apiserver/x.ts", "src/cogs/structs/y.ts"), undefined);
  assert.match(
    judge("src/core/reactor/x.ts", "src/apiserver/y.ts")!,
    /must not import the embedded API server/,
  );
});

Deno.test("`judge()` sends examples through the public files only", () => {
  assert.match(
    judge("examples/01-minimal/example.ts", "src/core/intents/y.ts")!,
    /only the public files/,
  );
  assert.equal(judge("examples/01-minimal/example.ts", "mod.ts"), undefined);
  assert.match(judge("src/core/x.ts", "mod.ts")!, /must not import the public files/);
});
