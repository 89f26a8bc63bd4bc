/**
 * An HTTPS endpoint for the API server's webhook calls in tests: its own CA
 * (the `caBundle` to configure), a free loopback port, every review recorded
 * with the path it came to, and the answer left to the test.
 *
 * @module
 */

import { generateCertificates, type TlsBundle } from "../../src/apiserver/shared/tls.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** Serves reviews over HTTPS; `respond` builds the answer to each. */
export class ReviewServer implements AsyncDisposable {
  /** The reviews received, each with the `path` (and query) it was posted to. */
  readonly reviews: Json[] = [];
  /** The CA and server certificate. */
  readonly tls: TlsBundle;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;

  /**
   * @param tls The certificates.
   * @param respond The answer to a review.
   */
  constructor(tls: TlsBundle, respond: (review: Json) => Promise<Json> | Json) {
    this.tls = tls;
    this.#server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      cert: tls.serverCert,
      key: tls.serverKey,
      onListen: () => {},
    }, async (req) => {
      const review = await req.json();
      const url = new URL(req.url);
      this.reviews.push({ ...review, path: url.pathname + url.search });
      return Response.json(await respond(review));
    });
  }

  /** Certificates for a new server. */
  static certificates(): Promise<TlsBundle> {
    return generateCertificates();
  }

  /** `https://127.0.0.1:<port>`. */
  get origin(): string {
    return `https://127.0.0.1:${this.#server.addr.port}`;
  }

  /** The CA as `clientConfig.caBundle` takes it. */
  get caBundle(): string {
    return btoa(this.tls.caCert);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#server.shutdown();
  }
}
