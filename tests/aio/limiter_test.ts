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

Deno.test("Limiter.release() keeps a limit lowered below the slots taken: no waiter goes until the slots taken are below it", async () => {
  let limit: number | null = null;
  const limiter = new Limiter(() => limit);
  for (let i = 0; i < 5; i++) strictEqual(limiter.tryAcquire(), true); // 5 taken while lifted
  limit = 2; // set again (e.g. the API is backlogged once more)
  const order: number[] = [];
  const waiters = [1, 2].map((n) => limiter.acquire().then(() => order.push(n)));
  for (const taken of [4, 3, 2]) {
    limiter.release();
    await Promise.resolve();
    deepStrictEqual([order, limiter.active], [[], taken], `${taken} taken: nobody goes`);
  }
  limiter.release(); // 1 taken: one goes
  await waiters[0];
  deepStrictEqual([order, limiter.active, limiter.waiting], [[1], 2, 1]);
  limit = null; // lifted: the next slot given back goes to the next waiter at once
  limiter.release();
  await waiters[1];
  deepStrictEqual([order, limiter.active, limiter.waiting], [[1, 2], 2, 0]);
});
