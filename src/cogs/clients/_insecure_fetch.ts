/**
 * A `fetch` for `insecure: true` credentials (kubeconfig's
 * `insecure-skip-tls-verify`) over HTTPS.
 *
 * Why it exists: Deno's `fetch` can only skip certificate verification for
 * the whole process (the `--unsafely-ignore-certificate-errors` flag);
 * `Deno.createHttpClient` has no per-client switch. Deno's `node:https`
 * does honour `rejectUnauthorized: false` per request, so this module wraps
 * it into the `fetch` shape (a web `Response` with a streaming body, abort by
 * signal) for exactly the credentials that ask for it. It opens one
 * connection per request (no keep-alive), which is fine for the rare setups
 * that need it. `node:https` is imported at the first such request.
 *
 * @module
 */

import type { IncomingMessage } from "node:http";

/** `node:https`, imported at the first insecure request: no operator pays for it otherwise. */
let loading: Promise<typeof import("node:https")> | undefined;

/** TLS material for the insecure client. */
export interface InsecureTls {
  /** The client certificate (PEM). */
  cert?: string | undefined;
  /** The client key (PEM). */
  key?: string | undefined;
}

/**
 * Makes a fetch-like function that does not verify the server's certificate.
 *
 * @param tls The client certificate and key, if any.
 * @returns A function with `fetch`'s shape (URL string + init).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { insecureFetch } from "./_insecure_fetch.ts";
 * const fetchInsecurely = insecureFetch({});
 * // e.g. await fetchInsecurely("https://self-signed.example:6443/version", {});
 * assert.deepEqual(typeof fetchInsecurely, "function");
 * ```
 */
export function insecureFetch(
  tls: InsecureTls,
): (url: string, init: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const https = await (loading ??= import("node:https"));
    return await new Promise<Response>((resolve, reject) => {
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(signal.reason);
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, key) => headers[key] = value);
      let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
      let response: IncomingMessage | undefined;
      const onAbort = () => {
        req.destroy();
        response?.destroy();
        try {
          controller?.error(signal!.reason);
        } catch { /* already closed */ }
        reject(signal!.reason);
      };
      const req = https.request(url, {
        method: init.method ?? "GET",
        headers,
        rejectUnauthorized: false,
        agent: false,
        ...(tls.cert ? { cert: tls.cert } : {}),
        ...(tls.key ? { key: tls.key } : {}),
      }, (res) => {
        response = res;
        const body = new ReadableStream<Uint8Array>({
          start(c) {
            controller = c;
            res.on("data", (chunk: Uint8Array) => {
              c.enqueue(new Uint8Array(chunk));
              if ((c.desiredSize ?? 1) <= 0) res.pause();
            });
            res.on("end", () => {
              signal?.removeEventListener("abort", onAbort);
              try {
                c.close();
              } catch { /* cancelled */ }
            });
            res.on("error", (e: Error) => {
              try {
                c.error(e);
              } catch { /* cancelled */ }
            });
          },
          pull() {
            res.resume();
          },
          cancel() {
            signal?.removeEventListener("abort", onAbort);
            res.destroy();
          },
        });
        const out = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
          out.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        }
        const status = res.statusCode ?? 500;
        const nobody = status === 204 || status === 304 || init.method === "HEAD";
        if (nobody) res.resume();
        resolve(
          new Response(nobody ? null : body, {
            status,
            statusText: res.statusMessage ?? "",
            headers: out,
          }),
        );
      });
      req.on("error", (e: Error) => {
        signal?.removeEventListener("abort", onAbort);
        reject(new TypeError(`insecure request failed: ${e.message}`, { cause: e }));
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      const payload = init.body;
      if (typeof payload === "string" || payload instanceof Uint8Array) req.write(payload);
      req.end();
    });
  };
}
