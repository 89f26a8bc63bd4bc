/**
 * A self-signed CA and a server certificate for webhook servers that are
 * given none (Kopf's `kopf[dev]` certificates, without native tools):
 * WebCrypto keys (ECDSA P-256 / SHA-256) and `@peculiar/x509` for the
 * certificates' structure. `@peculiar/x509` is loaded on the first call,
 * after the `reflect-metadata` polyfill its `tsyringe` needs — as the
 * embedded API server's tls.ts does (kits may not import the API server).
 *
 * @module
 */

import { isIP } from "node:net";

/** A CA and a server certificate signed by it, as PEM (the key as PKCS#8). */
export interface ServerCertificates {
  /** The CA certificate: what clients (apiservers) trust. */
  caCert: string;
  /** The server certificate. */
  serverCert: string;
  /** The server certificate's private key. */
  serverKey: string;
}

type X509 = typeof import("@peculiar/x509");
let loading: Promise<X509> | undefined;

function loadX509(): Promise<X509> {
  loading ??= import("reflect-metadata").then(() => import("@peculiar/x509")).catch((e) => {
    loading = undefined;
    throw e;
  });
  return loading;
}

const KEY: EcKeyGenParams = { name: "ECDSA", namedCurve: "P-256" };
const SIGNING: EcdsaParams = { name: "ECDSA", hash: "SHA-256" };
const SKEW_MS = 5 * 60 * 1000;

/**
 * Makes a fresh CA and a server certificate for the hosts: the first host is the CN, all of
 * them are SANs (IP addresses as iPAddress, names as dNSName).
 *
 * @param hosts The server's host names and addresses.
 * @param days Validity in days (default 365).
 * @returns The PEM certificates and key.
 */
export async function makeServerCertificates(
  hosts: string[],
  days = 365,
): Promise<ServerCertificates> {
  const x509 = await loadX509();
  const { KeyUsageFlags: KU } = x509;
  const notBefore = new Date(Date.now() - SKEW_MS);
  const notAfter = new Date(notBefore.getTime() + SKEW_MS + days * 86_400_000);
  const ca = await crypto.subtle.generateKey(KEY, true, ["sign", "verify"]);
  const server = await crypto.subtle.generateKey(KEY, true, ["sign", "verify"]);
  const name = (cn: string) => new x509.Name([{ CN: [{ utf8String: cn }] }]);
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    name: name("kopf-webhook-ca"),
    keys: ca,
    notBefore,
    notAfter,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(KU.digitalSignature | KU.keyCertSign | KU.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(ca.publicKey, false, crypto),
    ],
  }, crypto);
  const unique = [...new Set(hosts.map(unbracket))];
  const sans = unique.map((h) =>
    isIP(h) ? { type: "ip" as const, value: h } : { type: "dns" as const, value: h }
  );
  const cert = await x509.X509CertificateGenerator.create({
    subject: name(unique[0] ?? "localhost"),
    issuer: caCert.subjectName,
    publicKey: server.publicKey,
    signingKey: ca.privateKey,
    notBefore,
    notAfter,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(KU.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      await x509.SubjectKeyIdentifierExtension.create(server.publicKey, false, crypto),
      await x509.AuthorityKeyIdentifierExtension.create(ca.publicKey, false, crypto),
      new x509.SubjectAlternativeNameExtension(sans, false),
    ],
  }, crypto);
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", server.privateKey);
  return {
    caCert: pem(caCert.toString("pem")),
    serverCert: pem(cert.toString("pem")),
    serverKey: pem(x509.PemConverter.encode(pkcs8, "PRIVATE KEY")),
  };
}

function unbracket(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

function pem(text: string): string {
  return `${text.replaceAll("\r\n", "\n").trimEnd()}\n`;
}
