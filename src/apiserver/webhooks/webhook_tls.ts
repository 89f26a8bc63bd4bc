/**
 * Webhook calls verified as Go's `crypto/x509` verifies them, for the
 * certificates rustls refuses and kube-apiserver accepts.
 *
 * Why it exists: Python Kopf's auto servers (and many a hand-made webhook)
 * serve one self-signed certificate that is both the `caBundle` and the
 * serving certificate, with basicConstraints `CA:true`. Go accepts it — a
 * certificate that is itself one of the roots is a chain of one — but
 * rustls/webpki (Deno's `fetch`) refuses any CA certificate as an end entity
 * (`CaUsedAsEndEntity`), whatever the trust anchors. When `fetch` says so,
 * the call is made again here: over `node:https` with rustls' verification
 * off, and the peer's certificate judged by Go's rules before a byte of the
 * review is sent.
 *
 * The rules (Go's `Certificate.Verify` with the bundle as `Roots` and
 * `VerifyHostname`):
 * - the leaf is within its validity period;
 * - the leaf is one of the bundle's certificates (byte for byte), or it
 *   chains to one: each issuer found by name among the bundle (and the
 *   certificates the peer sent), a CA (basicConstraints), valid now, whose
 *   key verifies the signature — at most 10 deep;
 * - the leaf's extendedKeyUsage, when it has one, allows serverAuth;
 * - the host: an IP address must be among the iPAddress SANs, a name among
 *   the dNSName SANs (a `*.` wildcard for one left-most label); the subject's
 *   CN is never used.
 * Failures are worded as Go words them (after `tls: failed to verify
 * certificate: `), e.g. `x509: certificate signed by unknown authority`.
 *
 * Not done: name constraints, policy checks and revocation (kube-apiserver's
 * webhook client does none of the latter two either).
 *
 * @module
 */

import { request as httpsRequest } from "node:https";
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import { isIP } from "node:net";
import { loadX509, type X509 } from "../shared/tls.ts";

type Certificate = InstanceType<X509["X509Certificate"]>;

const MAX_DEPTH = 10;
const SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
const ANY_EKU = "2.5.29.37.0";

/** A certificate refused by Go's rules: the message is Go's (after `tls: failed to verify certificate: `). */
export class GoVerifyError extends Error {
  override name = "GoVerifyError";
}

/**
 * Judges a peer's certificates as Go's `crypto/x509` does with `roots` as the only roots.
 *
 * @param peer The peer's certificates, DER, the leaf first.
 * @param rootsPem The trusted certificates (the `caBundle`), PEM.
 * @param host The host the client asked for (a name or an IP address).
 * @param now The time to judge at.
 * @returns Nothing when the certificate is good.
 * @throws {GoVerifyError} With Go's reason when it is not.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyAsGo } from "./webhook_tls.ts";
 * import { generateCertificates } from "../shared/tls.ts";
 * const tls = await generateCertificates({});
 * const der = Uint8Array.from(atob(tls.serverCert.replace(/-----[^-]+-----|\s/g, "")), (c) => c.charCodeAt(0));
 * await verifyAsGo([der], tls.caCert, "127.0.0.1", new Date()); // fine: signed by the CA
 * const other = await generateCertificates({});
 * await assert.rejects(verifyAsGo([der], other.caCert, "127.0.0.1", new Date()), {
 *   message: /x509: certificate signed by unknown authority/,
 * });
 * ```
 */
export async function verifyAsGo(
  peer: Uint8Array[],
  rootsPem: string,
  host: string,
  now: Date,
): Promise<void> {
  const x509 = await loadX509();
  const [leafDer, ...rest] = peer;
  if (!leafDer) throw new GoVerifyError("x509: no certificate was presented");
  const parse = (der: Uint8Array) => new x509.X509Certificate(new Uint8Array(der));
  const leaf = parse(leafDer);
  const roots = pemCertificates(rootsPem).map(parse);
  const intermediates = rest.map(parse);
  if (!validAt(leaf, now)) throw expired(leaf, now);
  if (!roots.some((r) => sameBytes(r, leaf))) {
    await chainToRoot(x509, leaf, roots, intermediates, now);
  }
  checkServerAuth(x509, leaf);
  checkHost(x509, leaf, host);
}

/** Finds a path from the leaf to one of the roots, or throws Go's reason. */
async function chainToRoot(
  x509: X509,
  leaf: Certificate,
  roots: Certificate[],
  intermediates: Certificate[],
  now: Date,
): Promise<void> {
  let lastProblem: GoVerifyError | undefined;
  const walk = async (cert: Certificate, depth: number, seen: Certificate[]): Promise<boolean> => {
    if (depth > MAX_DEPTH) return false;
    for (const [pool, isRoot] of [[roots, true], [intermediates, false]] as const) {
      for (const issuer of pool) {
        if (seen.includes(issuer) || issuer.subject !== cert.issuer) continue;
        if (!isCa(x509, issuer)) {
          lastProblem = new GoVerifyError(
            'x509: certificate signed by unknown authority (possibly because of "x509: invalid signature: parent certificate cannot sign this kind of certificate" while trying to verify candidate authority certificate "' +
              commonName(issuer) + '")',
          );
          continue;
        }
        if (!validAt(issuer, now)) {
          lastProblem = expired(issuer, now);
          continue;
        }
        const signed = await cert.verify(
          { publicKey: issuer.publicKey, signatureOnly: true },
          crypto,
        ).catch(() => false);
        if (!signed) continue;
        if (isRoot || await walk(issuer, depth + 1, [...seen, issuer])) return true;
      }
    }
    return false;
  };
  if (await walk(leaf, 0, [leaf])) return;
  throw lastProblem ?? new GoVerifyError("x509: certificate signed by unknown authority");
}

function isCa(x509: X509, cert: Certificate): boolean {
  const bc = cert.getExtension(x509.BasicConstraintsExtension);
  return !!bc?.ca;
}

function checkServerAuth(x509: X509, leaf: Certificate): void {
  const eku = leaf.getExtension(x509.ExtendedKeyUsageExtension);
  if (!eku) return;
  const usages = eku.usages.map(String);
  if (usages.includes(SERVER_AUTH) || usages.includes(ANY_EKU)) return;
  throw new GoVerifyError("x509: certificate specifies an incompatible key usage");
}

function checkHost(x509: X509, leaf: Certificate, rawHost: string): void {
  const host = rawHost.replace(/^\[|\]$/g, "");
  const san = leaf.getExtension(x509.SubjectAlternativeNameExtension);
  const names = san?.names.items ?? [];
  const dns = names.filter((n) => n.type === "dns").map((n) => n.value);
  const ips = names.filter((n) => n.type === "ip").map((n) => n.value);
  if (isIP(host)) {
    const wanted = canonicalIp(host);
    if (ips.some((ip) => canonicalIp(ip) === wanted)) return;
    if (!san && matchesName(commonName(leaf), host)) throw legacyCn();
    if (!ips.length) {
      throw new GoVerifyError(
        `x509: cannot validate certificate for ${host} because it doesn't contain any IP SANs`,
      );
    }
    throw new GoVerifyError(`x509: certificate is valid for ${ips.join(", ")}, not ${host}`);
  }
  if (dns.some((name) => matchesName(name, host))) return;
  if (!san && matchesName(commonName(leaf), host)) throw legacyCn();
  if (!dns.length) {
    throw new GoVerifyError(
      `x509: certificate is not valid for any names, but wanted to match ${host}`,
    );
  }
  throw new GoVerifyError(`x509: certificate is valid for ${dns.join(", ")}, not ${host}`);
}

function legacyCn(): GoVerifyError {
  return new GoVerifyError(
    "x509: certificate relies on legacy Common Name field, use SANs instead",
  );
}

/** Go's `matchHostnames`: case-insensitive, a `*` only as the whole left-most label. */
function matchesName(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase().replace(/\.$/, "").split(".");
  const h = host.toLowerCase().replace(/\.$/, "").split(".");
  if (!pattern || p.length !== h.length) return false;
  return p.every((label, i) => label === h[i] || (i === 0 && label === "*" && h[i] !== ""));
}

/** An IP address in one spelling (IPv6 expanded), for comparing. */
function canonicalIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const [head = "", tail = ""] = ip.split("::");
  const parts = (s: string) => s ? s.split(":") : [];
  const h = parts(head), t = parts(tail);
  const groups = ip.includes("::") ? [...h, ...Array(8 - h.length - t.length).fill("0"), ...t] : h;
  return groups.map((g) => parseInt(g, 16).toString(16)).join(":");
}

function commonName(cert: Certificate): string {
  return /(?:^|,\s*)CN=([^,]*)/.exec(cert.subject)?.[1] ?? "";
}

function validAt(cert: Certificate, now: Date): boolean {
  return now >= cert.notBefore && now <= cert.notAfter;
}

function expired(cert: Certificate, now: Date): GoVerifyError {
  const at = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");
  return new GoVerifyError(
    now > cert.notAfter
      ? `x509: certificate has expired or is not yet valid: current time ${at(now)} is after ${
        at(cert.notAfter)
      }`
      : `x509: certificate has expired or is not yet valid: current time ${at(now)} is before ${
        at(cert.notBefore)
      }`,
  );
}

function sameBytes(a: Certificate, b: Certificate): boolean {
  const x = new Uint8Array(a.rawData), y = new Uint8Array(b.rawData);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** The DER of each certificate in a PEM text. */
function pemCertificates(pem: string): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const m of pem.matchAll(/-----BEGIN CERTIFICATE-----([^-]+)-----END CERTIFICATE-----/g)) {
    const bin = atob(m[1]!.replace(/\s+/g, ""));
    out.push(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  }
  return out;
}

/** How {@linkcode postVerifyingAsGo} calls. */
export interface GoVerifiedPost {
  /** The URL (https). */
  url: URL;
  /** The JSON body. */
  body: string;
  /** The trusted certificates (the `caBundle`), PEM. */
  rootsPem: string;
  /** The client certificate and key to present, PEM. */
  identity?: { cert: string; key: string } | undefined;
  /** Aborts the call (the webhook's timeout). */
  signal: AbortSignal;
  /** More request headers (the trace context). */
  headers?: Record<string, string> | undefined;
}

/**
 * POSTs a JSON body over a fresh TLS connection whose server certificate is judged by
 * {@linkcode verifyAsGo} after the handshake and before the request is sent.
 *
 * @param call The URL, body, trust, identity and signal.
 * @returns The status and the answer's text.
 * @throws {GoVerifyError} A certificate Go would refuse (nothing was sent).
 * @throws {Error} A failed connection, or the signal's reason.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { postVerifyingAsGo } from "./webhook_tls.ts";
 * import { generateCertificates } from "../shared/tls.ts";
 * const tls = await generateCertificates({});
 * const server = Deno.serve({ port: 0, cert: tls.serverCert, key: tls.serverKey, onListen() {} }, () => new Response("{}"));
 * const answer = await postVerifyingAsGo({
 *   url: new URL(`https://127.0.0.1:${server.addr.port}/`),
 *   body: "{}",
 *   rootsPem: tls.caCert,
 *   signal: AbortSignal.timeout(5000),
 * });
 * assert.equal(answer.status, 200);
 * await server.shutdown();
 * ```
 */
export function postVerifyingAsGo(
  call: GoVerifiedPost,
): Promise<{ status: number; text: string }> {
  const { url, body, rootsPem, identity, signal, headers } = call;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const req = httpsRequest({
      host,
      port: Number(url.port || 443),
      path: url.pathname + url.search,
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        accept: "application/json, */*",
        "content-length": String(new TextEncoder().encode(body).length),
      },
      agent: false,
      rejectUnauthorized: false, // judged below, by Go's rules
      ...(isIP(host) ? {} : { servername: host }),
      ...(identity ? { cert: identity.cert, key: identity.key } : {}),
    });
    const onAbort = () => req.destroy(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const settle = () => signal.removeEventListener("abort", onAbort);
    req.once("error", (e) => {
      settle();
      reject(e);
    });
    req.once("socket", (socket) => {
      (socket as TLSSocket).once("secureConnect", () => {
        verifyAsGo(peerChain(socket as TLSSocket), rootsPem, host, new Date()).then(
          () => req.end(body),
          (e) => req.destroy(e),
        );
      });
    });
    req.once("response", (res: IncomingMessage) => {
      const chunks: Uint8Array[] = [];
      res.on("data", (c: Uint8Array) => chunks.push(c));
      res.once("error", (e) => {
        settle();
        reject(e);
      });
      res.once("end", () => {
        settle();
        const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
        let at = 0;
        for (const c of chunks) all.set(c, at), at += c.length;
        resolve({ status: res.statusCode ?? 0, text: new TextDecoder().decode(all) });
      });
    });
  });
}

/** The peer's certificates, leaf first, as DER (as far as the TLS stack reports them). */
function peerChain(socket: TLSSocket): Uint8Array[] {
  const out: Uint8Array[] = [];
  type Peer = { raw?: Uint8Array; issuerCertificate?: Peer };
  let cert = socket.getPeerCertificate(true) as Peer | undefined;
  for (let i = 0; cert?.raw && i <= MAX_DEPTH; i++) {
    out.push(new Uint8Array(cert.raw));
    const next = cert.issuerCertificate;
    if (!next || next === cert || next.raw === cert.raw) break;
    cert = next;
  }
  return out;
}
