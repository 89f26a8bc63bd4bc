/**
 * The test-only admin endpoints of the embedded API server (`/admin/faults`,
 * `/admin/faults/expire`, `/admin/stats`) and the faults they switch on,
 * injected into requests on resources: latency and 429, 500 or 503 answers
 * worded as kube-apiserver words them.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import { readBody } from "./request_bodies.ts";
import { json } from "./resource_handlers.ts";
import type { Faults } from "../shared/faults.ts";
import type { Store } from "../storage/store.ts";
import type { WatchHub } from "../storage/watch.ts";
import type { RequestInfo } from "./request_info.ts";

/** What the admin endpoints read and change: one API server's parts. */
export interface AdminParts {
  /** The fault switches. */
  faults: Faults;
  /** The largest request body read, in bytes. */
  bodyLimit: number;
  /** Request counts by `verb resource code`. */
  requestCounts: Map<string, number>;
  /** The store. */
  store: Store;
  /** The watch streams. */
  watches: WatchHub;
}

/** Waits the latency and throws the error that the fault switches pick for a request. */
export async function injectFaults(faults: Faults, req: Request): Promise<void> {
  const latency = faults.pickLatency();
  if (latency > 0) await new Promise((r) => setTimeout(r, latency));
  const err = faults.pickError(req.method);
  if (!err) return;
  const reasons = {
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
  } as const;
  const messages = {
    429:
      "the server has received too many requests and has asked us to try again later (injected fault)",
    500: "an error on the server has prevented the request from succeeding (injected fault)",
    503: "the server is currently unable to handle the request (injected fault)",
  } as const;
  const details = err.code === 500 ? undefined : { retryAfterSeconds: err.retryAfter };
  throw new ApiError(err.code, reasons[err.code], messages[err.code], details);
}

/** Answers `/admin/...`: the fault switches and counts, and the server's request stats. */
export async function serveAdmin(
  s: AdminParts,
  req: Request,
  path: string,
  ctx: RequestInfo,
): Promise<Response> {
  ctx.verb = "admin";
  if (path === "/admin/faults") {
    if (req.method === "GET") {
      return json({ settings: s.faults.settings, counts: s.faults.counts });
    }
    if (req.method === "PUT" || req.method === "PATCH" || req.method === "POST") {
      const body = await readBody(req, s.bodyLimit);
      try {
        if (req.method === "PUT") s.faults.reset();
        s.faults.update(body as Record<string, unknown>);
      } catch (e) {
        throw ApiError.badRequest((e as Error).message);
      }
      return json({ settings: s.faults.settings, counts: s.faults.counts });
    }
  }
  if (path === "/admin/faults/expire" && req.method === "POST") {
    s.faults.expire(true);
    return json({ settings: s.faults.settings, counts: s.faults.counts });
  }
  if (path === "/admin/stats" && req.method === "GET") {
    return json({
      requests: Object.fromEntries(s.requestCounts),
      resourceVersion: s.store.resourceVersion,
      watches: s.watches.size,
      faults: s.faults.counts,
    });
  }
  throw new ApiError(
    404,
    "NotFound",
    `no admin endpoint ${req.method} ${path}: use /admin/faults, /admin/faults/expire, /admin/stats`,
  );
}
