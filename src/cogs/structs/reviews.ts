/**
 * The shapes of admission that users see by name (Kopf's `kopf._cogs.structs.reviews`):
 * who makes the API request ({@link UserInfo}, the admission handlers' `userinfo`), and how
 * Kubernetes reaches the operator's webhooks ({@link WebhookClientConfig}, with either a URL or
 * an in-cluster {@link WebhookClientConfigService}). They live down here, apart from the
 * admission engine, because webhook servers, tunnels and the managed configurations all speak
 * them and none of them should need the engine to name a type.
 *
 * @module
 */

/**
 * The user who sends the API request under admission, exactly as Kubernetes sends it in the
 * AdmissionReview's `request.userInfo` (Kopf's `kopf.UserInfo`): admission handlers get it as
 * `userinfo`. Kubernetes always names the user; the other fields come when the authenticator
 * knows them, and other keys may come in future versions (they are passed through as sent).
 *
 * This is the identity of the API request's author, not of the API server that calls the
 * webhook (that one is in `headers` and `sslpeer`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.OperatorRegistry();
 * kopf.on.validate("kopfexamples", { registry }, function onlyAdmins({ userinfo }) {
 *   const user: kopf.UserInfo = userinfo;
 *   if (!user.groups?.includes("system:masters")) {
 *     throw new kopf.AdmissionError(`${user.username ?? "Nobody"} may not do this.`, 403);
 *   }
 * });
 * assert.equal(registry.webhookHandlers().length, 1);
 * ```
 */
export interface UserInfo {
  /** The user's name, e.g. `alice` or `system:serviceaccount:default:op`. */
  username?: string;
  /** The user's uid, when the authenticator knows one. */
  uid?: string;
  /** The user's groups, e.g. `["system:masters", "system:authenticated"]`. */
  groups?: string[];
  /** Extra attributes the authenticator gave (each a list of strings). */
  extra?: Record<string, string[]>;
  /** Any other key Kubernetes sends, as it sends it. */
  [key: string]: unknown;
}

/**
 * An in-cluster Service through which Kubernetes reaches the webhooks (the `service` of a
 * {@link WebhookClientConfig}; Kopf's `kopf.WebhookClientConfigService`). The operator appends
 * the handler id to `path` for each webhook.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type * as kopf from "@kopf/kopf";
 * const service: kopf.WebhookClientConfigService = {
 *   namespace: "operators",
 *   name: "my-operator",
 *   path: "/admission",
 *   port: 443,
 * };
 * const config: kopf.WebhookClientConfig = { service, caBundle: "LS0tLS1CRUdJTi…" }; // base64 PEM
 * assert.equal(config.service?.name, "my-operator");
 * ```
 */
export interface WebhookClientConfigService {
  /** The Service's namespace. */
  namespace?: string;
  /** The Service's name. */
  name?: string;
  /** The root path on the Service (handler ids are appended). */
  path?: string;
  /** The Service's port (Kubernetes' default: 443). */
  port?: number;
}

/**
 * What a webhook server or tunnel tells the operator about how Kubernetes reaches it (Kopf's
 * `kopf.WebhookClientConfig`): put into the managed webhook configurations as it is, except
 * that the handler id is appended to the `url`'s path or to the `service`'s `path`. Give
 * either `url` or `service`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type * as kopf from "@kopf/kopf";
 * async function* mytunnel(_fn: kopf.WebhookFn): AsyncGenerator<kopf.WebhookClientConfig> {
 *   yield { url: "https://my-tunnel.example.com/webhooks" }; // a publicly trusted certificate
 *   await new Promise(() => {}); // hold control until the operator exits
 * }
 * const settings = { admission: { server: mytunnel } }; // e.g. in an on.startup handler
 * assert.equal(typeof settings.admission.server, "function");
 * ```
 */
export interface WebhookClientConfig {
  /** The URL of the server's root path (handler ids are appended). */
  url?: string;
  /** The base64 PEM of the CA that signed the server's certificate (none: the system's roots). */
  caBundle?: string;
  /** An in-cluster Service instead of a URL. */
  service?: WebhookClientConfigService;
}
