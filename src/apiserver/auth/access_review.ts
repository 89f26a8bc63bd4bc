/**
 * The review APIs: asking the server about access instead of trying it.
 * `kubectl auth can-i` posts a SelfSubjectAccessReview (and `--list` a
 * SelfSubjectRulesReview), `kubectl auth whoami` a SelfSubjectReview; an
 * administrator asks about others with a SubjectAccessReview (or a
 * LocalSubjectAccessReview in a namespace) and checks a token with a TokenReview.
 *
 * They are answered from the same authenticator and authorizer that guard
 * every request, so "can-i says yes" and "the request passes" never disagree.
 * Nothing is stored: each is `create` only and answered 201 with its `status`.
 * Without authorization everyone may do everything, as kube-apiserver's
 * AlwaysAllow mode answers.
 *
 * @module
 */

import type { Authenticator, UserInfo } from "./authentication.ts";
import { ApiError } from "../shared/errors.ts";
import { jsonText } from "../shared/json_body.ts";
import type { PolicyRule, RbacAuthorizer } from "./rbac.ts";
import type { RequestAttributes } from "./request_attributes.ts";
import type { ResourceDef } from "../shared/resources.ts";
import { API_AUDIENCE } from "./service_account_tokens.ts";

/** `spec.resourceAttributes` / `spec.nonResourceAttributes` of an access review. */
interface ReviewSpec {
  resourceAttributes?: {
    namespace?: string;
    verb?: string;
    group?: string;
    version?: string;
    resource?: string;
    subresource?: string;
    name?: string;
  };
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
  uid?: string;
  extra?: Record<string, string[]>;
  namespace?: string;
  token?: string;
  audiences?: string[];
}

/**
 * Answers the review kinds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AccessReviews } from "./access_review.ts";
 * import { reviewResources } from "../builtins/review_resources.ts";
 * import { Authenticator } from "./authentication.ts";
 * import { Store } from "../storage/store.ts";
 * const reviews = new AccessReviews(new Authenticator(new Store(), {}), undefined);
 * const def = reviewResources().find((r) => r.plural === "selfsubjectreviews")!;
 * const res = await reviews.create(def, "", {}, { username: "alice", groups: ["system:authenticated"] });
 * assert.deepEqual([res.status, (await res.json()).status.userInfo.username], [201, "alice"]);
 * ```
 */
export class AccessReviews {
  readonly #authn: Authenticator;
  readonly #authz: RbacAuthorizer | undefined;

  /**
   * Creates the review answerer of one server.
   *
   * @param authn The authenticator (for TokenReviews).
   * @param authz The authorizer, or undefined when everything is allowed.
   */
  constructor(authn: Authenticator, authz: RbacAuthorizer | undefined) {
    this.#authn = authn;
    this.#authz = authz;
  }

  /**
   * Answers the creation of a review (the only verb they have).
   *
   * @param def The review resource.
   * @param namespace The URL's namespace ("" when none).
   * @param body The review sent (decoded from JSON or protobuf).
   * @param user Who asks.
   * @returns 201 with the review and its status.
   * @throws {ApiError} 400 for a body that is not an object, 422 for a bad spec.
   */
  async create(
    def: ResourceDef,
    namespace: string,
    body: unknown,
    user: UserInfo,
  ): Promise<Response> {
    if (!body || typeof body !== "object" || Array.isArray(body)) {
      throw ApiError.badRequest(`the body of a ${def.kind} must be an object`);
    }
    const review = body as { metadata?: Record<string, unknown>; spec?: ReviewSpec };
    const spec: ReviewSpec = review.spec ?? {};
    const status = await this.#review(def, spec, namespace, user);
    const answer = {
      kind: def.kind,
      apiVersion: `${def.group}/v1`,
      metadata: { ...(review.metadata ?? {}), creationTimestamp: null },
      spec,
      status,
    };
    return new Response(jsonText(answer), {
      status: 201,
      headers: { "content-type": "application/json" },
    });
  }

  async #review(
    def: ResourceDef,
    spec: ReviewSpec,
    namespace: string,
    user: UserInfo,
  ): Promise<Record<string, unknown>> {
    switch (def.plural) {
      case "selfsubjectaccessreviews":
        return this.#decide(user, attributesOf(def, spec));
      case "subjectaccessreviews":
      case "localsubjectaccessreviews": {
        if (!spec.user && !spec.groups?.length) {
          throw invalid(def, "spec.user", "at least one of user or group must be specified");
        }
        const attrs = attributesOf(def, spec);
        if (def.namespaced) {
          if (!attrs.resourceRequest) {
            throw invalid(def, "spec.nonResourceAttributes", "disallowed on this kind of request");
          }
          if (attrs.namespace && attrs.namespace !== namespace) {
            throw invalid(
              def,
              "spec.resourceAttributes.namespace",
              "must match metadata.namespace",
            );
          }
          attrs.namespace = namespace;
        }
        return this.#decide({
          username: spec.user ?? "",
          groups: spec.groups ?? [],
          ...(spec.uid ? { uid: spec.uid } : {}),
        }, attrs);
      }
      case "selfsubjectrulesreviews":
        return this.#rules(user, spec.namespace ?? "");
      case "selfsubjectreviews":
        return { userInfo: user };
      case "tokenreviews": {
        if (!spec.token) throw invalid(def, "spec.token", "token is required");
        for (const audience of spec.audiences?.length ? spec.audiences : [API_AUDIENCE]) {
          const found = await this.#authn.userOfToken(spec.token, audience);
          if (found) return { authenticated: true, user: found, audiences: [audience] };
        }
        return { user: {}, error: "invalid bearer token" };
      }
    }
    throw new ApiError(404, "NotFound", "the server could not find the requested resource");
  }

  #decide(user: UserInfo, attrs: RequestAttributes): Record<string, unknown> {
    if (!this.#authz) return { allowed: true };
    const { allowed, reason } = this.#authz.authorize(user, attrs);
    return { allowed, ...(reason ? { reason } : {}) };
  }

  #rules(user: UserInfo, namespace: string): Record<string, unknown> {
    const { rules, errors } = this.#authz ? this.#authz.rulesFor(user, namespace) : {
      rules: [
        { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
        { verbs: ["*"], nonResourceURLs: ["*"] },
      ] as PolicyRule[],
      errors: [],
    };
    const resourceRules = rules.filter((r) => r.resources?.length).map((r) => ({
      verbs: r.verbs,
      apiGroups: r.apiGroups ?? [],
      resources: r.resources ?? [],
      ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
    }));
    const nonResourceRules = rules.filter((r) => r.nonResourceURLs?.length).map((r) => ({
      verbs: r.verbs,
      nonResourceURLs: r.nonResourceURLs ?? [],
    }));
    return {
      resourceRules,
      nonResourceRules,
      incomplete: errors.length > 0,
      ...(errors.length ? { evaluationError: errors.join(", ") } : {}),
    };
  }
}

/** The attributes an access review asks about. */
function attributesOf(def: ResourceDef, spec: ReviewSpec): RequestAttributes {
  const r = spec.resourceAttributes;
  const n = spec.nonResourceAttributes;
  if (!!r === !!n) {
    throw invalid(
      def,
      "spec.resourceAttributes",
      "exactly one of nonResourceAttributes or resourceAttributes must be specified",
    );
  }
  if (n) {
    return {
      resourceRequest: false,
      verb: n.verb ?? "",
      path: n.path ?? "",
      apiGroup: "",
      apiVersion: "",
      namespace: "",
      resource: "",
      subresource: "",
      name: "",
    };
  }
  return {
    resourceRequest: true,
    verb: r!.verb ?? "",
    path: "",
    apiGroup: r!.group ?? "",
    apiVersion: r!.version ?? "",
    namespace: r!.namespace ?? "",
    resource: r!.resource ?? "",
    subresource: r!.subresource ?? "",
    name: r!.name ?? "",
  };
}

function invalid(def: ResourceDef, field: string, message: string): ApiError {
  return ApiError.invalid(def.kind, def.group, "", [{
    reason: "FieldValueInvalid",
    field,
    message: `Invalid value: ${message}`,
  }]);
}
