/**
 * Throw-away certificates for the embedded API server: a CA, a server
 * certificate for the loopback host and a client certificate for
 * client-certificate authentication.
 *
 * Why it exists: the operator framework reads kubeconfigs with
 * `certificate-authority-data`, `client-certificate-data` and
 * `client-key-data`, and those paths need a real TLS peer to be tested
 * against — kubectl (Go's crypto/tls), `@kubernetes/client-node` (node:https)
 * and Deno's `fetch` (rustls). Generating the chain here, with WebCrypto and a
 * small DER encoder, means no `openssl` binary and no fixtures that expire.
 *
 * Choices, and why:
 * - ECDSA P-256 with SHA-256: accepted by rustls, Go and node; fast to make.
 * - Keys are PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), which WebCrypto
 *   exports directly and which rustls, Go's `tls.X509KeyPair` (so kubectl)
 *   and node all load; SEC1 (`EC PRIVATE KEY`) is not needed by any of them.
 * - The server certificate names `localhost`, `127.0.0.1` and `::1` in its
 *   SubjectAltName (clients ignore the CN) with extendedKeyUsage serverAuth.
 * - The client certificate carries the user as CN and the group as O, as the
 *   Kubernetes x509 authenticator reads them, with extendedKeyUsage clientAuth.
 * - Validity starts five minutes in the past to tolerate clock skew.
 *
 * @module
 */

import {
  bitString,
  boolean,
  concat,
  explicit,
  implicit,
  integer,
  namedBits,
  octetString,
  oid,
  sequence,
  set,
  time,
  utf8String,
} from "./_der.ts";

/** PEM-encoded certificates and PKCS#8 private keys made by {@linkcode generateCertificates}. */
export interface TlsBundle {
  /** The self-signed CA certificate; give it to clients as their trust anchor. */
  caCert: string;
  /** The CA's private key (PKCS#8 PEM), to sign more certificates if needed. */
  caKey: string;
  /** The server certificate for the loopback host, signed by the CA. */
  serverCert: string;
  /** The server certificate's private key (PKCS#8 PEM). */
  serverKey: string;
  /** The client certificate (CN = user, O = group), signed by the CA. */
  clientCert: string;
  /** The client certificate's private key (PKCS#8 PEM). */
  clientKey: string;
}

/** Options for {@linkcode generateCertificates}. */
export interface GenerateCertificatesOptions {
  /**
   * Extra DNS names or IP addresses (v4 or v6) for the server certificate's
   * SubjectAltName, in addition to `localhost`, `127.0.0.1` and `::1`.
   */
  hosts?: string[];
  /** How many days the certificates stay valid. @default {365} */
  days?: number;
  /** The client certificate's CN, i.e. the Kubernetes user name. @default {"kopf-admin"} */
  clientCommonName?: string;
  /**
   * The client certificate's O, i.e. the Kubernetes group; an empty string
   * leaves it out. @default {"system:masters"}
   */
  clientOrganization?: string;
}

const DEFAULT_HOSTS = ["localhost", "127.0.0.1", "::1"];
const SKEW_MS = 5 * 60 * 1000;

const OID = {
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  ecPublicKey: "1.2.840.10045.2.1",
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  subjectKeyIdentifier: "2.5.29.14",
  keyUsage: "2.5.29.15",
  subjectAltName: "2.5.29.17",
  basicConstraints: "2.5.29.19",
  authorityKeyIdentifier: "2.5.29.35",
  extKeyUsage: "2.5.29.37",
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
} as const;

/** KeyUsage bit numbers (RFC 5280 §4.2.1.3). */
const KU = { digitalSignature: 0, keyCertSign: 5, cRLSign: 6 } as const;

/** A key pair with the bits a certificate needs from it. */
interface Party {
  keys: CryptoKeyPair;
  spki: Uint8Array;
  keyId: Uint8Array;
  name: Uint8Array;
}

/**
 * Generates a fresh CA, a server certificate for the loopback host and a
 * client certificate, all ECDSA P-256 / SHA-256, as PEM strings.
 *
 * Nothing is written to disk and nothing outside WebCrypto is used, so it
 * works on any machine Deno runs on.
 *
 * @param options Extra hosts, validity and the client's user and group.
 * @returns The PEM bundle: CA, server and client certificates and keys.
 * @throws {RangeError} If `days` is not a positive number.
 * @throws {TypeError} If a host is neither an IP address nor a DNS name.
 *
 * @example Make a chain and trust it in a Deno HTTP client
 * ```ts
 * import { generateCertificates } from "./tls.ts";
 *
 * const tls = await generateCertificates({ clientCommonName: "alice" });
 * console.assert(tls.caCert.startsWith("-----BEGIN CERTIFICATE-----"));
 * console.assert(tls.clientKey.startsWith("-----BEGIN PRIVATE KEY-----"));
 * const client = Deno.createHttpClient({
 *   caCerts: [tls.caCert],
 *   cert: tls.clientCert,
 *   key: tls.clientKey,
 * });
 * client.close();
 * ```
 */
export async function generateCertificates(
  options: GenerateCertificatesOptions = {},
): Promise<TlsBundle> {
  const days = options.days ?? 365;
  if (!(days > 0) || !Number.isFinite(days)) {
    throw new RangeError(
      `TLS certificate validity must be a positive number of days, got ${days}.`,
    );
  }
  const hosts = [...new Set([...DEFAULT_HOSTS, ...(options.hosts ?? [])])];
  const sans = hosts.map(generalName);
  const user = options.clientCommonName ?? "kopf-admin";
  const group = options.clientOrganization ?? "system:masters";

  const notBefore = new Date(Date.now() - SKEW_MS);
  const notAfter = new Date(notBefore.getTime() + SKEW_MS + days * 24 * 60 * 60 * 1000);
  const validity = sequence(time(notBefore), time(notAfter));

  const ca = await newParty([[OID.commonName, "kopf-apiserver-ca"]]);
  const server = await newParty([[OID.commonName, hosts[0] ?? "localhost"]]);
  const client = await newParty([
    ...(group ? [[OID.organization, group] as const] : []),
    [OID.commonName, user],
  ]);

  const caCert = await issue(ca, ca, validity, [
    extension(OID.basicConstraints, true, sequence(boolean(true), integer(0))),
    extension(
      OID.keyUsage,
      true,
      namedBits([KU.digitalSignature, KU.keyCertSign, KU.cRLSign]),
    ),
    extension(OID.subjectKeyIdentifier, false, octetString(ca.keyId)),
  ]);
  const serverCert = await issue(server, ca, validity, [
    ...leafExtensions(server, ca, OID.serverAuth),
    extension(OID.subjectAltName, false, sequence(...sans)),
  ]);
  const clientCert = await issue(client, ca, validity, leafExtensions(client, ca, OID.clientAuth));

  return {
    caCert: pem("CERTIFICATE", caCert),
    caKey: await privateKeyPem(ca),
    serverCert: pem("CERTIFICATE", serverCert),
    serverKey: await privateKeyPem(server),
    clientCert: pem("CERTIFICATE", clientCert),
    clientKey: await privateKeyPem(client),
  };
}

/** Makes a key pair and derives what certificates need from it. */
async function newParty(subject: ReadonlyArray<readonly [string, string]>): Promise<Party> {
  const keys = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", keys.publicKey));
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", keys.publicKey));
  const keyId = new Uint8Array(await crypto.subtle.digest("SHA-1", raw));
  const name = sequence(
    ...subject.map(([type, value]) => set(sequence(oid(type), utf8String(value)))),
  );
  return { keys, spki, keyId, name };
}

/** Extensions shared by the server and client (end-entity) certificates. */
function leafExtensions(subject: Party, issuer: Party, purpose: string): Uint8Array[] {
  return [
    extension(OID.basicConstraints, true, sequence()),
    extension(OID.keyUsage, true, namedBits([KU.digitalSignature])),
    extension(OID.extKeyUsage, false, sequence(oid(purpose))),
    extension(OID.subjectKeyIdentifier, false, octetString(subject.keyId)),
    extension(OID.authorityKeyIdentifier, false, sequence(implicit(0, issuer.keyId))),
  ];
}

/** `Extension ::= SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }`. */
function extension(id: string, critical: boolean, value: Uint8Array): Uint8Array {
  return critical
    ? sequence(oid(id), boolean(true), octetString(value))
    : sequence(oid(id), octetString(value));
}

/** Builds and signs an X.509 v3 certificate; returns its DER bytes. */
async function issue(
  subject: Party,
  issuer: Party,
  validity: Uint8Array,
  extensions: Uint8Array[],
): Promise<Uint8Array> {
  const algorithm = sequence(oid(OID.ecdsaWithSha256));
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive, non-zero, fixed length
  const tbs = sequence(
    explicit(0, integer(2)), // version: v3
    integer(serial),
    algorithm,
    issuer.name,
    validity,
    subject.name,
    subject.spki,
    explicit(3, sequence(...extensions)),
  );
  const raw = new Uint8Array(
    await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      issuer.keys.privateKey,
      concat(tbs),
    ),
  );
  // WebCrypto gives r || s; X.509 wants ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }.
  const half = raw.length / 2;
  const signature = sequence(integer(raw.subarray(0, half)), integer(raw.subarray(half)));
  return sequence(tbs, algorithm, bitString(signature));
}

/** A SubjectAltName GeneralName: iPAddress [7] for IPs, dNSName [2] otherwise. */
function generalName(host: string): Uint8Array {
  const ip = parseIp(host);
  if (ip) return implicit(7, ip);
  if (
    !/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/
      .test(host)
  ) {
    throw new TypeError(
      `TLS host ${JSON.stringify(host)} is neither an IP address nor a DNS name; ` +
        `pass names like "localhost", "api.example" or addresses like "127.0.0.1", "::1".`,
    );
  }
  // dNSName ::= [2] IMPLICIT IA5String: the ASCII bytes under a context tag.
  return implicit(2, new TextEncoder().encode(host));
}

/** Parses an IPv4 or IPv6 literal into 4 or 16 bytes; `undefined` if it is not one. */
function parseIp(host: string): Uint8Array | undefined {
  const v4 = parseIpv4(host);
  if (v4) return v4;
  const text = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (!text.includes(":")) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string | undefined): number[] | undefined => {
    if (!part) return [];
    const out: number[] = [];
    for (const piece of part.split(":")) {
      if (piece.includes(".")) {
        const tail = parseIpv4(piece);
        if (!tail) return undefined;
        out.push((tail[0]! << 8) | tail[1]!, (tail[2]! << 8) | tail[3]!);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) {
        out.push(parseInt(piece, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...new Array<number>(halves.length === 1 ? 0 : missing).fill(0), ...tail];
  return Uint8Array.from(all.flatMap((g) => [g >> 8, g & 0xff]));
}

/** Parses a dotted-quad IPv4 literal into 4 bytes; `undefined` if it is not one. */
function parseIpv4(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p))) return undefined;
  const bytes = parts.map(Number);
  return bytes.every((b) => b <= 255) ? Uint8Array.from(bytes) : undefined;
}

/** Exports a party's private key as PKCS#8 PEM. */
async function privateKeyPem(party: Party): Promise<string> {
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", party.keys.privateKey);
  return pem("PRIVATE KEY", new Uint8Array(pkcs8));
}

/** Wraps DER bytes in a PEM block with 64-character base64 lines. */
function pem(label: string, der: Uint8Array): string {
  let binary = "";
  for (const byte of der) binary += String.fromCharCode(byte);
  const lines = btoa(binary).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}
