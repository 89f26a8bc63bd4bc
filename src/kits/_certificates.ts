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

type X509 = typeof import("npm:@peculiar/x509@^2");
let loading: Promise<X509> | undefined;

function loadX509(): Promise<X509> {
  loading ??= import("npm:reflect-metadata@^0.2").then(() => import("npm:@peculiar/x509@^2")).catch(
    (e) => {
      loading = undefined;
      throw e;
    },
  );
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

/**
 * A peer certificate as Python's `ssl.SSLSocket.getpeercert()` gives it (what Kopf passes to
 * admission handlers as `sslpeer`): names as tuples of `[key, value]` pairs per RDN with
 * OpenSSL's long attribute names, dates as OpenSSL prints them.
 */
export interface PeerCertificate {
  [key: string]: unknown;
  /** E.g. `[[["commonName", "kube-apiserver"]], [["organizationName", "system:masters"]]]`. */
  subject: [string, string][][];
  /** The issuer, in the same shape. */
  issuer: [string, string][][];
  /** The X.509 version (3 for v3). */
  version: number;
  /** Upper-case hex, e.g. `"F01984716829537E"`. */
  serialNumber: string;
  /** E.g. `"Mar  7 17:12:20 2021 GMT"`. */
  notBefore: string;
  /** In the same format. */
  notAfter: string;
  /** E.g. `[["DNS", "localhost"], ["IP Address", "127.0.0.1"]]`, when the extension exists. */
  subjectAltName?: [string, string][];
}

/** OpenSSL's long names of the attributes Python prints (others print as their OID). */
const LONG_NAMES: Record<string, string> = {
  "2.5.4.3": "commonName",
  "2.5.4.4": "surname",
  "2.5.4.5": "serialNumber",
  "2.5.4.6": "countryName",
  "2.5.4.7": "localityName",
  "2.5.4.8": "stateOrProvinceName",
  "2.5.4.9": "streetAddress",
  "2.5.4.10": "organizationName",
  "2.5.4.11": "organizationalUnitName",
  "2.5.4.12": "title",
  "2.5.4.17": "postalCode",
  "2.5.4.42": "givenName",
  "2.5.4.43": "initials",
  "2.5.4.46": "dnQualifier",
  "1.2.840.113549.1.9.1": "emailAddress",
  "0.9.2342.19200300.100.1.1": "userId",
  "0.9.2342.19200300.100.1.25": "domainComponent",
};

/** `@peculiar/x509`'s short names of attributes (in `Name.toJSON()`), as OIDs. */
const SHORT_NAMES: Record<string, string> = {
  CN: "2.5.4.3",
  L: "2.5.4.7",
  ST: "2.5.4.8",
  O: "2.5.4.10",
  OU: "2.5.4.11",
  C: "2.5.4.6",
  DC: "0.9.2342.19200300.100.1.25",
  E: "1.2.840.113549.1.9.1",
  G: "2.5.4.42",
  I: "2.5.4.43",
  SN: "2.5.4.4",
  T: "2.5.4.12",
};

const SAN_TYPES: Record<string, string> = {
  dns: "DNS",
  ip: "IP Address",
  email: "email",
  url: "URI",
  dn: "DirName",
  id: "Registered ID",
};

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * Describes a DER certificate as Python's `getpeercert()` does.
 *
 * @param der The certificate (e.g. `TLSSocket.getPeerCertificate().raw`).
 * @returns The description.
 * @throws {Error} For bytes that are not a certificate.
 */
export async function describePeerCertificate(der: Uint8Array): Promise<PeerCertificate> {
  const x509 = await loadX509();
  const cert = new x509.X509Certificate(Uint8Array.from(der));
  const names = (name: InstanceType<X509["Name"]>): [string, string][][] =>
    name.toJSON().map((rdn) =>
      Object.entries(rdn).flatMap(([type, values]) =>
        values.map((v) => {
          const oid = SHORT_NAMES[type] ?? type;
          return [LONG_NAMES[oid] ?? oid, v] as [string, string];
        })
      )
    );
  const serial = cert.serialNumber.toUpperCase().replace(/^(00)+(?=..)/, "");
  const info: PeerCertificate = {
    subject: names(cert.subjectName),
    issuer: names(cert.issuerName),
    version: versionOf(new Uint8Array(cert.rawData)),
    serialNumber: serial,
    notBefore: opensslDate(cert.notBefore),
    notAfter: opensslDate(cert.notAfter),
  };
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  if (san) {
    info.subjectAltName = san.names.items.map((n) => [
      SAN_TYPES[n.type] ?? "othername",
      n.type === "ip" ? pythonIp(n.value) : SAN_TYPES[n.type] ? n.value : "<unsupported>",
    ]);
  }
  return info;
}

/** The X.509 version (1-based) from the DER: TBSCertificate's `[0] EXPLICIT INTEGER`, v1 if absent. */
function versionOf(der: Uint8Array): number {
  const skipHeader = (i: number) => {
    const len = der[i + 1] ?? 0;
    return i + 2 + (len & 0x80 ? len & 0x7f : 0);
  };
  const tbs = skipHeader(0);
  const first = skipHeader(tbs);
  if (der[first] !== 0xa0) return 1;
  return (der[first + 4] ?? 0) + 1;
}

function opensslDate(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, " ")} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} ` +
    `${d.getUTCFullYear()} GMT`;
}

/** IPv6 as OpenSSL prints it for Python: eight upper-case groups, no compression. */
function pythonIp(ip: string): string {
  if (!ip.includes(":")) return ip;
  const [head = "", tail] = ip.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === undefined
    ? left
    : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return groups.map((g) => parseInt(g, 16).toString(16).toUpperCase()).join(":");
}
