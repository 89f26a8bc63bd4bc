/**
 * The `ListOptions` of a list or watch request, read and checked as
 * kube-apiserver's `ValidateListOptions` does (its exact 422 refusals), and
 * the resourceVersions they name: parsed as kube parses them, and waited for
 * (up to {@link FRESHNESS_WAIT_SECONDS}) when a client asks for one from the
 * future.
 *
 * @module
 */

import { ApiError, type StatusCause } from "../shared/errors.ts";
import type { Decoded } from "../wire/query_params.ts";
import type { Store } from "./store.ts";

/** The `ListOptions` of a list or watch request that this module reads. */
export interface ListOptions {
  /** `resourceVersion`, as given (`undefined` when absent or empty). */
  resourceVersion: string | undefined;
  /** `resourceVersionMatch`. */
  resourceVersionMatch: "Exact" | "NotOlderThan" | undefined;
  /** `continue`. */
  continueToken: string | undefined;
  /** `limit` (0: no paging). */
  limit: number;
  /** `sendInitialEvents`, when given (watch only). */
  sendInitialEvents: boolean | undefined;
}

const META = "meta.k8s.io";

/** How long a request for a resourceVersion ahead of the store waits for it (kube-apiserver: 3 s). */
export const FRESHNESS_WAIT_SECONDS = 3;

/**
 * Reads and validates the `ListOptions` of a request as kube-apiserver's
 * `ValidateListOptions` does (with the WatchList feature on or off).
 *
 * @param p The request's decoded parameters (`decodeQuery` of `query_params.ts`).
 * @param options Whether it is a watch; whether `sendInitialEvents` is served.
 * @returns The options.
 * @throws {ApiError} 422 Invalid with kube-apiserver's causes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseListOptions } from "./list_options.ts";
 * const p = { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan" };
 * assert.deepEqual(parseListOptions(p, { watch: true, watchList: true }).sendInitialEvents, true);
 * try {
 *   parseListOptions({ sendInitialEvents: true }, { watch: true, watchList: true });
 * } catch (e) {
 *   assert.deepEqual((e as Error).message, "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
 * }
 * ```
 */
export function parseListOptions(
  p: Decoded<"list">,
  options: { watch: boolean; watchList: boolean },
): ListOptions {
  const rv = p.resourceVersion || undefined;
  const match = p.resourceVersionMatch || undefined;
  const token = p.continue || undefined;
  const limit = p.limit ?? 0;
  const sendInitialEvents = p.sendInitialEvents;
  const causes: StatusCause[] = [];
  const forbidden = (field: string, detail: string) =>
    causes.push({ reason: "FieldValueForbidden", message: `Forbidden: ${detail}`, field });
  const notSupported = (field: string, value: string, supported: string[]) =>
    causes.push({
      reason: "FieldValueNotSupported",
      message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${
        supported.map((s) => JSON.stringify(s)).join(", ")
      }`,
      field,
    });
  if (options.watch) {
    if (sendInitialEvents !== undefined) {
      if (match !== "NotOlderThan") {
        forbidden(
          "resourceVersionMatch",
          "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        );
      }
      if (!options.watchList) {
        forbidden(
          "sendInitialEvents",
          "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
        );
      }
    }
    if (match !== undefined) {
      if (sendInitialEvents === undefined) {
        forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        );
      }
      if (match !== "NotOlderThan") notSupported("resourceVersionMatch", match, ["NotOlderThan"]);
      if (token) {
        forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden when continue is provided",
        );
      }
    }
  } else {
    if (match !== undefined) {
      if (rv === undefined) {
        forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden unless resourceVersion is provided",
        );
      }
      if (token) {
        forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden when continue is provided",
        );
      }
      if (match !== "Exact" && match !== "NotOlderThan") {
        notSupported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]);
      }
      if (match === "Exact" && rv === "0") {
        forbidden(
          "resourceVersionMatch",
          `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`,
        );
      }
    }
    if (sendInitialEvents !== undefined) {
      forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list");
    }
  }
  if (causes.length) throw ApiError.invalid("ListOptions", META, "", causes);
  return {
    resourceVersion: rv,
    resourceVersionMatch: match as ListOptions["resourceVersionMatch"],
    continueToken: token,
    limit: limit > 0 ? limit : 0,
    sendInitialEvents,
  };
}

/**
 * Parses a resourceVersion as kube-apiserver does (a decimal integer).
 *
 * @param rv The resourceVersion.
 * @returns The number.
 * @throws {ApiError} 400 for anything else.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseResourceVersion } from "./list_options.ts";
 * assert.deepEqual(parseResourceVersion("42"), 42);
 * ```
 */
export function parseResourceVersion(rv: string): number {
  if (!/^\d+$/.test(rv)) {
    throw ApiError.badRequest(
      `resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${
        JSON.stringify(rv)
      }: invalid syntax`,
    );
  }
  return Number(rv);
}

/**
 * kube-apiserver's 504 for a resourceVersion the store has not reached within
 * {@link FRESHNESS_WAIT_SECONDS}.
 *
 * @param rv The resourceVersion asked for.
 * @param current The store's resourceVersion.
 * @returns The error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tooLargeResourceVersion } from "./list_options.ts";
 * assert.deepEqual(tooLargeResourceVersion(105, 100).message, "Timeout: Too large resource version: 105, current: 100");
 * ```
 */
export function tooLargeResourceVersion(rv: number, current: number): ApiError {
  return new ApiError(
    504,
    "Timeout",
    `Timeout: Too large resource version: ${rv}, current: ${current}`,
    {
      causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
      retryAfterSeconds: 1,
    },
  );
}

/**
 * Waits until the store's resourceVersion reaches `rv` (a read "not older
 * than" a version from the future), for at most {@link FRESHNESS_WAIT_SECONDS}.
 *
 * @param store The store.
 * @param rv The resourceVersion needed.
 * @returns Whether the store reached it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Store } from "./store.ts";
 * import { waitForResourceVersion } from "./list_options.ts";
 * assert.deepEqual(await waitForResourceVersion(new Store(), 0), true);
 * ```
 */
export async function waitForResourceVersion(store: Store, rv: number): Promise<boolean> {
  const deadline = performance.now() + FRESHNESS_WAIT_SECONDS * 1000;
  while (store.resourceVersion < rv) {
    if (performance.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}
