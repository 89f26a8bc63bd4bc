/**
 * The settings the clients read, with the types and the defaults of
 * `OperatorSettings` (cogs/configs) rather than copies of them. A client gets
 * the operator's settings object, or — in tests and tools — any part of its
 * groups; a setting that is not given has the operator's default, so a bare
 * client behaves like one in an operator with default settings.
 *
 * @module
 */

import { NetworkingSettings, PostingSettings, WatchingSettings } from "../configs/settings.ts";

/**
 * Some settings of one group of `OperatorSettings` (e.g. its `networking`):
 * each may be absent, and then its default applies.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { WatchingSettings } from "@kopf/kopf";
 * import type { Some } from "./_settings.ts";
 * const watching: Some<WatchingSettings> = { reconnectBackoff: 0.3 };
 * assert.deepEqual(watching.inactivityTimeout, undefined); // the default (70) applies
 * ```
 */
export type Some<T> = { [K in keyof T]?: T[K] | undefined };

/**
 * `OperatorSettings.networking` as the clients take it: `errorBackoffs` may
 * also be one number (one retry after it), as the setting's setter takes it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ClientNetworking, Some } from "./_settings.ts";
 * const networking: Some<ClientNetworking> = { errorBackoffs: 0.5, requestTimeout: null };
 * assert.deepEqual(networking.errorBackoffs, 0.5);
 * ```
 */
export type ClientNetworking =
  & Omit<NetworkingSettings, "errorBackoffs">
  & { readonly errorBackoffs: NetworkingSettings["errorBackoffs"] | number };

/**
 * The defaults of the settings groups the clients read: fresh settings
 * objects of cogs/configs, never changed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULTS } from "./_settings.ts";
 * assert.deepEqual([DEFAULTS.networking.requestTimeout, DEFAULTS.watching.inactivityTimeout], [300, 70]);
 * ```
 */
export const DEFAULTS: {
  readonly networking: Readonly<ClientNetworking>;
  readonly watching: Readonly<WatchingSettings>;
  readonly posting: Readonly<PostingSettings>;
} = {
  networking: new NetworkingSettings(),
  watching: new WatchingSettings(),
  posting: new PostingSettings(),
};

/**
 * One setting as given, or its default when it is absent (`undefined`). A
 * given `null` is a value: for timeouts it means "none".
 *
 * @param given Some settings of a group, or none.
 * @param defaults The group's defaults (see {@link DEFAULTS}).
 * @param key The setting.
 * @returns The setting's value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULTS, setting } from "./_settings.ts";
 * assert.deepEqual(setting({ inactivityTimeout: null }, DEFAULTS.watching, "inactivityTimeout"), null);
 * assert.deepEqual(setting(undefined, DEFAULTS.watching, "inactivityTimeout"), 70);
 * ```
 */
export function setting<T, K extends keyof T>(
  given: Some<NoInfer<T>> | undefined,
  defaults: T,
  key: K,
): T[K] {
  const value = given?.[key];
  return value === undefined ? defaults[key] : value as T[K];
}
