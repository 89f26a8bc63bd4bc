/**
 * Client spans of the lean HTTP/1.1 transport's requests, with the W3C `traceparent` sent.
 *
 * Why only the lean client: with `OTEL_DENO=true`, Deno instruments its own `fetch` — a client
 * span per request, under the active span, with `traceparent` sent — so the fetch transport
 * needs nothing; our own HTTP/1.1 client is invisible to the runtime and makes its span here,
 * named and attributed as the runtime's (the method; `http.request.method`, `url.full`,
 * `server.address`, `server.port`, `http.response.status_code`, and `error.type` with status
 * ERROR for an answer of 400 and up or a failed request). Watch streams have no span: they
 * last for hours and belong to no cycle.
 *
 * transport.ts uses {@link tracedRequest} only when tracing is on.
 *
 * @module
 */

import { httpClientAttributes } from "../tracing/attributes.ts";
import { endSpan, injectTraceContext, SpanKinds, startSpan } from "../tracing/tracing.ts";
import type { TransportAnswer, TransportRequest } from "./transport_types.ts";

/** A transport's request function. */
type RequestFn = (method: string, url: string, init: TransportRequest) => Promise<TransportAnswer>;

/**
 * Sends a request in a client span of its own (a child of the active span), its trace context
 * in the request's headers.
 *
 * @param request The transport's request function.
 * @param method The method.
 * @param url The full URL.
 * @param init The request's options.
 * @returns The answer.
 */
export function tracedRequest(
  request: RequestFn,
  method: string,
  url: string,
  init: TransportRequest,
): Promise<TransportAnswer> {
  const span = startSpan(method, httpClientAttributes(method, url), { kind: SpanKinds.CLIENT });
  if (!span) return request(method, url, init);
  const headers: Record<string, string> = { ...init.headers };
  injectTraceContext(span, headers);
  return request(method, url, { ...init, headers }).then((answer) => {
    span.setAttribute("http.response.status_code", answer.status);
    if (answer.status >= 400) {
      span.setAttribute("error.type", String(answer.status));
      span.setStatus({ code: 2 });
    }
    span.end();
    return answer;
  }, (error) => {
    span.setAttribute("error.type", (error as Error)?.name ?? "Error");
    endSpan(span, error);
    throw error;
  });
}
