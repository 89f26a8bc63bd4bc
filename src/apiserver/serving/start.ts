/**
 * Starting and stopping the embedded API server on a socket: plain HTTP (our own HTTP/1.1
 * server, for its header and idle timeouts at `Deno.serve`'s cost; `Deno.serve` or Deno's
 * `node:http` on request), or HTTPS with a generated CA, server certificate
 * and client certificate; a kubeconfig written for it; optional persistence.
 * `await using` stops it, waiting for every open stream to end.
 *
 * @module
 */

import { DataDir } from "../storage/persistence.ts";
import { ApiError } from "../shared/errors.ts";
import { buildKubeconfig, type Kubeconfig, kubeconfigYaml } from "./kubeconfig.ts";
import { ApiServer, type ApiServerOptions } from "./server.ts";
import type { FaultCounts, FaultSettings } from "../shared/faults.ts";
import {
  type ClientCertificate,
  generateCertificates,
  issueClientCertificate,
  type TlsBundle,
} from "../shared/tls.ts";
import { serveHttp, serveTls } from "./tls_listener.ts";
import { serveHttp1 } from "./http_listener.ts";
import { MAX_REQUEST_BODY_BYTES, requestTooLarge } from "../wire/request_limits.ts";

/** Options of {@link startApiServer}. */
export interface StartApiServerOptions
  extends Omit<ApiServerOptions, "store" | "log" | "clientCertificates"> {
  /** The address to listen on (default 127.0.0.1: loopback only). */
  host?: string;
  /** The port (default 0: a free port). */
  port?: number;
  /** Where to write the kubeconfig (default: a new temporary file, removed at stop). */
  kubeconfigPath?: string;
  /** Keep state in this directory across restarts (a write is answered once it is durable there). */
  dataDir?: string;
  /**
   * With `dataDir`: when a change is on disk — `"group"` (default: one fdatasync shared by the
   * writes pending together, before their answers), `"write"` (one per write) or `"off"` (none:
   * survives a crash of the process, not a power loss).
   */
  dataDirFsync?: "group" | "write" | "off";
  /** Serve HTTPS with a generated CA; the kubeconfig authenticates with a client certificate. */
  tls?: boolean;
  /** Log one line per request (to stderr, or to `log`). */
  verbose?: boolean;
  /**
   * Where verbose lines and the data directory's notices (a torn last change dropped, a failed
   * compaction) go (default: console.error).
   */
  log?: (line: string) => void;
  /** Stops the server when aborted. */
  signal?: AbortSignal;
  /**
   * Seconds a connection has to send a request's headers; then 408 and closed (default 32,
   * kube-apiserver's `ReadHeaderTimeout`).
   */
  headerTimeoutSeconds?: number;
  /**
   * What serves plain HTTP: `"kopf"` (default; our own HTTP/1.1 server on `Deno.listen`, see
   * `http_listener.ts`) holds the header and idle timeouts and closes a connection whose body is
   * refused unread, at about `Deno.serve`'s CPU per request; `"node"` (Deno's `node:http`) does
   * the same at 4–6× the CPU; `"deno-serve"` (`Deno.serve`) has neither timeout: a client that
   * never finishes its headers holds its connection for ever. TLS is always `node:https`.
   */
  listener?: "kopf" | "node" | "deno-serve";
  /** Seconds an idle keep-alive connection is kept between requests (default 90, kube-apiserver's `IdleTimeout`). */
  idleTimeoutSeconds?: number;
}

/** A running embedded API server. */
export interface RunningApiServer extends AsyncDisposable {
  /** The base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** The kubeconfig written for it. */
  readonly kubeconfig: { path: string; object: Kubeconfig; yaml: string };
  /** The generated certificates, with `tls: true`. */
  readonly tls: TlsBundle | undefined;
  /** The server core: store, registry, request counts. */
  readonly server: ApiServer;
  /** Changes fault switches at run time; `null` turns one off. */
  setFaults(patch: { [K in keyof FaultSettings]?: FaultSettings[K] | null }): FaultSettings;
  /** Forces 410 Gone for resuming watches (and closes open watches). */
  expireResourceVersions(closeWatches?: boolean): void;
  /** Counts of injected faults. */
  readonly faultCounts: FaultCounts;
  /** Counts of requests, summed by verb, resource (`plural.group`) and code. */
  countRequests(filter?: { verb?: string; resource?: string; code?: number }): number;
  /**
   * A token of an existing service account, as `kubectl create token` gets one (TokenRequest).
   *
   * @param namespace The service account's namespace.
   * @param name The service account's name.
   * @param options Its lifetime (default 3600 s) and audiences (default: this server).
   * @returns The bearer token; with `authorization: "rbac"` it authenticates as
   *   `system:serviceaccount:<namespace>:<name>`.
   */
  createToken(
    namespace: string,
    name: string,
    options?: { expirationSeconds?: number; audiences?: string[] },
  ): Promise<string>;
  /**
   * A client certificate for another user from the server's CA (`tls: true` only): CN the
   * user, one O per group.
   */
  issueClientCertificate(user: string, groups?: string[]): Promise<ClientCertificate>;
  /**
   * A kubeconfig (YAML) for this server with other credentials: a bearer token, or a client
   * certificate and key — to run kubectl or an operator as another user.
   */
  kubeconfigFor(credentials: { token: string } | ClientCertificate): string;
  /** Resolves when the garbage collector and namespace/CRD cleaners are idle. */
  settled(): Promise<void>;
  /** Stops the server: closes watches, stops listening, saves state. Idempotent. */
  stop(): Promise<void>;
}

/** The kubeconfig could not be written where asked (`kubeconfigPath`); nothing is left running. */
export class KubeconfigWriteError extends Error {
  override name = "KubeconfigWriteError";
  /** The path that could not be written. */
  readonly path: string;

  /**
   * @param path The path.
   * @param cause The file system's error.
   */
  constructor(path: string, cause: unknown) {
    super(
      `cannot write the kubeconfig to ${path}: ${
        cause instanceof Error ? cause.message.split("\n")[0] : String(cause)
      }`,
      { cause },
    );
    this.path = path;
  }
}

/**
 * Starts the embedded Kubernetes API server.
 *
 * @param options Address, access, persistence, faults.
 * @returns The running server; stop it with `await using` or `stop()`.
 * @throws {Error} If the address cannot be bound or the data directory is unreadable.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer();
 * const res = await fetch(`${api.url}/api/v1/namespaces`);
 * const list = await res.json();
 * assert.deepEqual(list.items.map((n: { metadata: { name: string } }) => n.metadata.name).includes("default"), true);
 * ```
 *
 * @example With a data directory: a write is answered once it is on disk
 * ```ts
 * import { startApiServer } from "@kopf/kopf/testing";
 * const dir = await Deno.makeTempDir();
 * {
 *   await using api = await startApiServer({ dataDir: dir });
 *   const res = await fetch(`${api.url}/api/v1/namespaces/default/configmaps`, {
 *     method: "POST",
 *     headers: { "content-type": "application/json" },
 *     body: JSON.stringify({ metadata: { name: "kept" } }),
 *   });
 *   if (res.status !== 201) throw new Error(`status ${res.status}`);
 *   await res.body?.cancel();
 *   // Answered: the change is in the log and fdatasynced (a kill -9 now would keep it).
 *   const log = await Deno.readTextFile(`${dir}/changes.jsonl`);
 *   if (!log.includes('"name":"kept"')) throw new Error("not in the log");
 * }
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function startApiServer(
  options: StartApiServerOptions = {},
): Promise<RunningApiServer> {
  const host = options.host ?? "127.0.0.1";
  const data = options.dataDir
    ? new DataDir(options.dataDir, {
      ...(options.dataDirFsync ? { fsync: options.dataDirFsync } : {}),
      ...(options.log ? { warn: options.log } : {}),
    })
    : undefined;
  const store = data?.load(options.historySize);
  const log = options.verbose
    ? (options.log ?? ((line: string) => console.error(line)))
    : undefined;
  const tls = options.tls
    ? await generateCertificates({ hosts: certificateHosts(host) })
    : undefined;
  // With authorization on, the server's own kubeconfig must name its administrator: without TLS
  // (no client certificate), by a token made up here unless one is given.
  const token = options.token ??
    (options.authorization === "rbac" && !tls ? crypto.randomUUID() : undefined);
  const server = new ApiServer({
    ...options,
    ...(token ? { token } : {}),
    ...(store ? { store } : {}),
    log, // only with `verbose` (`options.log` alone also takes the data directory's notices)
    clientCertificates: !!tls,
  });
  if (data && store) data.attach(store);
  // A mutating request is answered only once its change is durable (see persistence.ts).
  const handle = !data ? server.handle.bind(server) : async (
    req: Request,
    identity?: Parameters<ApiServer["handle"]>[1],
  ): Promise<Response> => {
    const res = await server.handle(req, identity);
    if (req.method === "GET" || req.method === "HEAD" || req.method === "OPTIONS") return res;
    try {
      await data.flushed();
    } catch (e) {
      await res.body?.cancel();
      return (e instanceof ApiError ? e : new ApiError(500, "InternalError", String(e)))
        .toResponse();
    }
    return res;
  };

  const bodyLimit = options.maxRequestBodyBytes ?? MAX_REQUEST_BODY_BYTES;
  const listening = {
    maxBodyBytes: bodyLimit,
    bodyTooLarge: () => {
      const res = requestTooLarge(bodyLimit).toResponse();
      server.requestCounts.set("other  413", (server.requestCounts.get("other  413") ?? 0) + 1);
      return res;
    },
    headersTimeoutMs: (options.headerTimeoutSeconds ?? 32) * 1000,
    keepAliveTimeoutMs: (options.idleTimeoutSeconds ?? 90) * 1000,
  };
  let port: number;
  let shutdown: () => Promise<void>;
  if (tls) {
    const listener = await serveTls({
      hostname: host,
      port: options.port ?? 0,
      cert: tls.serverCert,
      key: tls.serverKey,
      ca: tls.caCert,
      handler: (req, info) => handle(req, info.clientCertificate),
      ...listening,
    });
    port = listener.port;
    shutdown = () => listener.shutdown();
  } else if (options.listener === "deno-serve") {
    const listener = Deno.serve({
      hostname: host,
      port: options.port ?? 0,
      onListen: () => {},
    }, (req) => handle(req));
    port = listener.addr.port;
    shutdown = async () => {
      server.watches.stop();
      await listener.shutdown();
    };
  } else {
    const serve = options.listener === "node" ? serveHttp : serveHttp1;
    const listener = await serve({
      hostname: host,
      port: options.port ?? 0,
      handler: (req) => handle(req),
      ...listening,
    });
    port = listener.port;
    shutdown = async () => {
      server.watches.stop();
      await listener.shutdown();
    };
  }
  const urlHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
  const url = `${tls ? "https" : "http"}://${urlHost}:${port}`;
  const object = buildKubeconfig({
    server: url,
    ...(token ? { token } : {}),
    ...(tls ? { caCert: tls.caCert, clientCert: tls.clientCert, clientKey: tls.clientKey } : {}),
  });
  const yaml = kubeconfigYaml(object);
  let path = options.kubeconfigPath;
  let tempDir: string | undefined;
  if (!path) {
    tempDir = await Deno.makeTempDir({ prefix: "kopf-apiserver-" });
    path = `${tempDir}/kubeconfig`;
  }
  try {
    await Deno.writeTextFile(path, yaml, { mode: 0o600 });
  } catch (error) {
    await shutdown().catch(() => {});
    await server.close();
    if (data) data.close(server.store);
    throw new KubeconfigWriteError(path, error);
  }

  let stopping: Promise<void> | undefined;
  const stop = () =>
    stopping ??= (async () => {
      server.watches.stop();
      await shutdown();
      await server.close();
      if (data) data.close(server.store);
      if (tempDir) await Deno.remove(tempDir, { recursive: true }).catch(() => {});
    })();
  options.signal?.addEventListener("abort", () => void stop(), { once: true });

  return {
    url,
    port,
    kubeconfig: { path, object, yaml },
    tls,
    server,
    setFaults: (patch) => server.faults.update(patch as Record<string, unknown>),
    expireResourceVersions: (closeWatches = true) => server.faults.expire(closeWatches),
    get faultCounts() {
      return { ...server.faults.counts };
    },
    countRequests: (filter) => server.countRequests(filter),
    createToken: async (namespace, name, tokenOptions = {}) => {
      const answer = await server.authenticator.serviceAccountTokens.request(namespace, name, {
        spec: tokenOptions,
      });
      return (answer.status as { token: string }).token;
    },
    issueClientCertificate: async (user, groups = []) => {
      if (!tls) throw new Error("client certificates need a server started with tls: true");
      return await issueClientCertificate(tls, user, groups);
    },
    kubeconfigFor: (credentials) =>
      kubeconfigYaml(buildKubeconfig({
        server: url,
        ...(tls ? { caCert: tls.caCert } : {}),
        ...("token" in credentials
          ? { token: credentials.token }
          : { clientCert: credentials.cert, clientKey: credentials.key }),
      })),
    settled: () => server.controllers.settled(),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/**
 * The names the server certificate must carry besides localhost, 127.0.0.1 and ::1: the address
 * it listens on, or — on a wildcard address — this machine's name and its interfaces' addresses
 * (as far as the permissions let us read them), so that clients that reach it there verify it.
 */
function certificateHosts(host: string): string[] {
  if (host !== "0.0.0.0" && host !== "::" && host !== "[::]") return [host.replace(/^\[|\]$/g, "")];
  const hosts: string[] = [];
  // Asked first, so that a run without --allow-sys is not prompted for it.
  const granted = (kind: "hostname" | "networkInterfaces") =>
    Deno.permissions.querySync({ name: "sys", kind }).state === "granted";
  if (granted("hostname")) {
    const name = Deno.hostname();
    if (/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(name)) hosts.push(name);
  }
  if (granted("networkInterfaces")) {
    for (const nic of Deno.networkInterfaces()) {
      if (nic.family === "IPv4" || !nic.address.startsWith("fe80:")) hosts.push(nic.address);
    }
  }
  return hosts;
}
