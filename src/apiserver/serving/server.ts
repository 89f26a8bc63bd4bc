/**
 * The HTTP face of the embedded API server: `(Request) => Response`, with no
 * socket of its own, so tests can call it directly and the listener (plain
 * `Deno.serve`, or TLS with client certificates) stays a thin shell around it.
 *
 * It routes Kubernetes URLs to verbs, checks access, injects the configured
 * faults, counts every request by verb, resource and code, and turns thrown
 * `ApiError`s into `Status` answers.
 *
 * @module
 */

import { TRACING } from "../../cogs/tracing/tracing.ts";
import { traceRequest } from "./request_tracing.ts";
import { deepEqual } from "../../cogs/structs/deep_equal.ts";
import { AccessReviews } from "../auth/access_review.ts";
import { isReview } from "../builtins/review_resources.ts";
import { Admission } from "../webhooks/admission.ts";
import { Authenticator } from "../auth/authentication.ts";
import { Controllers } from "../controllers/controllers.ts";
import { Conversion } from "../webhooks/conversion.ts";
import {
  coreVersions,
  groupInfo,
  groupList,
  resourceList,
  rootPaths,
  versionInfo,
} from "./discovery.ts";
import { ApiError } from "../shared/errors.ts";
import { Faults } from "../shared/faults.ts";
import { healthAnswer, type HealthCheck } from "./health.ts";
import { RequestMetrics } from "./request_metrics.ts";
import { jsonText } from "../shared/json_body.ts";
import { noRoute, ownedByRestContainer, pageNotFound, unservedPath } from "./not_found.ts";
import { ListSnapshots } from "../storage/listing.ts";
import { Objects } from "../objects/objects.ts";
import { isPretty, queryBool } from "../wire/query_params.ts";
import {
  MAX_JSON_DEPTH,
  MAX_REQUEST_BODY_BYTES,
  nestsDeeperThan,
  requestTooLarge,
  tooDeep,
} from "../wire/request_limits.ts";
import { impersonate } from "../auth/impersonation.ts";
import { forbidden, RbacAuthorizer } from "../auth/rbac.ts";
import { bootstrapRbac } from "../auth/rbac_bootstrap.ts";
import { bootstrapPriorityClasses } from "../objects/priority_bootstrap.ts";
import { ResourceRegistry } from "../objects/registry.ts";
import { requestAttributes } from "../auth/request_attributes.ts";
import { storageKey } from "../shared/resources.ts";
import { Store } from "../storage/store.ts";
import type { ClientIdentity } from "../shared/types.ts";
import { WatchHub } from "../storage/watch.ts";
import { readBody, unrecognized } from "./request_bodies.ts";
import { json, JSON_HEADERS, type ResourceServing, serveResource } from "./resource_handlers.ts";
import type { ApiServerOptions } from "./server_options.ts";
import { type AdminParts, injectFaults, serveAdmin } from "./admin.ts";
import {
  decodeSegment,
  dryRunLabel,
  errorResponse,
  metricVerb,
  prettyResponse,
  type RequestInfo,
  verbOf,
} from "./request_info.ts";

export type { ApiServerOptions } from "./server_options.ts";

const CRDS = "customresourcedefinitions.apiextensions.k8s.io";

/**
 * The embedded Kubernetes API server, as a request handler.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startApiServer } from "@kopf/kopf/testing";
 * await using api = await startApiServer();
 * // A request handled in-process, with no socket (as the administrator).
 * const res = await api.server.handle(new Request("http://x/api/v1/namespaces/default"));
 * assert.deepEqual([res.status, (await res.json()).metadata.name], [200, "default"]);
 * ```
 */
export class ApiServer {
  /** The objects and their history (given in the options, or a new one). */
  readonly store: Store;
  /** The served resources: built-ins and those of the stored CRDs. */
  readonly registry: ResourceRegistry;
  /** Create, update, patch and delete with Kubernetes semantics. */
  readonly objects: Objects;
  /** The fault switches and counters (see {@link Faults}). */
  readonly faults: Faults;
  /** The garbage collector, namespace lifecycle and CRD cleaner. */
  readonly controllers: Controllers;
  /** The live watch streams. */
  readonly watches: WatchHub;
  /** kube-apiserver's request metrics, served at `/metrics` (see `request_metrics.ts`). */
  readonly #metrics: RequestMetrics = new RequestMetrics();
  /** The checks of `/livez`, `/readyz` and `/healthz` (see `health.ts`). */
  readonly #healthChecks: Record<string, HealthCheck[]>;
  #closing = false;
  /** Request counts by `"<verb> <resource> <code>"`. */
  readonly requestCounts: Map<string, number> = new Map();
  /** The admission webhook caller (see `admission.ts`). */
  readonly #admission: Admission;
  /** The conversion webhook caller (see `conversion.ts`). */
  readonly #conversion: Conversion;
  /** Who asks: users and groups of requests (see `authentication.ts`). */
  readonly authenticator: Authenticator;
  /** What they may do, with `authorization: "rbac"` (see `rbac.ts`); undefined: anything. */
  readonly authorizer: RbacAuthorizer | undefined;
  /** The review APIs: `kubectl auth can-i` and `whoami` (see `access_review.ts`). */
  readonly #reviews: AccessReviews;
  /** The states that paginated lists are served from (see `listing.ts`). */
  readonly #snapshots: ListSnapshots;
  readonly #serving: ResourceServing;
  readonly #admin: AdminParts;
  #options: ApiServerOptions;
  /** The request body limit in bytes. */
  readonly #bodyLimit: number;

  /**
   * Creates the server core: serves the stored CRDs, bootstraps the built-in
   * objects and starts the controllers (no listener; see `handle`).
   *
   * @param options Access, faults, history and logging.
   */
  constructor(options: ApiServerOptions = {}) {
    this.#options = options;
    const live: HealthCheck[] = [
      { name: "ping", check: () => undefined },
      { name: "log", check: () => undefined },
      {
        name: "etcd",
        check: () => (Number.isFinite(this.store.resourceVersion) ? undefined : "no store"),
      },
    ];
    this.#healthChecks = {
      healthz: live,
      livez: live,
      readyz: [
        ...live,
        {
          name: "shutdown",
          check: () => (this.#closing ? "process is shutting down" : undefined),
        },
      ],
    };
    this.store = options.store ??
      new Store({
        ...(options.historySize !== undefined ? { historySize: options.historySize } : {}),
        ...(options.maxObjectBytes !== undefined ? { maxObjectBytes: options.maxObjectBytes } : {}),
      });
    this.#bodyLimit = options.maxRequestBodyBytes ?? MAX_REQUEST_BODY_BYTES;
    // Whatever a write was made of (a body, patches on patches, YAML, protobuf), an object nested
    // too deeply never reaches the store: every reader and watcher would break on it.
    this.store.guard((change, encoded) => {
      if (change.type !== "DELETED" && nestsDeeperThan(encoded, MAX_JSON_DEPTH)) {
        throw tooDeep(MAX_JSON_DEPTH, "the object");
      }
    });
    this.registry = new ResourceRegistry();
    this.objects = new Objects(this.store, this.registry);
    const identity = options.webhookClientCert;
    const roots = options.webhookTrustedCAs ?? [];
    this.#conversion = new Conversion(this.store, this.registry, identity, roots);
    this.#admission = new Admission(
      this.objects,
      (def, objects) => this.#conversion.toVersion(def, objects),
      identity,
      roots,
    );
    for (const crd of this.store.list("customresourcedefinitions.apiextensions.k8s.io")) {
      if (!crd.metadata.deletionTimestamp) this.registry.applyCrd(crd);
    }
    this.faults = new Faults(options.faults ?? {});
    this.watches = new WatchHub(this.store, this.faults, options.bookmarkSeconds ?? 10);
    this.#snapshots = new ListSnapshots(this.store);
    // A CRD whose spec changes ends the watches of its resource, as kube-apiserver rebuilds the
    // resource's storage (versions, schemas, conversion) and watchers come back to the new one.
    this.store.onCommit((change) => {
      if (change.key !== CRDS || change.type !== "MODIFIED" || !change.previous) return;
      if (deepEqual(change.previous.spec, change.object.spec)) return;
      const spec = change.object.spec as { names?: { plural?: string }; group?: string };
      this.watches.closeResource(`${spec.names?.plural}.${spec.group}`);
    });
    this.faults.onExpire = (close) => {
      this.store.compact();
      this.#snapshots.clear();
      if (close) this.watches.closeAll();
    };
    this.objects.bootstrap();
    bootstrapPriorityClasses(this.objects);
    const rbac = options.authorization === "rbac";
    if (rbac) bootstrapRbac(this.objects);
    this.authenticator = new Authenticator(this.store, {
      ...(options.token ? { token: options.token } : {}),
      clientCertificates: !!options.clientCertificates,
      enforce: rbac,
      ...(rbac && options.staticTokens ? { staticTokens: options.staticTokens } : {}),
    });
    this.authorizer = rbac ? new RbacAuthorizer(this.store) : undefined;
    this.#reviews = new AccessReviews(this.authenticator, this.authorizer);
    this.controllers = new Controllers(this.store, this.objects);
    this.controllers.resync();
    this.#serving = {
      store: this.store,
      objects: this.objects,
      watches: this.watches,
      admission: this.#admission,
      conversion: this.#conversion,
      snapshots: this.#snapshots,
      bodyLimit: this.#bodyLimit,
      watchList: () => this.#options.watchList ?? true,
    };
    this.#admin = {
      faults: this.faults,
      bodyLimit: this.#bodyLimit,
      requestCounts: this.requestCounts,
      store: this.store,
      watches: this.watches,
    };
  }

  /** Stops watches and controllers (the listener is stopped by its owner). */
  async close(): Promise<void> {
    this.#closing = true;
    await this.controllers.settled();
    this.controllers.stop();
    this.watches.stop();
    this.#admission.close();
    this.#conversion.close();
  }

  /**
   * Answers one HTTP request.
   *
   * @param req The request.
   * @param identity A client certificate's verified identity, if any.
   * @returns The response.
   */
  async handle(req: Request, identity?: ClientIdentity): Promise<Response> {
    const started = performance.now();
    const url = new URL(req.url);
    if (TRACING) { // a server span, continuing the request's traceparent (request_tracing.ts)
      const traced = traceRequest(req, url, (r) => this.handle(r, identity));
      if (traced) return traced;
    }
    const ctx: RequestInfo = { verb: "other", resource: "", code: 0 };
    // Long-running requests (watches) are not in flight for kube's inflight gauge.
    const watching = url.searchParams.get("watch");
    const done = watching !== null && queryBool(watching)
      ? undefined
      : this.#metrics.start(req.method !== "GET" && req.method !== "HEAD", started);
    let res: Response;
    try {
      // A declared body over the limit is refused before anything (authentication included).
      const declared = req.headers.get("content-length");
      if (declared !== null && Number(declared) > this.#bodyLimit) {
        await req.body?.cancel().catch(() => {});
        throw requestTooLarge(this.#bodyLimit);
      }
      res = await this.#route(req, url, ctx, identity);
    } catch (e) {
      res = errorResponse(e);
      // The rest of a body too large is never read: the connection cannot carry another request.
      if (res.status === 413) res.headers.set("connection", "close");
    }
    // Pretty JSON (`?pretty=true`, or curl's, Wget's and browsers' User-Agent) re-encodes a
    // whole JSON answer; watches stream compact events, as kube-apiserver's do.
    if (
      ctx.verb !== "watch" && ctx.verb !== "version" &&
      isPretty(url.searchParams, req.headers.get("user-agent")) &&
      /^application\/json/.test(res.headers.get("content-type") ?? "")
    ) {
      res = await prettyResponse(res);
    }
    ctx.code = res.status;
    done?.();
    if (ctx.labels) {
      this.#metrics.observe(
        ctx.labels,
        res.status,
        ctx.verb === "watch" ? undefined : (performance.now() - started) / 1000,
      );
    }
    const countKey = `${ctx.verb} ${ctx.resource} ${ctx.code}`;
    this.requestCounts.set(countKey, (this.requestCounts.get(countKey) ?? 0) + 1);
    if (this.#options.log) {
      const ms = (performance.now() - started).toFixed(1);
      this.#options.log(
        `${req.method} ${url.pathname}${url.search} ${res.status} ${ms}ms${
          ctx.verb === "watch" ? " (watch opened)" : ""
        }`,
      );
    }
    return res;
  }

  /**
   * Request counts summed by any part of the key (verb, resource, code).
   *
   * @param filter Which counts to sum: any of verb, resource, code.
   * @returns The sum.
   */
  countRequests(filter: { verb?: string; resource?: string; code?: number } = {}): number {
    let n = 0;
    for (const [key, count] of this.requestCounts) {
      const [verb, resource, code] = key.split(" ");
      if (filter.verb && verb !== filter.verb) continue;
      if (filter.resource && resource !== filter.resource) continue;
      if (filter.code && Number(code) !== filter.code) continue;
      n += count;
    }
    return n;
  }

  async #route(
    req: Request,
    url: URL,
    ctx: RequestInfo,
    identity?: ClientIdentity,
  ): Promise<Response> {
    const path = url.pathname.replace(/\/+$/, "") || "/";
    if (path.startsWith("/healthz") || path.startsWith("/livez") || path.startsWith("/readyz")) {
      const answer = healthAnswer(path, url.searchParams, this.#healthChecks);
      if (answer) {
        ctx.verb = "health";
        return answer;
      }
    }
    if (path === "/version") {
      ctx.verb = "version";
      // kube-apiserver writes /version as Go's MarshalIndent (indented, no trailing newline).
      return new Response(jsonText(versionInfo(this.#options.kubernetesMinor ?? 33), true), {
        headers: JSON_HEADERS,
      });
    }
    const authenticated = await this.authenticator.authenticate(req, identity);
    const user = impersonate(req.headers, authenticated, this.authorizer);
    if (this.authorizer) {
      const attrs = requestAttributes(req.method, url);
      const decision = this.authorizer.authorize(user, attrs);
      if (!decision.allowed) {
        // Counted by the verb and resource refused (`countRequests({ code: 403, ... })`).
        ctx.verb = attrs.verb;
        ctx.resource = attrs.resourceRequest
          ? storageKey({ group: attrs.apiGroup, plural: attrs.resource })
          : attrs.path;
        throw forbidden(user, attrs, decision.reason);
      }
    }
    if (path.startsWith("/admin/")) return await serveAdmin(this.#admin, req, path, ctx);
    if (path === "/") {
      ctx.verb = "discovery";
      const health = Object.entries(this.#healthChecks).flatMap(([endpoint, checks]) => [
        `/${endpoint}`,
        ...checks.map((c) => `/${endpoint}/${c.name}`),
      ]);
      const served = [...health, "/metrics", "/openapi/v2", "/version"];
      // Written as Go's MarshalIndent (WriteRawJSON): indented, no trailing newline.
      return new Response(jsonText(rootPaths(this.registry, served), true), {
        headers: JSON_HEADERS,
      });
    }
    if (path === "/metrics") {
      ctx.verb = "metrics";
      if (req.method !== "GET" && req.method !== "HEAD") {
        throw ApiError.methodNotAllowed();
      }
      return new Response(this.#metrics.text(), {
        headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
      });
    }
    if (path === "/openapi/v2" || path === "/swagger-2.0.0.pb-v1") {
      ctx.verb = "openapi";
      return new Response(null, {
        status: 200,
        headers: { "content-type": "application/octet-stream" },
      });
    }
    if (path.startsWith("/openapi/v3")) {
      ctx.verb = "openapi";
      throw noRoute();
    }
    const segs = path.split("/").filter(Boolean).map(decodeSegment);
    let group: string, version: string, rest: string[];
    if (segs[0] === "api") {
      ctx.verb = "discovery";
      if (segs.length === 1) return json(coreVersions(url.host));
      group = "";
      version = segs[1]!;
      rest = segs.slice(2);
    } else if (segs[0] === "apis") {
      ctx.verb = "discovery";
      if (segs.length === 1) return json(groupList(this.registry));
      if (segs.length === 2) {
        const info = groupInfo(this.registry, segs[1]!);
        return info ? json(info) : unservedPath(segs[1]!);
      }
      group = segs[1]!;
      version = segs[2]!;
      rest = segs.slice(3);
    } else {
      // No handler claims it: the end of kube-apiserver's chain, Go's plain-text 404.
      return pageNotFound();
    }
    if (rest.length === 0) {
      const list = resourceList(this.registry, group, version);
      return list ? json(list) : unservedPath(group);
    }
    let namespace: string | undefined;
    if (
      rest[0] === "namespaces" && rest.length >= 3 &&
      this.registry.find(group, version, rest[2]!)?.namespaced
    ) {
      namespace = rest[1]!;
      rest = rest.slice(2);
    }
    const [plural, name, subresource, ...extra] = rest as [
      string,
      string | undefined,
      string | undefined,
    ];
    const def = this.registry.find(group, version, plural);
    ctx.resource = def ? storageKey(def) : plural;
    if (!def || (!def.namespaced && namespace !== undefined)) return unservedPath(group);
    if (def.namespaced && namespace === undefined) {
      // Only a list or watch may span namespaces. The REST container has no route for a named
      // object there (404) and no other method on the collection (405); custom resources
      // fall through to the plain-text 404.
      const across = !name && (req.method === "GET" || req.method === "HEAD");
      if (!across) {
        if (!ownedByRestContainer(group)) return pageNotFound();
        throw name ? noRoute() : ApiError.methodNotAllowed();
      }
    }
    // Custom resources: kube's request info ignores path segments after the subresource.
    if (extra.length && ownedByRestContainer(group)) throw noRoute();
    if (isReview(def) && !name) {
      ctx.verb = "create";
      if (req.method !== "POST") {
        throw ApiError.methodNotAllowed();
      }
      return await this.#reviews.create(
        def,
        namespace ?? "",
        await readBody(req, this.#bodyLimit, { syntax: unrecognized(def.kind) }),
        user,
      );
    }
    if (def.group === "" && def.plural === "serviceaccounts" && name && subresource === "token") {
      ctx.verb = "create";
      if (req.method !== "POST") {
        throw ApiError.methodNotAllowed();
      }
      const body = await readBody(req, this.#bodyLimit, { syntax: unrecognized("TokenRequest") });
      const answer = await this.authenticator.serviceAccountTokens.request(namespace!, name, body);
      return json(answer, 201);
    }
    if (
      subresource && !(subresource === "status" && def.statusSubresource) &&
      !(subresource === "finalize" && def.plural === "namespaces" && def.group === "")
    ) {
      // A custom resource's unknown subresource names the object, as apiextensions answers.
      if (!def.builtin) throw ApiError.notFound(def.plural, def.group, name!);
      throw noRoute();
    }
    ctx.verb = verbOf(req.method, name, url);
    ctx.labels = {
      verb: metricVerb(ctx.verb, req),
      dryRun: dryRunLabel(url),
      group,
      version,
      resource: plural,
      subresource: subresource ?? "",
      scope: name || ctx.verb === "create" ? "resource" : namespace ? "namespace" : "cluster",
    };
    await injectFaults(this.faults, req);
    return await serveResource(
      this.#serving,
      req,
      url,
      def,
      namespace,
      name,
      subresource,
      ctx.verb,
      user,
    );
  }
}
