/**
 * A child process of `listener_bench.ts`: the embedded API server on one
 * plain-HTTP listener (the first argument: `kopf`, `deno-serve` or `node`),
 * its URL printed on the first line; it stops on SIGINT.
 *
 * @module
 */

import { startApiServer } from "../testing.ts";

const listener = Deno.args[0] as "kopf" | "deno-serve" | "node";
const api = await startApiServer({ listener });
console.log(api.url);
Deno.addSignalListener("SIGINT", async () => {
  await api.stop();
  Deno.exit(0);
});
