/**
 * The review kinds (SubjectAccessReview and its siblings, TokenReview,
 * SelfSubjectReview) as resources: discovery lists them among the built-in
 * kinds and routing tells them apart, while `auth/access_review.ts` answers
 * them. Their list lives here, with the other built-in kinds, so that the
 * kinds' list does not depend on the authorizer.
 *
 * @module
 */

import type { ResourceDef } from "../shared/resources.ts";

const AUTHZ = "authorization.k8s.io";
const AUTHN = "authentication.k8s.io";

/** The review kinds: [group, plural, kind, namespaced]. */
const REVIEWS: Array<[string, string, string, boolean]> = [
  [AUTHZ, "selfsubjectaccessreviews", "SelfSubjectAccessReview", false],
  [AUTHZ, "selfsubjectrulesreviews", "SelfSubjectRulesReview", false],
  [AUTHZ, "subjectaccessreviews", "SubjectAccessReview", false],
  [AUTHZ, "localsubjectaccessreviews", "LocalSubjectAccessReview", true],
  [AUTHN, "selfsubjectreviews", "SelfSubjectReview", false],
  [AUTHN, "tokenreviews", "TokenReview", false],
];

/**
 * The review resources, as discovery lists them (verb `create` only).
 *
 * @returns One definition per review kind.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { reviewResources } from "./review_resources.ts";
 * assert.deepEqual(reviewResources().find((r) => r.plural === "selfsubjectaccessreviews")?.verbs, ["create"]);
 * ```
 */
export function reviewResources(): ResourceDef[] {
  return REVIEWS.map(([group, plural, kind, namespaced]) => ({
    group,
    version: "v1",
    plural,
    singular: "",
    kind,
    namespaced,
    shortNames: [],
    categories: [],
    verbs: ["create"],
    statusSubresource: false,
    builtin: true,
    storage: true,
  }));
}

/**
 * Whether a resource is one of the review kinds (answered here, never stored).
 *
 * @param def The resource.
 * @returns True for the review kinds.
 */
export function isReview(def: ResourceDef): boolean {
  // Every review's plural ends so: most requests are answered without the list.
  if (!def.plural.endsWith("reviews")) return false;
  return REVIEWS.some(([group, plural]) => def.group === group && def.plural === plural);
}
