/**
 * The kubeconfig the embedded API server writes for itself: one cluster, one
 * user (a bearer token, a client certificate, or nothing), one context named
 * `kopf-embedded`, current — so `KUBECONFIG=<path> kubectl get ns` just works.
 *
 * @module
 */

import { dump } from "npm:js-yaml@^5";

/** The kubeconfig object (the fields we write). */
export interface Kubeconfig {
  /** Always `"v1"`. */
  apiVersion: "v1";
  /** Always `"Config"`. */
  kind: "Config";
  /** The one cluster: its server URL and CA data (or `insecure-skip-tls-verify` for `http:`). */
  clusters: Array<{ name: string; cluster: Record<string, unknown> }>;
  /** The one user: a token and/or client certificate data, or empty. */
  users: Array<{ name: string; user: Record<string, unknown> }>;
  /** The one context, joining the cluster and the user, namespace `"default"`. */
  contexts: Array<{ name: string; context: { cluster: string; user: string; namespace?: string } }>;
  /** The context in use: the one context's name. */
  "current-context": string;
  /** Always empty. */
  preferences: Record<string, never>;
}

/** What goes into the kubeconfig. */
export interface KubeconfigParts {
  /** The API server's URL. */
  server: string;
  /** A bearer token. */
  token?: string;
  /** The CA certificate (PEM) to trust. */
  caCert?: string;
  /** The client certificate (PEM); used only together with `clientKey`. */
  clientCert?: string;
  /** The client key (PEM); used only together with `clientCert`. */
  clientKey?: string;
  /** The name of the cluster, user and context (default `"kopf-embedded"`). */
  contextName?: string;
}

const b64 = (s: string) => btoa(s);

/**
 * Builds a kubeconfig for a server.
 *
 * @param parts Server URL and credentials (PEM strings).
 * @returns The kubeconfig object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildKubeconfig } from "./kubeconfig.ts";
 * const cfg = buildKubeconfig({ server: "http://127.0.0.1:6443" });
 * assert.deepEqual([cfg["current-context"], cfg.clusters[0]?.cluster.server], ["kopf-embedded", "http://127.0.0.1:6443"]);
 * ```
 */
export function buildKubeconfig(parts: KubeconfigParts): Kubeconfig {
  const name = parts.contextName ?? "kopf-embedded";
  const cluster: Record<string, unknown> = { server: parts.server };
  if (parts.caCert) cluster["certificate-authority-data"] = b64(parts.caCert);
  // @kubernetes/client-node refuses plain http:// unless TLS verification is
  // explicitly off ("HTTP protocol is not allowed when skipTLSVerify is not
  // set"); kubectl and others ignore the flag for http://.
  else if (parts.server.startsWith("http:")) cluster["insecure-skip-tls-verify"] = true;
  const user: Record<string, unknown> = {};
  if (parts.token) user.token = parts.token;
  if (parts.clientCert && parts.clientKey) {
    user["client-certificate-data"] = b64(parts.clientCert);
    user["client-key-data"] = b64(parts.clientKey);
  }
  return {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: "default" } }],
    "current-context": name,
    preferences: {},
  };
}

/**
 * Renders a kubeconfig as YAML: base64 data on one line, and strings that YAML 1.1 (kubectl's)
 * would read otherwise quoted.
 *
 * @param config The kubeconfig.
 * @returns YAML text.
 */
export function kubeconfigYaml(config: Kubeconfig): string {
  return dump(config, { lineWidth: -1, quoteStyle: "double" });
}
