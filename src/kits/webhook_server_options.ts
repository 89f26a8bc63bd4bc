/**
 * What a `WebhookServer` (`webhooks.ts`) is given ({@link WebhookServerOptions}) and
 * what is read from it: the CA and client-certificate CAs (from data, a file, a
 * folder), the verification mode, the private key (decrypted when encrypted) — and
 * the {@link WebhookServerError} of options it cannot start with.
 *
 * @module
 */

/** Options of `WebhookServer` (Kopf's keyword arguments, camelCase). */
export interface WebhookServerOptions {
  /** Where to listen (default: all interfaces for the K3d/Minikube servers, else 127.0.0.1). */
  addr?: string;
  /** The port (default 9443; 0 for a free one). */
  port?: number;
  /** The root path (default none): handlers are served at `<path>/<handler-id>`. */
  path?: string;
  /** The host in the webhook URLs (default: the class's host, else `addr`, else `localhost`). */
  host?: string;
  /** The CA bundle (PEM) for the client config; not used by the server itself. */
  cadata?: string | Uint8Array;
  /** A file with the CA bundle (PEM) for the client config. */
  cafile?: string;
  /** A directory of CA certificates (PEM files) for the client config. */
  capath?: string;
  /** A file to write the resulting CA bundle to (e.g. for `curl --cacert`). */
  cadump?: string;
  /** The server certificate (PEM file); without it, a self-signed CA and certificate are made. */
  certfile?: string;
  /** The server certificate's private key (PEM file). */
  pkeyfile?: string;
  /** The password of an encrypted private key (PKCS#8 or OpenSSL's legacy PEM encryption). */
  password?: string;
  /** More SANs (DNS names, IP addresses) for the self-signed certificate. */
  extraSans?: string[];
  /** Plain HTTP (for tunnels and curl; Kubernetes itself needs HTTPS). */
  insecure?: boolean;
  /**
   * Whether clients (API servers) must present a certificate, as Python's `ssl.VerifyMode`:
   * `"none"` (not asked), `"optional"` (asked; one that is given must be valid), `"required"`
   * (refused at the handshake without a valid one). Default: `"optional"` when a `verifyCa*`
   * option is given (also instead of `"none"`), else `"none"`.
   */
  verifyMode?: "none" | "optional" | "required";
  /** A file of CA certificates (PEM) that client certificates must chain to. */
  verifyCafile?: string;
  /** A directory of CA certificates (PEM files) that client certificates must chain to. */
  verifyCapath?: string;
  /** CA certificates (PEM) that client certificates must chain to. */
  verifyCadata?: string | Uint8Array;
}

/** Client-certificate verification modes (Python's `ssl.CERT_NONE`, `CERT_OPTIONAL`, `CERT_REQUIRED`). */
export type VerifyMode = NonNullable<WebhookServerOptions["verifyMode"]>;

const VERIFY_MODES: readonly string[] = ["none", "optional", "required"];

/** A webhook server cannot start with the options it was given. */
export class WebhookServerError extends Error {
  /** Always `"WebhookServerError"`. */
  override name = "WebhookServerError";
}

/** The CA of the server's own certificate, as one PEM text (undefined: none given). */
export function readCa(o: WebhookServerOptions): Promise<string | undefined> {
  return readPems(o.cadata, o.cafile, o.capath).then((parts) =>
    parts.length ? parts.map((p) => p.trimEnd() + "\n").join("") : undefined
  );
}

/** The CAs for client certificates, one PEM text per source (undefined: none given). */
export async function readVerifyCa(o: WebhookServerOptions): Promise<string[] | undefined> {
  const parts = await readPems(o.verifyCadata, o.verifyCafile, o.verifyCapath);
  return parts.length ? parts : undefined;
}

async function readPems(
  data: string | Uint8Array | undefined,
  file: string | undefined,
  dir: string | undefined,
): Promise<string[]> {
  const parts: string[] = [];
  if (data !== undefined) {
    parts.push(typeof data === "string" ? data : new TextDecoder().decode(data));
  }
  if (file) parts.push(await Deno.readTextFile(file));
  if (dir) {
    const names: string[] = [];
    for await (const entry of Deno.readDir(dir)) if (entry.isFile) names.push(entry.name);
    for (const name of names.sort()) {
      const content = await Deno.readTextFile(`${dir}/${name}`);
      if (content.includes("-----BEGIN CERTIFICATE-----")) parts.push(content);
    }
  }
  return parts;
}

/** The effective mode, as Kopf sets Python's context: a CA without a mode (or with none) is optional. */
export function verifyModeOf(mode: unknown, haveCa: boolean): VerifyMode {
  if (mode !== undefined && (typeof mode !== "string" || !VERIFY_MODES.includes(mode))) {
    throw new WebhookServerError(
      `verifyMode must be "none", "optional" or "required", not ${JSON.stringify(mode)}.`,
    );
  }
  const given = (mode ?? "none") as VerifyMode;
  return given === "none" && haveCa ? "optional" : given;
}

/** Base64 of a text's UTF-8 bytes, as `caBundle` carries a CA. */
export function encodeBase64(text: string): string {
  let binary = "";
  for (const b of new TextEncoder().encode(text)) binary += String.fromCharCode(b);
  return btoa(binary);
}

/**
 * The private key as the TLS server takes it: decrypted in memory when it is encrypted (Deno's
 * TLS reads plain PEM only); a wrong or missing password is one line naming the file.
 */
export async function decryptKey(
  pem: string,
  file: string,
  password: string | undefined,
): Promise<string> {
  const encrypted = pem.includes("ENCRYPTED");
  if (!encrypted) return pem;
  if (password === undefined) {
    throw new WebhookServerError(`The private key ${file} is encrypted: give its password.`);
  }
  const { createPrivateKey } = await import("node:crypto"); // only for an encrypted key
  try {
    return String(
      createPrivateKey({ key: pem, passphrase: password }).export({ format: "pem", type: "pkcs8" }),
    );
  } catch {
    throw new WebhookServerError(
      `The private key ${file} cannot be decrypted with the given password.`,
    );
  }
}
