/**
 * What the router learns of a request on its way, and how it is labelled: the
 * verb as kube-apiserver names it (from the method, the name and `?watch`), the
 * metrics' verb and dry-run labels, path segments decoded, and errors and
 * pretty JSON turned into answers.
 *
 * @module
 */

import { ApiError, statusObject } from "../shared/errors.ts";
import type { RequestLabels } from "./request_metrics.ts";
import { jsonText } from "../shared/json_body.ts";
import { queryBool } from "../wire/query_params.ts";
import { JSON_HEADERS } from "./resource_handlers.ts";

/** What a request turned out to be, for the counts, the metrics and the log. */
export interface RequestInfo {
  verb: string;
  resource: string;
  code: number;
  /** Set once the request reaches a resource's handler: what `/metrics` counts it by. */
  labels?: RequestLabels;
}

/** kube's metric verb: the method, GET split into GET/LIST/WATCH, an apply patch APPLY. */
export function metricVerb(verb: string, req: Request): string {
  switch (verb) {
    case "get":
    case "list":
    case "watch":
      return verb.toUpperCase();
    case "deletecollection":
      return "DELETE";
  }
  if (
    req.method === "PATCH" && req.headers.get("content-type") === "application/apply-patch+yaml"
  ) {
    return "APPLY";
  }
  return ["POST", "PUT", "PATCH", "DELETE"].includes(req.method) ? req.method : "other";
}

/** kube's `dry_run` label: the distinct `dryRun` values, sorted, joined; "invalid" for any but All. */
export function dryRunLabel(url: URL): string {
  const q = url.searchParams;
  if (q.size === 0) return "";
  const values = q.getAll("dryRun");
  if (!values.length) return "";
  if (values.some((v) => v !== "All")) return "invalid";
  return [...new Set(values)].sort().join(",");
}

/** A path segment, percent-decoded; 400 when the encoding is broken. */
export function decodeSegment(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw ApiError.badRequest(
      `the path segment ${JSON.stringify(segment)} is not valid percent-encoding (a % must be ` +
        `followed by two hex digits of UTF-8)`,
    );
  }
}

export function verbOf(method: string, name: string | undefined, url: URL): string {
  switch (method) {
    case "GET":
    case "HEAD": {
      // kube-apiserver's booleans: anything but "0" and "false" (any case) is true.
      const w = url.searchParams.get("watch");
      if (!name) return w !== null && queryBool(w) ? "watch" : "list";
      return "get";
    }
    case "POST":
      return name ? "unsupported" : "create";
    case "PUT":
      return name ? "update" : "unsupported";
    case "PATCH":
      return name ? "patch" : "unsupported";
    case "DELETE":
      return name ? "delete" : "deletecollection";
  }
  return "unsupported";
}

/** The same answer, its JSON indented. */
export async function prettyResponse(res: Response): Promise<Response> {
  const text = await res.text();
  let body: string;
  try {
    body = jsonText(JSON.parse(text), true);
  } catch {
    body = text;
  }
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

export function errorResponse(e: unknown): Response {
  if (e instanceof ApiError) return e.toResponse();
  const message = e instanceof Error ? e.message : String(e);
  return new Response(
    jsonText(
      statusObject(
        500,
        "InternalError",
        `an error on the server prevented the request from succeeding: ${message}`,
      ),
    ),
    {
      status: 500,
      headers: JSON_HEADERS,
    },
  );
}
