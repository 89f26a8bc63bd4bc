/**
 * The API client's tests once more on the lean HTTP/1.1 client
 * (`KOPF_HTTP_CLIENT=http1`): the default is `fetch` for now (see
 * `transport.ts`), and the lean client must pass everything `fetch` passes.
 * Runs the other files of this folder in a subprocess with the variable set.
 */

import assert from "node:assert/strict";

Deno.test("the client tests pass on the lean HTTP/1.1 client (KOPF_HTTP_CLIENT=http1)", async () => {
  const here = new URL(".", import.meta.url).pathname;
  const self = new URL(import.meta.url).pathname;
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--no-check", `--ignore=${self}`, here],
    env: { KOPF_HTTP_CLIENT: "http1", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  const failures = out.split("\n").filter((line) => /FAILED|^error/.test(line));
  assert.equal(code, 0, `the client tests failed on http1:\n${failures.join("\n")}`);
  assert.match(out, /ok \| \d+ passed/);
});
