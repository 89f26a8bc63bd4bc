/**
 * Shared pieces of the client tests: a running embedded API server with a
 * vault and an API client logged in to it, well-known resources, and a CRD.
 *
 * @module
 */

import {
  type RunningApiServer,
  startApiServer,
  type StartApiServerOptions,
} from "../../testing.ts";
import { ConnectionInfo, Vault } from "../../src/cogs/structs/credentials.ts";
import { Resource } from "../../src/cogs/structs/references.ts";
import { ApiClient, type ApiClientOptions } from "../../src/cogs/clients/api.ts";
import { createObject } from "../../src/cogs/clients/creating.ts";

/** A server, a vault with its credentials, and a client. Dispose with `await using`. */
export interface Env extends AsyncDisposable {
  server: RunningApiServer;
  vault: Vault;
  api: ApiClient;
}

/**
 * Starts a server and logs in to it (plain http, token if given).
 *
 * @param options Server options.
 * @param client Client options (settings, hooks).
 * @returns The environment.
 */
export async function setup(
  options: StartApiServerOptions = {},
  client: Omit<ApiClientOptions, "vault"> = {},
): Promise<Env> {
  const server = await startApiServer(options);
  const vault = new Vault({
    test: new ConnectionInfo({
      server: server.url,
      token: options.token,
      defaultNamespace: "default",
    }),
  });
  const api = new ApiClient({
    ...client,
    vault,
    settings: { networking: { errorBackoffs: [0.01, 0.01, 0.01] }, ...client.settings },
  });
  return {
    server,
    vault,
    api,
    async [Symbol.asyncDispose]() {
      vault.close();
      await server.stop();
    },
  };
}

export const CONFIGMAPS = new Resource({
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  singular: "configmap",
  namespaced: true,
  shortcuts: ["cm"],
});

export const NAMESPACES = new Resource({
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
  subresources: ["status"],
});

export const EVENTS = new Resource({
  group: "",
  version: "v1",
  plural: "events",
  namespaced: true,
});

export const KOPFEXAMPLES = new Resource({
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
  singular: "kopfexample",
  namespaced: true,
  shortcuts: ["kex"],
  subresources: ["status"],
});

export const CRDS = new Resource({
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  namespaced: false,
});

/**
 * Creates the KopfExample CRD (kopf.dev, v1 preferred + v1beta1, status subresource).
 *
 * @param api The client.
 */
export async function createKopfExampleCrd(api: ApiClient): Promise<void> {
  const schema = {
    openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
  };
  await createObject(api, CRDS, null, {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "kopfexamples.kopf.dev" },
    spec: {
      group: "kopf.dev",
      scope: "Namespaced",
      names: {
        plural: "kopfexamples",
        singular: "kopfexample",
        kind: "KopfExample",
        shortNames: ["kex"],
        categories: ["all"],
      },
      versions: [
        { name: "v1", served: true, storage: true, schema, subresources: { status: {} } },
        { name: "v1beta1", served: true, storage: false, schema, subresources: { status: {} } },
      ],
    },
  });
}

/**
 * Waits until a condition holds (polling), or fails after a while.
 *
 * @param condition The condition.
 * @param seconds How long to wait at most.
 * @param what What is awaited, for the failure message.
 */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  seconds = 10,
  what = "the condition",
): Promise<void> {
  const until = Date.now() + seconds * 1000;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
