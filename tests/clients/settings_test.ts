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

Deno.test("low-priority requests wait out a burst of others, then fill up to three quarters of the slots", async () => {
  using vault = new Vault({ test: new ConnectionInfo({ server: "http://127.0.0.1:9" }) });
  const sent: string[] = [];
  const answers = new Map<string, () => void>();
  const api = new ApiClient({
    vault,
    settings: { networking: { maxConcurrentRequests: 8 } },
    fetch: (url) => {
      const name = new URL(url).pathname.slice(1);
      sent.push(name);
      return new Promise((resolve) => answers.set(name, () => resolve(Response.json({}))));
    },
  });
  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 1));
  };
  const answer = async (...names: string[]) => {
    for (const name of names) {
      answers.get(name)!();
      answers.delete(name);
    }
    await settle();
  };
  const normal = (n: number) => Array.from({ length: n }, (_, i) => `n${i + 1}`);
  const all = [
    ...normal(8).map((n) => api.request("GET", `/${n}`)),
    ...["low1", "low2", "low3", "low4", "low5"].map((n) =>
      api.request("GET", `/${n}`, { priority: "low" })
    ),
    api.request("GET", "/n9"),
  ];
  await settle();
  assert.deepEqual(sent, normal(8), "the slots are full: everyone waits");
  await answer("n1");
  assert.deepEqual(sent.slice(8), ["n9"], "a freed slot goes to the normal request first");
  await answer("n2", "n3", "n4", "n5", "n6");
  assert.deepEqual(sent.slice(9), [], "3 others in flight, more than a quarter: no low one yet");
  await answer("n7");
  assert.deepEqual(
    sent.slice(9),
    ["low1", "low2", "low3", "low4"],
    "2 others left: low ones fill up to 6 in flight (a quarter stays free)",
  );
  // A normal request still goes at once.
  const urgent = api.request("GET", "/n10");
  await settle();
  assert.deepEqual(sent.slice(13), ["n10"]);
  await answer("n8", "n9", "n10", "low1");
  assert.deepEqual(sent.slice(14), ["low5"]);
  await answer("low2", "low3", "low4", "low5");
  await Promise.all([...all, urgent]);
});

Deno.test("backlog counts the requests waiting for a slot, inFlight those of normal priority that hold one", async () => {
  using vault = new Vault({ test: new ConnectionInfo({ server: "http://127.0.0.1:9" }) });
  const answers: Array<() => void> = [];
  const api = new ApiClient({
    vault,
    settings: { networking: { maxConcurrentRequests: 2 } },
    fetch: () => new Promise((resolve) => answers.push(() => resolve(Response.json({})))),
  });
  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 1));
  };
  const first = Array.from({ length: 5 }, () => api.request("GET", "/api"));
  await settle();
  assert.deepEqual([api.backlog, api.inFlight], [3, 2], "2 in flight, 3 waiting");
  answers.shift()!();
  await settle();
  assert.deepEqual([api.backlog, api.inFlight], [2, 2]);
  answers.shift()!();
  answers.shift()!();
  await settle();
  assert.deepEqual([api.backlog, api.inFlight], [0, 2]);
  answers.shift()!();
  await settle();
  assert.deepEqual([api.backlog, api.inFlight], [0, 1]);
  while (answers.length) answers.shift()!(), await settle();
  await Promise.all(first);
  assert.deepEqual([api.backlog, api.inFlight], [0, 0]);
  // A low-priority request (an Event's write) in flight is not counted.
  const low = api.request("GET", "/api", { priority: "low" });
  await settle();
  assert.deepEqual([answers.length, api.inFlight], [1, 0], "sent, not counted");
  answers.shift()!();
  await low;
});
