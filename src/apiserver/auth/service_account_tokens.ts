/**
 * Service account tokens: what `POST .../serviceaccounts/<name>/token` (the
 * TokenRequest subresource, `kubectl create token <name>`) answers, and how a
 * bearer token is recognised as one later.
 *
 * Why JWTs, as kube-apiserver issues: clients and people read them (`jwt.io`,
 * `kubectl create token | cut -d. -f2 | base64 -d`), and a signed token needs no
 * table of issued tokens. The claims are kube-apiserver's (`iss`, `sub`, `aud`,
 * `exp`, `iat`, `nbf`, `jti`, and `kubernetes.io` with the namespace, the
 * service account's name and uid, and the bound object); the signature is
 * HMAC-SHA256 with a key made at start — nobody outside verifies it, and it
 * saves a key pair. So tokens do not survive a restart of the server, even with
 * a data directory: ask for a new one.
 *
 * As kube-apiserver checks, a token is valid only while the service account it
 * names exists with the same uid (a recreated account does not inherit old
 * tokens), while a bound object exists with its uid, and when its audiences
 * include the API server's own (`https://kubernetes.default.svc.cluster.local`).
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import type { Store } from "../storage/store.ts";
import type { KObject } from "../shared/types.ts";

/** The API server's audience and issuer, as kubeadm and kind configure them. */
export const API_AUDIENCE = "https://kubernetes.default.svc.cluster.local";

/** The user a service account's token authenticates as. */
export interface ServiceAccountUser {
  /** `system:serviceaccount:<namespace>:<name>`. */
  username: string;
  /** The service account's uid. */
  uid: string;
  /** `system:serviceaccounts`, `system:serviceaccounts:<namespace>`, `system:authenticated`. */
  groups: string[];
  /** The token's id, as `authentication.kubernetes.io/credential-id`. */
  extra: Record<string, string[]>;
}

/** The `kubernetes.io` claim of a token. */
interface KubernetesClaim {
  namespace: string;
  serviceaccount: { name: string; uid: string };
  pod?: { name: string; uid: string };
  secret?: { name: string; uid: string };
}

/** The claims of a token. */
interface Claims {
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  iss: string;
  jti: string;
  sub: string;
  "kubernetes.io": KubernetesClaim;
}

/** The spec of a TokenRequest. */
export interface TokenRequestSpec {
  /** Who the token is for (default: the API server). */
  audiences?: string[];
  /** How long it is valid (default 3600, at least 600). */
  expirationSeconds?: number;
  /** An object whose deletion ends the token: a Pod or a Secret in the same namespace. */
  boundObjectRef?: { kind?: string; apiVersion?: string; name?: string; uid?: string } | null;
}

const MIN_SECONDS = 600;
const DEFAULT_SECONDS = 3600;
const BOUND_KINDS: Record<string, string> = { Pod: "pods", Secret: "secrets" };

/**
 * Issues and verifies service account tokens for one API server.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer();
 * api.server.store.commit("ADDED", "serviceaccounts", { metadata: { name: "op", namespace: "default", uid: "u1" } });
 * const tokens = api.server.authenticator.serviceAccountTokens;
 * const answer = await tokens.request("default", "op", {});
 * const user = await tokens.verify((answer.status as { token: string }).token);
 * assert.deepEqual(user?.username, "system:serviceaccount:default:op");
 * ```
 */
export class ServiceAccountTokens {
  readonly #store: Store;
  #key: Promise<CryptoKey> | undefined;
  /** Time source, in milliseconds (tests may replace it). */
  now: () => number = () => Date.now();

  /**
   * Creates the issuer; its signing key is made on first use.
   *
   * @param store Where the service accounts (and bound objects) are.
   */
  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * Answers a TokenRequest for a service account.
   *
   * @param namespace The service account's namespace.
   * @param name The service account's name.
   * @param body The TokenRequest sent (its `spec`), or an empty object.
   * @returns The TokenRequest with `status.token` and `status.expirationTimestamp`.
   * @throws {ApiError} 404 when the service account (or the bound object) is missing, 422 for a too short duration, 400 for a bad body.
   */
  async request(namespace: string, name: string, body: unknown): Promise<KObject> {
    const sa = this.#store.get("serviceaccounts", namespace, name);
    if (!sa || sa.metadata.deletionTimestamp) throw ApiError.notFound("serviceaccounts", "", name);
    if (body !== null && typeof body !== "object") {
      throw ApiError.badRequest("the body of a token request must be a TokenRequest object");
    }
    const spec: TokenRequestSpec = (body as { spec?: TokenRequestSpec })?.spec ?? {};
    const seconds = spec.expirationSeconds ?? DEFAULT_SECONDS;
    if (!Number.isInteger(seconds) || seconds < MIN_SECONDS) {
      throw ApiError.invalid("TokenRequest", "authentication.k8s.io", name, [{
        reason: "FieldValueInvalid",
        field: "spec.expirationSeconds",
        message: `Invalid value: ${
          JSON.stringify(seconds)
        }: may not specify a duration less than 10 minutes`,
      }]);
    }
    const audiences = spec.audiences?.length ? [...spec.audiences] : [API_AUDIENCE];
    const claim: KubernetesClaim = {
      namespace,
      serviceaccount: { name, uid: sa.metadata.uid ?? "" },
    };
    const ref = spec.boundObjectRef;
    if (ref) {
      const plural = BOUND_KINDS[ref.kind ?? ""];
      if (!plural || !ref.name) {
        throw ApiError.badRequest(
          `boundObjectRef must name a Pod or a Secret in the namespace ${namespace}, not ${
            JSON.stringify(ref)
          }`,
        );
      }
      const bound = this.#store.get(plural, namespace, ref.name);
      if (!bound || (ref.uid && ref.uid !== bound.metadata.uid)) {
        throw ApiError.notFound(plural, "", ref.name);
      }
      const who = { name: ref.name, uid: bound.metadata.uid ?? "" };
      if (ref.kind === "Pod") claim.pod = who;
      else claim.secret = who;
    }
    const now = Math.floor(this.now() / 1000);
    const claims: Claims = {
      aud: audiences,
      exp: now + seconds,
      iat: now,
      nbf: now,
      iss: API_AUDIENCE,
      jti: crypto.randomUUID(),
      sub: `system:serviceaccount:${namespace}:${name}`,
      "kubernetes.io": claim,
    };
    const token = await this.#sign(claims);
    return {
      kind: "TokenRequest",
      apiVersion: "authentication.k8s.io/v1",
      metadata: {
        name,
        namespace,
        creationTimestamp: new Date(now * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
      },
      spec: {
        audiences,
        expirationSeconds: seconds,
        boundObjectRef: ref ?? null,
      },
      status: {
        token,
        expirationTimestamp: new Date(claims.exp * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
      },
    };
  }

  /**
   * The user a token authenticates as, if it is one of ours and still valid.
   *
   * @param token The bearer token.
   * @param audience The audience it must carry (default: the API server's).
   * @returns The service account's user, or undefined.
   */
  async verify(token: string, audience = API_AUDIENCE): Promise<ServiceAccountUser | undefined> {
    const parts = token.split(".");
    if (parts.length !== 3) return undefined;
    const [header, payload, signature] = parts as [string, string, string];
    const key = await this.#signingKey();
    let valid = false;
    try {
      valid = await crypto.subtle.verify(
        "HMAC",
        key,
        fromBase64Url(signature),
        new TextEncoder().encode(`${header}.${payload}`),
      );
    } catch {
      return undefined;
    }
    if (!valid) return undefined;
    let claims: Claims;
    try {
      claims = JSON.parse(new TextDecoder().decode(fromBase64Url(payload))) as Claims;
    } catch {
      return undefined;
    }
    const now = Math.floor(this.now() / 1000);
    const k = claims["kubernetes.io"];
    if (
      claims.exp <= now || claims.nbf > now + 60 || !claims.aud?.includes(audience) ||
      !k?.serviceaccount
    ) {
      return undefined;
    }
    const sa = this.#store.get("serviceaccounts", k.namespace, k.serviceaccount.name);
    if (!sa || sa.metadata.deletionTimestamp || sa.metadata.uid !== k.serviceaccount.uid) {
      return undefined;
    }
    for (const [plural, who] of [["pods", k.pod], ["secrets", k.secret]] as const) {
      if (!who) continue;
      const bound = this.#store.get(plural, k.namespace, who.name);
      if (!bound || bound.metadata.deletionTimestamp || bound.metadata.uid !== who.uid) {
        return undefined;
      }
    }
    return {
      username: claims.sub,
      uid: k.serviceaccount.uid,
      groups: [
        "system:serviceaccounts",
        `system:serviceaccounts:${k.namespace}`,
        "system:authenticated",
      ],
      extra: { "authentication.kubernetes.io/credential-id": [`JTI=${claims.jti}`] },
    };
  }

  async #sign(claims: Claims): Promise<string> {
    const header = base64Url(JSON.stringify({ alg: "HS256", kid: "kopf-embedded" }));
    const payload = base64Url(JSON.stringify(claims));
    const signature = await crypto.subtle.sign(
      "HMAC",
      await this.#signingKey(),
      new TextEncoder().encode(`${header}.${payload}`),
    );
    return `${header}.${payload}.${base64Url(new Uint8Array(signature))}`;
  }

  #signingKey(): Promise<CryptoKey> {
    return this.#key ??= crypto.subtle.generateKey(
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    ) as Promise<CryptoKey>;
  }
}

function base64Url(data: string | Uint8Array): string {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
