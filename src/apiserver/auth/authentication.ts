/**
 * Who is asking: the user and groups of a request, as kube-apiserver's
 * authenticators find them, for authorization, admission's `userInfo` and the
 * review APIs.
 *
 * Two modes. Without authorization (the default) the server keeps its simple
 * access check: open, or one bearer token, or (with TLS) a verified client
 * certificate — and everyone who passes is the all-powerful administrator
 * (`system:admin` in `system:masters`), or the certificate's user.
 *
 * With `authorization: "rbac"` every request names its user, as in a cluster:
 * - a client certificate verified by the server's CA: CN is the user, each O a group;
 * - the server's own token (the one its kubeconfig holds): `system:admin` in
 *   `system:masters` — kube-apiserver's administrator, whom nothing can refuse;
 * - a static token (kube-apiserver's `--token-auth-file`): its user, uid and groups;
 * - a service account's token (see `service_account_tokens.ts`):
 *   `system:serviceaccount:<ns>:<name>` in `system:serviceaccounts`,
 *   `system:serviceaccounts:<ns>`;
 * and everyone authenticated is also in `system:authenticated`. Anything else —
 * no credentials, an unknown or expired token — is 401 Unauthorized, as
 * kube-apiserver answers with anonymous authentication off.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import type { ClientIdentity } from "../shared/types.ts";
import { ServiceAccountTokens } from "./service_account_tokens.ts";
import type { Store } from "../storage/store.ts";

/** A user as authentication found it (`user.Info`; `userInfo` in reviews). */
export interface UserInfo {
  /** The user's name, e.g. `system:serviceaccount:default:op` or `alice`. */
  username: string;
  /** The user's uid, when the authenticator knows one. */
  uid?: string;
  /** The groups, `system:authenticated` included. */
  groups: string[];
  /** Extra attributes, e.g. a service account token's credential id. */
  extra?: Record<string, string[]>;
}

/** One line of a static token file (kube-apiserver's `--token-auth-file`). */
export interface StaticToken {
  /** The bearer token. */
  token: string;
  /** The user's name. */
  user: string;
  /** The user's uid (optional). */
  uid?: string;
  /** The user's groups (`system:authenticated` is added). */
  groups?: string[];
}

/** The options authentication reads. */
export interface AuthenticationOptions {
  /** The administrator's bearer token (the server's own kubeconfig holds it). */
  token?: string;
  /** Whether a verified client certificate authenticates (TLS). */
  clientCertificates?: boolean;
  /** Whether every request must name a user (authorization is on). */
  enforce?: boolean;
  /** Static tokens of other users (only with `enforce`). */
  staticTokens?: StaticToken[];
}

/** The all-powerful administrator of the embedded server. */
export const ADMIN_USER: UserInfo = {
  username: "system:admin",
  groups: ["system:masters", "system:authenticated"],
};

/**
 * Finds the user of each request.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer({
 *   authorization: "rbac", // every request must name a user
 *   token: "admin-token",
 *   staticTokens: [{ token: "t1", user: "alice", groups: ["devs"] }],
 * });
 * const authn = api.server.authenticator;
 * const req = new Request("http://x/api", { headers: { authorization: "Bearer t1" } });
 * assert.deepEqual((await authn.authenticate(req)).groups, ["devs", "system:authenticated"]);
 * ```
 */
export class Authenticator {
  /** The service account tokens this server issues and recognises. */
  readonly serviceAccountTokens: ServiceAccountTokens;
  readonly #options: AuthenticationOptions;
  readonly #static: Map<string, UserInfo>;

  /**
   * Creates the authenticator of one server.
   *
   * @param store Where the service accounts are.
   * @param options The administrator's token, client certificates, the mode, static tokens.
   */
  constructor(store: Store, options: AuthenticationOptions) {
    this.#options = options;
    this.serviceAccountTokens = new ServiceAccountTokens(store);
    this.#static = new Map(
      (options.staticTokens ?? []).map((t) => [t.token, {
        username: t.user,
        ...(t.uid ? { uid: t.uid } : {}),
        groups: withAuthenticated(t.groups ?? []),
      }]),
    );
  }

  /** Whether every request must name a user (authorization is on). */
  get enforcing(): boolean {
    return !!this.#options.enforce;
  }

  /**
   * The user of a request.
   *
   * @param req The request (its `Authorization` header).
   * @param identity A client certificate's verified identity, if any.
   * @returns The user.
   * @throws {ApiError} 401 Unauthorized when no credentials are given or they are not valid.
   */
  async authenticate(req: Request, identity?: ClientIdentity): Promise<UserInfo> {
    if (!this.#options.enforce) return this.#legacy(req, identity);
    if (identity && this.#options.clientCertificates) return certificateUser(identity);
    const header = req.headers.get("authorization") ?? "";
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (m) {
      const user = await this.userOfToken(m[1]!);
      if (user) return user;
    }
    throw unauthorized();
  }

  /**
   * The user a bearer token stands for (what a TokenReview answers).
   *
   * @param token The token.
   * @param audience The audience a service account token must carry (default: the API server's).
   * @returns The user, or undefined for an unknown, expired or revoked token.
   */
  async userOfToken(token: string, audience?: string): Promise<UserInfo | undefined> {
    if (this.#options.token && token === this.#options.token) return { ...ADMIN_USER };
    const fixed = this.#static.get(token);
    if (fixed) return structuredClone(fixed);
    return await this.serviceAccountTokens.verify(token, audience);
  }

  /** The access check of a server without authorization, unchanged. */
  #legacy(req: Request, identity?: ClientIdentity): UserInfo {
    const token = this.#options.token;
    const certificates = this.#options.clientCertificates;
    // Open only when neither a token nor client certificates are configured;
    // with TLS, a verified client certificate is enough, otherwise the token is needed.
    if (!token && !certificates) return identity ? certificateUser(identity) : { ...ADMIN_USER };
    if (certificates && identity) return certificateUser(identity);
    if (token && req.headers.get("authorization") === `Bearer ${token}`) return { ...ADMIN_USER };
    throw unauthorized();
  }
}

/**
 * Reads a static token file as kube-apiserver's `--token-auth-file` has it:
 * CSV lines `token,user,uid[,"group1,group2"]`; empty lines and `#` comments skipped.
 *
 * @param text The file's text.
 * @returns The tokens.
 * @throws {Error} For a line with fewer than three fields or a token given twice (the line number).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTokenAuthFile } from "./authentication.ts";
 * const [t] = parseTokenAuthFile('s3cret,alice,u-1,"devs,ops"\n');
 * assert.deepEqual([t?.user, t?.groups], ["alice", ["devs", "ops"]]);
 * ```
 */
export function parseTokenAuthFile(text: string): StaticToken[] {
  const tokens: StaticToken[] = [];
  const seen = new Set<string>();
  text.split(/\r?\n/).forEach((line, index) => {
    if (!line.trim() || line.trimStart().startsWith("#")) return;
    const fields = csvFields(line);
    if (fields.length < 3 || !fields[0] || !fields[1]) {
      throw new Error(
        `line ${index + 1}: expected token,user,uid[,"group1,group2"], got ${JSON.stringify(line)}`,
      );
    }
    const [token, user, uid, groups] = fields as [string, string, string, string | undefined];
    if (seen.has(token)) throw new Error(`line ${index + 1}: the token is given twice`);
    seen.add(token);
    tokens.push({
      token,
      user,
      ...(uid ? { uid } : {}),
      groups: (groups ?? "").split(",").map((g) => g.trim()).filter(Boolean),
    });
  });
  return tokens;
}

/** A certificate's user: CN the name, each O a group. */
function certificateUser(identity: ClientIdentity): UserInfo {
  return { username: identity.commonName, groups: withAuthenticated(identity.organizations) };
}

function withAuthenticated(groups: string[]): string[] {
  return groups.includes("system:authenticated")
    ? [...groups]
    : [...groups, "system:authenticated"];
}

function unauthorized(): ApiError {
  return new ApiError(401, "Unauthorized", "Unauthorized");
}

/** Splits one CSV line: commas separate, double quotes group (`""` is a quote). */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      fields.push(field.trim());
      field = "";
    } else field += ch;
  }
  fields.push(field.trim());
  return fields;
}
