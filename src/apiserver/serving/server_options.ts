/**
 * The options of the embedded API server's core (`server.ts`): authentication
 * and authorization, the store, limits, versions served, faults, logging and the
 * trust of webhook calls. Apart so that what starts a server can name them
 * without the server itself.
 *
 * @module
 */

import type { StaticToken } from "../auth/authentication.ts";
import type { FaultSettings } from "../shared/faults.ts";
import type { Store } from "../storage/store.ts";
import type { WebhookClientCertificate } from "../webhooks/webhook_client.ts";

/** Options of the API server core. */
export interface ApiServerOptions {
  /** Require `Authorization: Bearer <token>` on every API request. */
  token?: string;
  /** Accept requests that present a verified client certificate (TLS only). */
  clientCertificates?: boolean;
  /**
   * `"rbac"`: every request names its user (client certificate, the server's token, a static
   * token or a service account's token; else 401) and Roles, ClusterRoles and their bindings
   * decide what it may do (else 403), as kube-apiserver with `--authorization-mode=RBAC`.
   * Without it: the access check of `token` / `clientCertificates` only, and anyone who passes
   * may do anything. (kubectl sends bearer tokens only over HTTPS: serve TLS for kubectl.)
   */
  authorization?: "rbac";
  /** Users known by bearer token (kube-apiserver's `--token-auth-file`); with `authorization` only. */
  staticTokens?: StaticToken[];
  /** Fault switches at start. */
  faults?: FaultSettings;
  /** How many changes history keeps for resuming watches. */
  historySize?: number;
  /** Seconds between bookmarks to watches that asked for them (default 10). */
  bookmarkSeconds?: number;
  /** The Kubernetes minor version `/version` reports (default 33). */
  kubernetesMinor?: number;
  /**
   * Serve watches with `sendInitialEvents` (the WatchList feature gate, KEP-3157; default true).
   * false: such watches are refused with kube-apiserver's 422, as by a server without the gate.
   */
  watchList?: boolean;
  /** Log one line per request to this function. */
  log?: (line: string) => void;
  /** A store to start from (persistence). */
  store?: Store;
  /**
   * The largest request body accepted, in bytes (default 3 MiB, kube-apiserver's
   * `MaxRequestBodyBytes`); a larger one is refused with 413 before it is read.
   */
  maxRequestBodyBytes?: number;
  /**
   * The largest object stored, in bytes of JSON (default 1.5 MiB, etcd's request limit); a
   * larger write is refused with 413. Only for a store the server makes (not `store`).
   */
  maxObjectBytes?: number;
  /**
   * The client certificate (PEM `cert` and `key`) presented to admission and conversion
   * webhooks, as kube-apiserver's admission-configuration kubeconfig gives one per webhook host
   * (here: one for all). Without it, webhook calls present none.
   */
  webhookClientCert?: WebhookClientCertificate;
  /**
   * PEM certificates that admission and conversion webhook calls trust besides the system's
   * roots, as if added to the trust store of kube-apiserver's host: for a webhook served with a
   * test CA and no `caBundle` (a tunnel's public URL). A webhook's own `caBundle` still applies.
   */
  webhookTrustedCAs?: string[];
}
