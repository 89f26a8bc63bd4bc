/**
 * `/healthz`, `/livez` and `/readyz` as kube-apiserver answers them: `ok`; with `?verbose`,
 * each check on a line (`[+]ping ok`) and `livez check passed`; `?exclude=<check>` skips one
 * (`[+]etcd excluded: ok`, or a `warn:` line for a name that is no check); a failed check makes
 * the answer a 500 listing them all (`[-]shutdown failed: reason withheld` … `readyz check
 * failed`); `/<endpoint>/<check>` answers one check (`ok`, or a 500 `internal server error: …`).
 *
 * The checks are the ones with a meaning here, under kube's names: `ping` (the server answers),
 * `log` (always ok), `etcd` (the store answers), and for `/readyz` also `shutdown` (fails once
 * the server is closing, so load balancers stop sending).
 *
 * @module
 */

/** One named check: undefined when healthy, else why not. */
export interface HealthCheck {
  name: string;
  check: () => string | undefined;
}

const TEXT = { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" };

/**
 * Answers a health endpoint, or undefined when the path is not one.
 *
 * @param path The request path (no trailing slash).
 * @param q The query.
 * @param checks The checks of each endpoint.
 * @returns The answer, or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { healthAnswer } from "./health.ts";
 * const checks = { livez: [{ name: "ping", check: () => undefined }] };
 * const res = healthAnswer("/livez", new URLSearchParams("verbose"), checks)!;
 * assert.deepEqual(await res.text(), "[+]ping ok\nlivez check passed\n");
 * ```
 */
export function healthAnswer(
  path: string,
  q: URLSearchParams,
  checks: Record<string, HealthCheck[]>,
): Response | undefined {
  const [, endpoint, one, ...rest] = path.split("/");
  const list = endpoint === undefined ? undefined : checks[endpoint];
  if (!list || rest.length) return undefined;
  if (one !== undefined) {
    const check = list.find((c) => c.name === one);
    if (!check) return undefined;
    const why = check.check();
    return why === undefined
      ? new Response("ok", { headers: TEXT })
      : new Response(`internal server error: ${why}\n`, { status: 500, headers: TEXT });
  }
  const excluded = new Set(q.getAll("exclude"));
  let lines = "";
  let failed = false;
  for (const c of list) {
    if (excluded.delete(c.name)) {
      lines += `[+]${c.name} excluded: ok\n`;
      continue;
    }
    if (c.check() === undefined) {
      lines += `[+]${c.name} ok\n`;
    } else {
      failed = true;
      lines += `[-]${c.name} failed: reason withheld\n`;
    }
  }
  if (excluded.size) {
    lines += `warn: some health checks cannot be excluded: no matches for ${
      [...excluded].map((n) => JSON.stringify(n)).join(",")
    }\n`;
  }
  if (failed) {
    return new Response(`${lines}${endpoint} check failed\n`, { status: 500, headers: TEXT });
  }
  if (!q.has("verbose")) return new Response("ok", { headers: TEXT });
  return new Response(`${lines}${endpoint} check passed\n`, { headers: TEXT });
}
