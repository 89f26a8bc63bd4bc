/**
 * The load generator's HTTP side: `fetch` over one pooled keep-alive client,
 * with every response body consumed (so its connection goes back to the pool),
 * and a bounded-concurrency loop for seeding many objects.
 *
 * @module
 */

import { load as parseYaml } from "npm:js-yaml@^5";

/** A response as the benchmark needs it: the status and, when asked for, the parsed body. */
export interface Answer {
  status: number;
  body: unknown;
}

/** A thin client of the API server under test. */
export class BenchClient implements Disposable {
  readonly url: string;
  #http: Deno.HttpClient;

  #authorization: string | undefined;

  /**
   * @param url The server's base URL.
   * @param tls Over HTTPS: the server's CA (PEM), and the bearer token to send.
   */
  constructor(url: string, tls?: { ca: string; token: string }) {
    this.url = url;
    this.#http = Deno.createHttpClient({
      poolIdleTimeout: 60_000,
      ...(tls ? { caCerts: [tls.ca] } : {}),
    });
    this.#authorization = tls && `Bearer ${tls.token}`;
  }

  /**
   * Sends one request and reads the whole answer.
   *
   * @param method The HTTP method.
   * @param path The path and query.
   * @param options A JSON body and its content type; whether to parse the answer.
   * @returns The status and the parsed body (if `parse`), or the text of an error answer.
   */
  async send(
    method: string,
    path: string,
    options: { body?: unknown; contentType?: string; parse?: boolean } = {},
  ): Promise<Answer> {
    const init: RequestInit & { client: Deno.HttpClient } = { method, client: this.#http };
    const headers: Record<string, string> = {};
    if (this.#authorization) headers.authorization = this.#authorization;
    if (options.body !== undefined) {
      init.body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
      headers["content-type"] = options.contentType ?? "application/json";
    }
    init.headers = headers;
    const res = await fetch(`${this.url}${path}`, init);
    if (!res.ok) return { status: res.status, body: await res.text() };
    if (options.parse) return { status: res.status, body: await res.json() };
    await res.arrayBuffer();
    return { status: res.status, body: undefined };
  }

  /**
   * Opens a streaming request (a watch) and returns the response once its headers arrive.
   *
   * @param path The path and query.
   * @param signal Aborts the stream.
   * @returns The response, its body not yet read.
   */
  stream(path: string, signal: AbortSignal): Promise<Response> {
    return fetch(`${this.url}${path}`, { client: this.#http, signal });
  }

  /** Closes the connection pool. */
  [Symbol.dispose](): void {
    this.#http.close();
  }
}

/**
 * Runs `count` jobs with at most `concurrency` in flight at once.
 *
 * @param count How many jobs.
 * @param concurrency How many at a time.
 * @param job Does job `i`.
 * @returns When every job has finished.
 * @throws The first job's error (the others still finish first).
 */
export async function runBounded(
  count: number,
  concurrency: number,
  job: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) await job(next++);
  });
  const results = await Promise.allSettled(workers);
  for (const r of results) if (r.status === "rejected") throw r.reason;
}

/**
 * Throws if an answer is not a success.
 *
 * @param answer The answer.
 * @param what What was being done, for the message.
 * @throws {Error} For a status outside 200–299.
 */
export function expectOk(answer: Answer, what: string): void {
  if (answer.status < 200 || answer.status >= 300) {
    throw new Error(
      `${what} failed with HTTP ${answer.status}: ${String(answer.body).slice(0, 300)}`,
    );
  }
}

/**
 * Applies the example CRD (examples/crd.yaml; already there is fine) and creates a namespace.
 *
 * @param api The client.
 * @param root The repository root.
 * @param namespace The namespace to create.
 */
export async function setUpKopfExamples(
  api: BenchClient,
  root: URL,
  namespace: string,
): Promise<void> {
  const crd = parseYaml(await Deno.readTextFile(new URL("examples/crd.yaml", root)));
  const made = await api.send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    body: crd,
  });
  if (made.status !== 409) expectOk(made, "creating the KopfExample CRD");
  expectOk(
    await api.send("POST", "/api/v1/namespaces", { body: { metadata: { name: namespace } } }),
    "creating the benchmark's namespace",
  );
}
