/**
 * The API client's tests once more on Deno's `fetch` (`KOPF_HTTP_CLIENT=fetch`): the lean
 * HTTP/1.1 client is the default (see `transport.ts`), and `fetch` still serves proxies,
 * insecure HTTPS and whoever sets the variable, so it must pass everything the default passes.
 * Runs the other files of this folder in a subprocess with the variable set.
 */

import assert from "node:assert/strict";

Deno.test("the client tests pass on Deno's fetch (KOPF_HTTP_CLIENT=fetch)", async () => {
  const here = new URL(".", import.meta.url).pathname;
  const self = new URL(import.meta.url).pathname;
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--no-check", `--ignore=${self}`, here],
    env: { KOPF_HTTP_CLIENT: "fetch", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  const failures = out.split("\n").filter((line) => /FAILED|^error/.test(line));
  assert.equal(code, 0, `the client tests failed on fetch:\n${failures.join("\n")}`);
  assert.match(out, /ok \| \d+ passed/);
});
