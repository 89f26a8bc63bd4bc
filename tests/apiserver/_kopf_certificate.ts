/**
 * A serving certificate as Python Kopf's `WebhookServer.build_certificate` makes it for its
 * auto servers: self-signed, RSA 2048 / SHA-256, basicConstraints CA:true, keyUsage
 * digitalSignature, keyEncipherment, keyCertSign, cRLSign; extendedKeyUsage serverAuth and
 * clientAuth; the hosts as SANs — IP addresses as iPAddress *and* dNSName entries, names as
 * dNSName — and the first name (or address) as CN. The certificate is its own `caBundle`.
 *
 * @module
 */

import { isIP } from "node:net";

/** The certificate and its key, PEM. */
export interface SelfSignedCertificate {
  cert: string;
  key: string;
}

/**
 * Makes one.
 *
 * @param hosts The hosts (e.g. `["localhost", "127.0.0.1"]`).
 * @param options `ca: false` for the same without CA:true; `days` of validity (negative: expired).
 * @returns The PEM certificate and PKCS#8 key.
 */
export async function kopfLikeCertificate(
  hosts: string[],
  options: { ca?: boolean; days?: number } = {},
): Promise<SelfSignedCertificate> {
  await import("npm:reflect-metadata@^0.2");
  const x509 = await import("npm:@peculiar/x509@^2");
  const alg = {
    name: "RSASSA-PKCS1-v1_5",
    hash: "SHA-256",
    publicExponent: new Uint8Array([1, 0, 1]),
    modulusLength: 2048,
  };
  const keys = await crypto.subtle.generateKey(alg, true, ["sign", "verify"]);
  const ips = hosts.filter((h) => isIP(h));
  const names = hosts.filter((h) => !isIP(h));
  const days = options.days ?? 365;
  const now = Date.now();
  const notBefore = new Date(days < 0 ? now + days * 2 * 86_400_000 : now - 60_000);
  const notAfter = new Date(days < 0 ? now + days * 86_400_000 : now + days * 86_400_000);
  const KU = x509.KeyUsageFlags;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: new x509.Name([{ CN: [{ utf8String: names[0] ?? ips[0] ?? "localhost" }] }]),
    keys,
    notBefore,
    notAfter,
    signingAlgorithm: alg,
    extensions: [
      new x509.BasicConstraintsExtension(options.ca ?? true, undefined, true),
      new x509.KeyUsagesExtension(
        KU.digitalSignature | KU.keyEncipherment | KU.keyCertSign | KU.cRLSign,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([
        x509.ExtendedKeyUsage.serverAuth,
        x509.ExtendedKeyUsage.clientAuth,
      ]),
      new x509.SubjectAlternativeNameExtension([
        ...ips.map((value) => ({ type: "ip" as const, value })),
        ...[...names, ...ips].map((value) => ({ type: "dns" as const, value })),
      ]),
    ],
  }, crypto);
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return {
    cert: cert.toString("pem").replaceAll("\r\n", "\n").trimEnd() + "\n",
    key: x509.PemConverter.encode(pkcs8, "PRIVATE KEY").replaceAll("\r\n", "\n").trimEnd() + "\n",
  };
}
