import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { Limiter } from "../../src/cogs/aio/limiter.ts";

Deno.test("Limiter.tryAcquire() takes a free slot at once, and refuses when all are taken", () => {
  const limiter = new Limiter(2);
  strictEqual(limiter.tryAcquire(), true);
  strictEqual(limiter.tryAcquire(), true);
  strictEqual(limiter.tryAcquire(), false);
  strictEqual(limiter.active, 2);
  limiter.release();
  strictEqual(limiter.tryAcquire(), true);
});

Deno.test("Limiter.tryAcquire() without a limit always takes a slot", () => {
  const limiter = new Limiter(null);
  for (let i = 0; i < 5; i++) strictEqual(limiter.tryAcquire(), true);
  strictEqual(limiter.active, 5);
});

Deno.test("Limiter.tryAcquire() does not overtake a waiter", async () => {
  let limit = 1;
  const limiter = new Limiter(() => limit);
  strictEqual(limiter.tryAcquire(), true);
  const order: string[] = [];
  const waiting = limiter.acquire().then(() => order.push("waiter"));
  limit = 2; // a slot frees up by a change of settings: the waiter still comes first
  strictEqual(limiter.tryAcquire(), false);
  limiter.release();
  await waiting;
  deepStrictEqual(order, ["waiter"]);
  strictEqual(limiter.active, 1);
});

Deno.test("Limiter.wake() lets in as many waiters as a raised or lifted limit allows, in order", async () => {
  let limit: number | null = 1;
  const limiter = new Limiter(() => limit);
  strictEqual(limiter.tryAcquire(), true);
  const order: number[] = [];
  const waiters = [1, 2, 3].map((n) => limiter.acquire().then(() => order.push(n)));
  limiter.wake(); // the limit is still 1: nobody goes
  await Promise.resolve();
  deepStrictEqual(order, []);
  limit = 3;
  limiter.wake();
  await Promise.resolve();
  deepStrictEqual(order, [1, 2]);
  strictEqual(limiter.active, 3);
  limit = null;
  limiter.wake();
  await Promise.all(waiters);
  deepStrictEqual(order, [1, 2, 3]);
  strictEqual(limiter.active, 4);
  strictEqual(limiter.waiting, 0);
});
