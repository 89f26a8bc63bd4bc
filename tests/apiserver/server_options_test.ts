/**
 * Options of the embedded API server that no other test would notice broken (issue 26):
 * `kubernetesMinor` (what `/version` reports, read by our client and by raw HTTP; the only thing
 * it switches) and the `latencyJitterMs` fault (a random extra delay per request, up to the
 * given milliseconds: exact with an injected random source, and seen over real HTTP).
 */

import assert from "node:assert/strict";
import { ConnectionInfo, Vault } from "../../mod.ts";
import { startApiServer } from "../../testing.ts";
import { Faults } from "../../src/apiserver/shared/faults.ts";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { readVersion } from "../../src/cogs/clients/scanning.ts";

Deno.test("startApiServer({ kubernetesMinor }): /version reports it; 33 by default", async () => {
  for (const [minor, expected] of [[27, "27"], [undefined, "33"]] as const) {
    await using server = await startApiServer(
      minor === undefined ? {} : { kubernetesMinor: minor },
    );
    using vault = new Vault({ login: new ConnectionInfo({ server: server.url }) });
    const version = await readVersion(new ApiClient({ vault }));
    assert.deepEqual(
      [version.major, version.minor, version.gitVersion],
      ["1", expected, `v1.${expected}.0`],
    );
    const raw = await fetch(`${server.url}/version`);
    assert.equal((await raw.json()).minor, expected);
  }
});

Deno.test("latencyJitterMs: a random extra delay of up to that many ms, added to latencyMs", () => {
  let next = 0.5;
  const faults = new Faults({ latencyJitterMs: 100 }, () => next);
  assert.equal(faults.pickLatency(), 50);
  next = 0.99;
  assert.equal(faults.pickLatency(), 99);
  next = 0;
  assert.equal(faults.pickLatency(), 0, "no delay at all when the draw is 0");
  assert.equal(faults.counts.delayed, 2, "only requests really delayed are counted");
  const both = new Faults({ latencyMs: 20, latencyJitterMs: 100 }, () => 0.25);
  assert.equal(both.pickLatency(), 45);
  const none = new Faults({}, () => 0.5);
  assert.equal(none.pickLatency(), 0);
  assert.throws(() => new Faults({ latencyJitterMs: -1 }), /latencyJitterMs" must be a number/);
});

Deno.test("latencyJitterMs over HTTP: each request is delayed by a different random amount", async () => {
  await using server = await startApiServer({ faults: { latencyJitterMs: 300 } });
  const times: number[] = [];
  for (let i = 0; i < 8; i++) {
    const started = performance.now();
    const res = await fetch(`${server.url}/api/v1/namespaces/default/configmaps`);
    await res.body?.cancel();
    assert.equal(res.status, 200);
    times.push(performance.now() - started);
  }
  assert.equal(server.server.faults.counts.delayed, 8, "every request was delayed");
  // Uniform in [0, 300) ms: all eight under 50 ms, or within 30 ms of each other, is a chance
  // of about one in a million.
  assert.ok(Math.max(...times) >= 50, `delays ${times.map((t) => t.toFixed(0)).join(", ")} ms`);
  assert.ok(Math.max(...times) - Math.min(...times) >= 30, `spread of ${times.join(", ")}`);
});
