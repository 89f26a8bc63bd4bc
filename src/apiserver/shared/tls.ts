/**
 * Throw-away certificates for the embedded API server: a CA, a server
 * certificate for the loopback host and a client certificate for
 * client-certificate authentication.
 *
 * Why it exists: the operator framework reads kubeconfigs with
 * `certificate-authority-data`, `client-certificate-data` and
 * `client-key-data`, and those paths need a real TLS peer to be tested
 * against — kubectl (Go's crypto/tls), `@kubernetes/client-node` (node:https)
 * and Deno's `fetch` (rustls). Generating the chain here, with WebCrypto keys
 * and `@peculiar/x509` for the certificate structure, means no `openssl`
 * binary and no fixtures that expire.
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
 *   Both are written as UTF8String values, never parsed as RFC 4514 text, so a
 *   user name with `#`, `,` or quotes is taken literally.
 * - Validity starts five minutes in the past to tolerate clock skew.
 * - `@peculiar/x509` is loaded on the first call, not at import: it costs a
 *   couple of hundred milliseconds to load, and its dependency `tsyringe`
 *   needs the `reflect-metadata` polyfill installed on the global `Reflect`
 *   first — neither should burden an API server (or a `kopf/testing` user)
 *   that never asks for TLS. Signing uses the global WebCrypto, passed
 *   explicitly, so no library-wide crypto provider is set.
 *
 * @module
 */

import { isIPv4 } from "node:net";

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
const KEY_ALGORITHM: EcKeyGenParams = { name: "ECDSA", namedCurve: "P-256" };
const SIGNING_ALGORITHM: EcdsaParams = { name: "ECDSA", hash: "SHA-256" };
const DNS_NAME =
  /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

/** The `@peculiar/x509` module, as {@linkcode loadX509} answers it. */
export type X509 = typeof import("npm:@peculiar/x509@^2");
type SubjectAltName = { type: "dns" | "ip"; value: string };

let x509Loading: Promise<X509> | undefined;

/**
 * Loads `@peculiar/x509` once, after the Reflect polyfill its `tsyringe` requires.
 *
 * @returns The module.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadX509 } from "./tls.ts";
 * const x509 = await loadX509();
 * assert.equal(typeof x509.X509Certificate, "function");
 * ```
 */
export function loadX509(): Promise<X509> {
  x509Loading ??= import("npm:reflect-metadata@^0.2")
    .then(() => import("npm:@peculiar/x509@^2"))
    .catch((error) => {
      x509Loading = undefined; // let a later call retry
      throw error;
    });
  return x509Loading;
}

/**
 * Generates a fresh CA, a server certificate for the loopback host and a
 * client certificate, all ECDSA P-256 / SHA-256, as PEM strings.
 *
 * Nothing is written to disk and no native tool is used (WebCrypto makes and
 * signs, `@peculiar/x509` lays out the certificates), so it works on any
 * machine Deno runs on.
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
  const sans = hosts.map(subjectAltName);
  const user = options.clientCommonName ?? "kopf-admin";
  const group = options.clientOrganization ?? "system:masters";

  const x509 = await loadX509();
  const notBefore = new Date(Date.now() - SKEW_MS);
  const notAfter = new Date(notBefore.getTime() + SKEW_MS + days * 24 * 60 * 60 * 1000);
  const [ca, server, client] = await Promise.all([newKeys(), newKeys(), newKeys()]);
  const { KeyUsageFlags: KU } = x509;

  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    name: distinguishedName(x509, [["CN", "kopf-apiserver-ca"]]),
    keys: ca,
    notBefore,
    notAfter,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(KU.digitalSignature | KU.keyCertSign | KU.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(ca.publicKey, false, crypto),
    ],
  }, crypto);

  /** Issues an end-entity certificate signed by the CA for one purpose (EKU). */
  const issue = async (
    keys: CryptoKeyPair,
    subject: ReadonlyArray<readonly [string, string]>,
    purpose: string,
    extra: InstanceType<X509["Extension"]>[] = [],
  ): Promise<string> => {
    const cert = await x509.X509CertificateGenerator.create({
      subject: distinguishedName(x509, subject),
      issuer: caCert.subjectName, // the CA's exact bytes, as chain building compares them
      publicKey: keys.publicKey,
      signingKey: ca.privateKey,
      notBefore,
      notAfter,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(KU.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([purpose], false),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
        await x509.AuthorityKeyIdentifierExtension.create(ca.publicKey, false, crypto),
        ...extra,
      ],
    }, crypto);
    return pem(cert.toString("pem"));
  };

  const { serverAuth, clientAuth } = x509.ExtendedKeyUsage;
  const serverCert = await issue(server, [["CN", hosts[0] ?? "localhost"]], serverAuth, [
    new x509.SubjectAlternativeNameExtension(sans, false),
  ]);
  const clientCert = await issue(
    client,
    [...(group ? [["O", group] as const] : []), ["CN", user]],
    clientAuth,
  );

  return {
    caCert: pem(caCert.toString("pem")),
    caKey: await privateKeyPem(x509, ca),
    serverCert,
    serverKey: await privateKeyPem(x509, server),
    clientCert,
    clientKey: await privateKeyPem(x509, client),
  };
}

/** A client certificate and its key (PEM), as {@linkcode issueClientCertificate} makes them. */
export interface ClientCertificate {
  /** The certificate (CN = user, one O per group), signed by the CA. */
  cert: string;
  /** Its private key (PKCS#8 PEM). */
  key: string;
}

/**
 * Issues one more client certificate from a bundle's CA, for another user: the
 * Kubernetes x509 authenticator reads the CN as the user and each O as a group
 * (what `kubectl` presents with `client-certificate-data`).
 *
 * @param ca The CA certificate and key (from {@linkcode generateCertificates}).
 * @param user The user name (CN).
 * @param groups The groups (one O each).
 * @param days How many days it stays valid. @default {365}
 * @returns The certificate and its key, PEM.
 * @throws {RangeError} If `days` is not a positive number.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generateCertificates, issueClientCertificate } from "./tls.ts";
 * const tls = await generateCertificates({});
 * const alice = await issueClientCertificate(tls, "alice", ["devs", "ops"]);
 * assert.deepEqual(alice.cert.startsWith("-----BEGIN CERTIFICATE-----"), true);
 * ```
 */
export async function issueClientCertificate(
  ca: Pick<TlsBundle, "caCert" | "caKey">,
  user: string,
  groups: string[] = [],
  days = 365,
): Promise<ClientCertificate> {
  if (!(days > 0) || !Number.isFinite(days)) {
    throw new RangeError(
      `TLS certificate validity must be a positive number of days, got ${days}.`,
    );
  }
  const x509 = await loadX509();
  const caCert = new x509.X509Certificate(ca.caCert);
  const caKey = await crypto.subtle.importKey(
    "pkcs8",
    x509.PemConverter.decodeFirst(ca.caKey),
    KEY_ALGORITHM,
    false,
    ["sign"],
  );
  const caPublic = await caCert.publicKey.export(KEY_ALGORITHM, ["verify"], crypto);
  const keys = await newKeys();
  const notBefore = new Date(Date.now() - SKEW_MS);
  const notAfter = new Date(notBefore.getTime() + SKEW_MS + days * 24 * 60 * 60 * 1000);
  const { KeyUsageFlags: KU } = x509;
  const cert = await x509.X509CertificateGenerator.create({
    subject: distinguishedName(x509, [...groups.map((g) => ["O", g] as const), ["CN", user]]),
    issuer: caCert.subjectName,
    publicKey: keys.publicKey,
    signingKey: caKey,
    notBefore,
    notAfter,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(KU.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      await x509.AuthorityKeyIdentifierExtension.create(caPublic, false, crypto),
    ],
  }, crypto);
  return { cert: pem(cert.toString("pem")), key: await privateKeyPem(x509, keys) };
}

/** An extractable ECDSA P-256 key pair (extractable, so the private key can be exported). */
async function newKeys(): Promise<CryptoKeyPair> {
  return await crypto.subtle.generateKey(KEY_ALGORITHM, true, ["sign", "verify"]);
}

/** A subject/issuer name from (type, value) pairs, each value a literal UTF8String. */
function distinguishedName(
  x509: X509,
  attributes: ReadonlyArray<readonly [string, string]>,
): InstanceType<X509["Name"]> {
  return new x509.Name(attributes.map(([type, value]) => ({ [type]: [{ utf8String: value }] })));
}

/**
 * A SubjectAltName entry: iPAddress for IPv4/IPv6 literals (brackets allowed),
 * dNSName for host names; anything else is refused.
 */
function subjectAltName(host: string): SubjectAltName {
  const text = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (isIPv4(text)) return { type: "ip", value: text };
  const ipv6 = text.includes(":") ? canonicalIpv6(text) : undefined;
  if (ipv6) return { type: "ip", value: ipv6 };
  if (DNS_NAME.test(host)) return { type: "dns", value: host };
  throw new TypeError(
    `TLS host ${JSON.stringify(host)} is neither an IP address nor a DNS name; ` +
      `pass names like "localhost", "api.example" or addresses like "127.0.0.1", "::1".`,
  );
}

/**
 * Validates an IPv6 literal with the WHATWG URL parser and returns it in hex
 * groups only (`::ffff:10.0.0.1` → `::ffff:a00:1`), the form `@peculiar/x509`
 * encodes correctly; `undefined` if it is not one.
 */
function canonicalIpv6(text: string): string | undefined {
  if (!URL.canParse(`http://[${text}]/`)) return undefined;
  return new URL(`http://[${text}]/`).hostname.slice(1, -1);
}

/** Exports a private key as PKCS#8 PEM. */
async function privateKeyPem(x509: X509, keys: CryptoKeyPair): Promise<string> {
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return pem(x509.PemConverter.encode(pkcs8, "PRIVATE KEY"));
}

/** Normalises a PEM block to LF line ends and one trailing newline, as PEM files have. */
function pem(text: string): string {
  return `${text.replaceAll("\r\n", "\n").trimEnd()}\n`;
}
