/**
 * What a login handler returns: a {@link ConnectionInfo} — the API server, its
 * CA, the client's certificate or token, the default namespace, the expiry and
 * the priority among other handlers' credentials.
 *
 * @module
 */

/** PEM text, or base64 of PEM text (as kubeconfigs carry it), or its bytes. */
export type PemData = string | Uint8Array;

/** The fields of {@link ConnectionInfo} (Kopf's, camelCased); only `server` is required. */
export interface ConnectionInfoInit {
  /** The API server URL, e.g. `https://10.0.0.1:6443`. */
  server: string;
  /** A file with the CA certificate(s) to trust. */
  caPath?: string | undefined;
  /** The CA certificate(s): PEM, or base64 of PEM (kubeconfig's `certificate-authority-data`). */
  caData?: PemData | undefined;
  /** Skip the verification of the server's certificate. */
  insecure?: boolean | undefined;
  /** Basic authentication user. */
  username?: string | undefined;
  /** Basic authentication password. */
  password?: string | undefined;
  /** The Authorization scheme for the token (default `Bearer`). */
  scheme?: string | undefined;
  /** The token for the Authorization header. */
  token?: string | undefined;
  /** A file with the client certificate (PEM). */
  certificatePath?: string | undefined;
  /** The client certificate: PEM, or base64 of PEM. */
  certificateData?: PemData | undefined;
  /** A file with the client certificate's private key (PEM). */
  privateKeyPath?: string | undefined;
  /** The client private key: PEM, or base64 of PEM. */
  privateKeyData?: PemData | undefined;
  /** The namespace for things that need one when none is given (events of cluster objects). */
  defaultNamespace?: string | undefined;
  /** Higher priorities are used first (default 0). */
  priority?: number | undefined;
  /**
   * When the credentials stop being valid. A `Date`, epoch milliseconds, or
   * an ISO string; a string without a time zone means UTC (as in Kopf).
   */
  expiration?: Date | string | number | undefined;
}

/**
 * One API endpoint with the credentials and connection flags to use it: what
 * a login handler returns. Immutable; two infos with equal fields are
 * {@link ConnectionInfo.equals | equal}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConnectionInfo } from "@kopf/kopf";
 *
 * const info = new ConnectionInfo({ server: "https://k8s:6443", token: "abc", expiration: "2099-12-31T23:59:59" });
 * assert.equal(info.priority, 0);
 * assert.equal(info.expiration?.toISOString(), "2099-12-31T23:59:59.000Z");
 * assert.throws(() => new ConnectionInfo({ server: "https://k8s", caPath: "/ca.crt", caData: "..." }), TypeError);
 * ```
 */
export class ConnectionInfo {
  /** The API server URL. */
  readonly server: string;
  /** A CA file. */
  readonly caPath: string | undefined;
  /** CA data. */
  readonly caData: PemData | undefined;
  /** Skip server certificate verification. */
  readonly insecure: boolean | undefined;
  /** Basic auth user. */
  readonly username: string | undefined;
  /** Basic auth password. */
  readonly password: string | undefined;
  /** The token's Authorization scheme. */
  readonly scheme: string | undefined;
  /** The token. */
  readonly token: string | undefined;
  /** A client certificate file. */
  readonly certificatePath: string | undefined;
  /** Client certificate data. */
  readonly certificateData: PemData | undefined;
  /** A client private key file. */
  readonly privateKeyPath: string | undefined;
  /** Client private key data. */
  readonly privateKeyData: PemData | undefined;
  /** The default namespace. */
  readonly defaultNamespace: string | undefined;
  /** The priority (higher first). */
  readonly priority: number;
  /** When it expires, if ever. */
  readonly expiration: Date | undefined;

  /**
   * Creates connection info.
   *
   * @param init The fields.
   * @throws {TypeError} If both a path and data are given for the same thing,
   *   or the expiration is not a valid time.
   */
  constructor(init: ConnectionInfoInit) {
    if (init.caPath && init.caData) {
      throw new TypeError("ConnectionInfo got both caPath and caData: give only one");
    }
    if (init.certificatePath && init.certificateData) {
      throw new TypeError(
        "ConnectionInfo got both certificatePath and certificateData: give only one",
      );
    }
    if (init.privateKeyPath && init.privateKeyData) {
      throw new TypeError(
        "ConnectionInfo got both privateKeyPath and privateKeyData: give only one",
      );
    }
    this.server = init.server;
    this.caPath = init.caPath;
    this.caData = init.caData;
    this.insecure = init.insecure;
    this.username = init.username;
    this.password = init.password;
    this.scheme = init.scheme;
    this.token = init.token;
    this.certificatePath = init.certificatePath;
    this.certificateData = init.certificateData;
    this.privateKeyPath = init.privateKeyPath;
    this.privateKeyData = init.privateKeyData;
    this.defaultNamespace = init.defaultNamespace;
    this.priority = init.priority ?? 0;
    this.expiration = toDate(init.expiration);
    Object.freeze(this);
  }

  /**
   * Whether the credentials have expired at the given time.
   *
   * @param now Epoch milliseconds (default: now).
   * @returns True if expired.
   */
  isExpired(now: number = Date.now()): boolean {
    return this.expiration !== undefined && now >= this.expiration.getTime();
  }

  /**
   * Field-by-field equality (Kopf's dataclass equality).
   *
   * @param other Another info.
   * @returns True if every field is equal.
   */
  equals(other: ConnectionInfo): boolean {
    if (this === other) return true;
    for (const key of Object.keys(this) as Array<keyof ConnectionInfo>) {
      const a = this[key], b = other[key];
      if (a instanceof Date || b instanceof Date) {
        if (!(a instanceof Date && b instanceof Date && a.getTime() === b.getTime())) return false;
      } else if (a instanceof Uint8Array || b instanceof Uint8Array) {
        if (!(a instanceof Uint8Array && b instanceof Uint8Array)) return false;
        if (a.length !== b.length || a.some((x, i) => x !== b[i])) return false;
      } else if (a !== b) return false;
    }
    return true;
  }
}

function toDate(value: Date | string | number | undefined): Date | undefined {
  if (value === undefined) return undefined;
  let date: Date;
  if (value instanceof Date) date = new Date(value.getTime());
  else if (typeof value === "number") date = new Date(value);
  else {
    // ISO date-times without a zone are UTC, not local time (Kopf: TZ-naive means UTC).
    const zoned = /(?:Z|[+-]\d\d:?\d\d)$/i.test(value) || !value.includes("T");
    date = new Date(zoned ? value : `${value}Z`);
  }
  if (Number.isNaN(date.getTime())) {
    throw new TypeError(`ConnectionInfo got an invalid expiration ${String(value)}: use a Date`);
  }
  return date;
}
