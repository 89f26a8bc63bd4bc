import assert from "node:assert/strict";
import { ConnectionInfo, LoginError, Vault } from "../../src/cogs/structs/credentials.ts";

const info = (token: string, more: Partial<ConstructorParameters<typeof ConnectionInfo>[0]> = {}) =>
  new ConnectionInfo({ server: "https://k8s", token, ...more });

Deno.test("Vault.select() gives the highest priority; equal priorities are chosen at random", async () => {
  let r = 0;
  using vault = new Vault({
    low: info("low", { priority: 1 }),
    high1: info("h1", { priority: 5 }),
    high2: info("h2", { priority: 5 }),
    none: null,
  }, { random: () => r });
  assert.equal((await vault.select()).key, "high1");
  r = 0.99;
  assert.equal((await vault.select()).key, "high2");
});

Deno.test("an empty vault waits for populate(); whenEmpty() tells the authenticator", async () => {
  using vault = new Vault();
  assert.equal(vault.ready, false);
  await vault.whenEmpty(); // resolves at once: a login is needed
  const selecting = vault.select();
  vault.populate({ a: info("a") });
  assert.equal((await selecting).info.token, "a");
  // Populating with nothing is still "ready", and selecting fails then.
  using dry = new Vault();
  dry.populate({});
  await assert.rejects(dry.select(), LoginError);
});

Deno.test("invalidate() moves to the next credentials, or waits for a re-login", async () => {
  using vault = new Vault({ a: info("a", { priority: 2 }), b: info("b", { priority: 1 }) });
  void vault.whenEmpty(); // an authenticator watches it
  const first = await vault.select();
  assert.equal(first.key, "a");
  await vault.invalidate(first.key, first.info); // b remains: no waiting
  const second = await vault.select();
  assert.equal(second.key, "b");
  const invalidating = vault.invalidate(second.key, second.info, { error: new Error("401") });
  await vault.whenEmpty();
  assert.equal(vault.ready, false);
  // The same rejected credentials from the same key are ignored; new ones are taken.
  vault.populate({ b: info("b", { priority: 1 }), c: info("c") });
  await invalidating;
  assert.equal((await vault.select()).key, "c");
});

Deno.test("concurrent invalidations of the same credentials do not drop the fresh ones", async () => {
  using vault = new Vault({ a: info("old") });
  void vault.whenEmpty(); // an authenticator watches it
  const { key, info: old } = await vault.select();
  const one = vault.invalidate(key, old);
  const two = vault.invalidate(key, old);
  vault.populate({ a: info("new") });
  await Promise.all([one, two]);
  // A late third report about the old credentials changes nothing.
  await vault.invalidate(key, old);
  assert.equal((await vault.select()).info.token, "new");
});

Deno.test("invalidate() fails with a LoginError when the re-login brings nothing valid", async () => {
  using vault = new Vault({ a: info("a") });
  void vault.whenEmpty(); // an authenticator watches it
  const { key, info: a } = await vault.select();
  const cause = new Error("401");
  const invalidating = vault.invalidate(key, a, { error: cause });
  vault.populate({ a: info("a") }); // the same, already rejected
  await assert.rejects(invalidating, (e: Error) => e instanceof LoginError && e.cause === cause);
});

Deno.test("expired credentials are dropped; TZ-naive expirations are UTC", async () => {
  let now = Date.parse("2030-01-01T00:00:00Z");
  using vault = new Vault({
    a: info("a", { expiration: "2030-01-01T00:00:10" }),
    b: info("b", { expiration: new Date("2030-01-01T00:00:20Z"), priority: -1 }),
  }, { now: () => now });
  assert.equal((await vault.select()).key, "a");
  now += 15_000;
  assert.equal((await vault.select()).key, "b");
  now += 10_000;
  assert.equal(vault.isEmpty(), true);
  const selecting = vault.select();
  await vault.whenEmpty();
  vault.populate({ a: info("a2") });
  assert.equal((await selecting).info.token, "a2");
});

Deno.test("cached objects are closed when their credentials leave the vault", async () => {
  const closed: string[] = [];
  using vault = new Vault({ a: info("a"), b: info("b") });
  const a = (await vault.select()).info;
  const make = (i: ConnectionInfo) => ({ token: i.token, close: () => closed.push(i.token!) });
  const first = vault.cached(a, "client", make);
  assert.equal(vault.cached(a, "client", make), first, "made once per credentials");
  await vault.invalidate(a.token === "a" ? "a" : "b", a);
  assert.deepEqual(closed, [a.token]);
  const b = (await vault.select()).info;
  vault.cached(b, "client", make);
  vault.close();
  assert.deepEqual(closed, [a.token, b.token]);
});

Deno.test("the async iterator retries with the next credentials after an invalidation", async () => {
  using vault = new Vault({ a: info("a", { priority: 1 }), b: info("b") });
  const tried: string[] = [];
  for await (const { key, info } of vault) {
    tried.push(key);
    if (key === "a") await vault.invalidate(key, info);
  }
  assert.deepEqual(tried, ["a", "b"]);
});

Deno.test("whenReady()/whenEmpty() reject with the signal's reason", async () => {
  using vault = new Vault();
  const stop = new AbortController();
  const waiting = vault.whenReady(stop.signal);
  stop.abort(new Error("bye"));
  await assert.rejects(waiting, /bye/);
});

Deno.test("ConnectionInfo validates its fields and compares by value", () => {
  assert.throws(() => info("x", { certificatePath: "/a", certificateData: "b" }), /give only one/);
  assert.throws(() => info("x", { privateKeyPath: "/a", privateKeyData: "b" }), /give only one/);
  assert.throws(() => info("x", { expiration: "not a date" }), /invalid expiration/);
  assert.ok(info("x", { expiration: 5 }).equals(info("x", { expiration: new Date(5) })));
  assert.ok(!info("x").equals(info("y")));
  assert.ok(Object.isFrozen(info("x")));
});

Deno.test("selectNow() gives what select() would without waiting, and nothing when it would wait or fail", async () => {
  let now = Date.parse("2030-01-01T00:00:00Z");
  using vault = new Vault(undefined, { now: () => now });
  assert.equal(vault.selectNow(), undefined, "not ready");
  vault.populate({ a: info("a", { expiration: new Date(now + 10_000) }) });
  const first = vault.selectNow()!;
  assert.equal(first.key, "a");
  assert.equal(vault.selectNow(), first, "the same entry while nothing changes");
  assert.equal(await vault.select(), first);
  vault.populate({ b: info("b", { expiration: new Date(now + 20_000), priority: 1 }) });
  assert.equal(vault.selectNow()?.key, "b", "new credentials are seen at once");
  now += 9_999;
  assert.equal(vault.selectNow()?.key, "b");
  await vault.invalidate("b", vault.selectNow()!.info);
  assert.equal(vault.selectNow()?.key, "a", "the invalidated ones are gone at once");
  now += 1;
  assert.equal(vault.selectNow(), undefined, "expired at its time: none left, a re-login is due");
  assert.equal(vault.ready, false);
  vault.populate({}); // the re-login brought nothing
  assert.equal(vault.selectNow(), undefined);
  await assert.rejects(vault.select(), LoginError);
});

Deno.test("invalidate() of the last credentials fails at once when no authenticator watches the vault (a vault of one's own)", async () => {
  using vault = new Vault({ a: info("a"), b: info("b") });
  const cause = new Error("401");
  const { key, info: first } = await vault.select();
  await vault.invalidate(key, first, { error: cause }); // the other remains: no failure
  const { key: key2, info: second } = await vault.select();
  await assert.rejects(
    vault.invalidate(key2, second, { error: cause }),
    (e: Error) => e instanceof LoginError && e.cause === cause && /login handler/.test(e.message),
  );
  // Nothing waits for a login that will not come: selecting fails the same way.
  await assert.rejects(vault.select(), (e: Error) => e instanceof LoginError && e.cause === cause);
  // Watched from now on: the next invalidation waits for the re-login instead.
  using watched = new Vault({ a: info("a") });
  const empty = watched.whenEmpty();
  const entry = await watched.select();
  const invalidating = watched.invalidate(entry.key, entry.info, { error: cause });
  await empty;
  watched.populate({ c: info("c") });
  await invalidating;
  assert.equal((await watched.select()).key, "c");
});
