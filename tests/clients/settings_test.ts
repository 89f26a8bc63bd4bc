import assert from "node:assert/strict";
import { OperatorSettings } from "../../src/cogs/configs/settings.ts";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { DEFAULTS, setting } from "../../src/cogs/clients/_settings.ts";
import { ConnectionInfo, Vault } from "../../src/cogs/structs/credentials.ts";

Deno.test("the clients' defaults are those of a fresh OperatorSettings, setting by setting", () => {
  const fresh = new OperatorSettings();
  for (const group of ["networking", "watching", "posting"] as const) {
    const expected = fresh[group] as unknown as Record<string, unknown>;
    const actual = DEFAULTS[group] as unknown as Record<string, unknown>;
    const keys = Object.getOwnPropertyNames(Object.getPrototypeOf(expected))
      .filter((key) => key !== "constructor");
    assert.ok(keys.length > 0);
    for (const key of keys) assert.deepEqual(actual[key], expected[key], `${group}.${key}`);
  }
});

Deno.test("setting(): a given value wins, a given null is kept, an absent one is the default", () => {
  assert.equal(setting({ inactivityTimeout: 5 }, DEFAULTS.watching, "inactivityTimeout"), 5);
  assert.equal(setting({ inactivityTimeout: null }, DEFAULTS.watching, "inactivityTimeout"), null);
  assert.equal(setting({}, DEFAULTS.watching, "inactivityTimeout"), 70);
  assert.equal(setting(undefined, DEFAULTS.networking, "requestTimeout"), 300);
  const settings = new OperatorSettings();
  settings.networking.requestTimeout = null;
  assert.equal(setting(settings.networking, DEFAULTS.networking, "requestTimeout"), null);
});

Deno.test("a client without settings holds networking.maxConcurrentRequests (64) requests in flight", async () => {
  using vault = new Vault({ test: new ConnectionInfo({ server: "http://127.0.0.1:9" }) });
  let inFlight = 0;
  let most = 0;
  const answers: Array<() => void> = [];
  const api = new ApiClient({
    vault,
    fetch: () => {
      most = Math.max(most, ++inFlight);
      return new Promise((resolve) => {
        answers.push(() => (inFlight--, resolve(Response.json({}))));
      });
    },
  });
  const requests = Array.from({ length: 70 }, () => api.request("GET", "/api"));
  while (answers.length < 64) await new Promise((resolve) => setTimeout(resolve, 1));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(answers.length, 64);
  while (answers.length > 0) {
    answers.shift()!();
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  await Promise.all(requests);
  assert.equal(most, 64);
});
