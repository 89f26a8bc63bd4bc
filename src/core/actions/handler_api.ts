/**
 * The API client of a running operator for its handlers: every handler's
 * context has it as `api`, and `kopf.api()` returns it anywhere inside the
 * operator (a handler, a task the handler started, a startup handler's
 * background work). Why an async scope: the code that calls `kopf.api()`
 * does not hold the operator, and several operators may run in one process
 * (tests, `KopfRunner`); each sees its own client, on its own credentials.
 *
 * Until the operator has logged in (in `on.startup` and `on.login`
 * handlers), the client exists but its requests fail with a clear error: the
 * credentials come only after those handlers.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import type { ApiClient } from "../../cogs/clients/api.ts";
import { KubeClient } from "../../cogs/clients/kube_client.ts";
import { LoginError } from "../../cogs/structs/login_errors.ts";

/** The client of the operator that the current code runs in. */
export const apiScope: AsyncLocalStorage<KubeClient> = new AsyncLocalStorage<KubeClient>();

/**
 * The API client of the running operator: the operator's own credentials and
 * networking settings (retries, request concurrency), resources by any of
 * Kopf's names. The same object as the `api` of every handler's context.
 *
 * @returns The client.
 * @throws {Error} When called outside of a running operator.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * import { KopfRunner, startApiServer } from "@kopf/kopf/testing";
 *
 * // Deep in helper code, with no handler context at hand: the same client as the handlers' `api`.
 * async function remember(name: string): Promise<void> {
 *   await kopf.api().apply("configmaps", { metadata: { name: `seen-${name}` } }, {
 *     namespace: "default", fieldManager: "example",
 *   });
 * }
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.event("namespaces", { registry }, async ({ name }) => {
 *   if (name === "default") await remember(name);
 * });
 * await using server = await startApiServer();
 * await using runner = await KopfRunner.start(["run", "--standalone", "-A"], {
 *   registry, kubeconfig: server.kubeconfig.path,
 * });
 * for (let i = 0; i < 200 && !server.server.store.get("configmaps", "default", "seen-default"); i++) {
 *   await new Promise((resolve) => setTimeout(resolve, 25));
 * }
 * assert.deepEqual(server.server.store.get("configmaps", "default", "seen-default")?.metadata.name, "seen-default");
 * void runner;
 * ```
 */
export function api(): KubeClient {
  const client = apiScope.getStore();
  if (!client) {
    throw new Error(
      "kopf.api() works only inside a running operator (in a handler or a task it started); " +
        "outside of one, use kopf.KubeClient.fromVault(vault)",
    );
  }
  return client;
}

/** An operator's client before the login: {@link PendingApi.connect} gives it its requests. */
export interface PendingApi {
  /** The client for the scope and the contexts (its requests fail until connected). */
  readonly kube: KubeClient;
  /**
   * Connects the operator's API client once logged in.
   *
   * @param client The operator's API client.
   */
  connect(client: ApiClient): void;
}

/**
 * The client an operator puts in its scope at its start, before it can send anything: startup
 * and login handlers run before the login, so their requests fail with a {@link LoginError}
 * that says so.
 *
 * @returns The pending client.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pendingApi } from "./handler_api.ts";
 * const pending = pendingApi();
 * await pending.kube.get("namespaces", "default").catch((error) => {
 *   assert.deepEqual(error.name, "LoginError");
 * });
 * ```
 */
export function pendingApi(): PendingApi {
  let connected: ApiClient | undefined;
  const kube = new KubeClient(() => {
    if (connected) return connected;
    throw new LoginError(
      "The operator's API client works only after the login: not in on.startup and on.login " +
        "handlers (no credentials yet); use it in other handlers, or in a task started later",
    );
  });
  return { kube, connect: (client) => void (connected = client) };
}

/** The client of contexts built outside of any operator (unit tests): it has no credentials. */
const DETACHED = new KubeClient(() => {
  throw new LoginError(
    "This handler runs outside of an operator: its api has no credentials; " +
      "build a client with kopf.KubeClient.fromVault(vault)",
  );
});

/**
 * The client for a handler's context: the running operator's, or (outside of one) a client
 * whose requests fail with a {@link LoginError}.
 *
 * @returns The client.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { currentApi } from "./handler_api.ts";
 * assert.deepEqual(currentApi() === currentApi(), true);
 * ```
 */
export function currentApi(): KubeClient {
  return apiScope.getStore() ?? DETACHED;
}
