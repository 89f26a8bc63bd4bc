/**
 * The API client's tests once more on Deno's `fetch` (`KOPF_HTTP_CLIENT=fetch`): the lean
 * HTTP/1.1 client is the default (see `transport.ts`), and `fetch` still serves proxies,
 * insecure HTTPS and whoever sets the variable, so it must pass everything the default passes.
 *
 * Runs, in a subprocess with the variable set, the files of this folder whose requests go
 * through the transport that the variable picks (`ON_FETCH`); the others are listed in
 * `NOT_ON_FETCH` with the reason the run would add nothing (no sockets at all, or each
 * transport picked by the test itself). A new file fails the first test until it is put in one
 * of the two lists.
 */

import assert from "node:assert/strict";

const HERE = new URL(".", import.meta.url).pathname;
const PRELOAD = new URL("../../tools/test_preload.ts", import.meta.url).pathname;

/** The files whose requests go through the transport that `KOPF_HTTP_CLIENT` picks. */
const ON_FETCH = [
  "api_test.ts",
  "auth_test.ts",
  "deleting_test.ts",
  "events_test.ts",
  "fetching_test.ts",
  "handler_api_runner_test.ts",
  "handler_api_test.ts",
  "kubeconfig_test.ts",
  "leases_test.ts",
  "narrow_login_test.ts",
  "patching_test.ts",
  "scanning_test.ts",
  "streaming_lists_test.ts",
  "traffic_test.ts",
  "watch_resume_test.ts",
  "watching_test.ts",
];

/** The files not run on `fetch` once more, and why. */
const NOT_ON_FETCH: Record<string, string> = {
  "fetch_suite_test.ts": "this file",
  "errors_test.ts": "error classes and messages: no requests",
  "settings_test.ts": "settings parsing: no requests",
  "vault_test.ts": "the vault's credentials: no requests",
  "watcher_test.ts": "the watcher's states on scripted I/O and a fake clock: no sockets",
  "watch_skipping_test.ts": "the skipping of watch lines, on strings: no sockets",
  "http1_test.ts": "the lean client itself on fake connections: no transport is picked",
  "paths_test.ts": "the kubeconfig's path operations: no requests",
  "transport_test.ts": "picks each transport itself (both over real sockets)",
  "hostile_fuzz_test.ts": "runs every case on both transports itself (ignored under fetch)",
  "hostile_server_test.ts": "runs every row on both transports itself (ignored under fetch)",
  "tls_verification_test.ts": "runs every case on both transports itself (ignored under fetch)",
};

Deno.test("fetch suite: every client test file is run on fetch or listed with the reason it is not", () => {
  const files = [...Deno.readDirSync(HERE)]
    .filter((e) => e.isFile && e.name.endsWith("_test.ts"))
    .map((e) => e.name);
  const unlisted = files.filter((f) => !ON_FETCH.includes(f) && !(f in NOT_ON_FETCH));
  assert.deepEqual(unlisted, [], "new test files: add each to ON_FETCH or NOT_ON_FETCH");
  const gone = [...ON_FETCH, ...Object.keys(NOT_ON_FETCH)].filter((f) => !files.includes(f));
  assert.deepEqual(gone, [], "listed files that are no longer in tests/clients");
  assert.deepEqual(ON_FETCH.filter((f) => f in NOT_ON_FETCH), []);
});

Deno.test("the client tests pass on Deno's fetch (KOPF_HTTP_CLIENT=fetch)", async () => {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      "-A",
      "--no-check",
      "--parallel",
      `--preload=${PRELOAD}`,
      ...ON_FETCH.map((f) => `${HERE}${f}`),
    ],
    // Two jobs: the files wait on servers more than they compute, and the suite around this
    // test runs in parallel too.
    env: { KOPF_HTTP_CLIENT: "fetch", NO_COLOR: "1", DENO_JOBS: "2" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  const failures = out.split("\n").filter((line) => /FAILED|^error/.test(line));
  assert.equal(code, 0, `the client tests failed on fetch:\n${failures.join("\n")}`);
  assert.match(out, /ok \| \d+ passed/);
});
