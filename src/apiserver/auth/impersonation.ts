/**
 * Acting as another user: kubectl's `--as` and `--as-group` (the
 * `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and
 * `Impersonate-Extra-<key>` headers), as kube-apiserver's impersonation filter
 * does it — the way to ask "what could the operator's service account do?"
 * (`kubectl auth can-i list pods --as=system:serviceaccount:ns:op`) without its token.
 *
 * Each impersonated part needs the `impersonate` verb: on `users` (by name),
 * on `serviceaccounts` in the account's namespace (for
 * `system:serviceaccount:<ns>:<name>`), on `groups`, on `uids` and
 * `userextras/<key>` of `authentication.k8s.io`. The administrator
 * (`system:masters`) may impersonate anyone; a refusal is the usual 403
 * (`users "alice" is forbidden: User "bob" cannot impersonate resource "users"
 * in API group "" at the cluster scope`). The user then gets the groups asked
 * for (a service account without `--as-group`: its own), and
 * `system:authenticated`.
 *
 * @module
 */

import type { UserInfo } from "./authentication.ts";
import { ApiError } from "../shared/errors.ts";
import type { RbacAuthorizer } from "./rbac.ts";
import type { RequestAttributes } from "./request_attributes.ts";

const SA_PREFIX = "system:serviceaccount:";

/**
 * The user a request acts as: the authenticated one, or the one it impersonates.
 *
 * @param headers The request's headers.
 * @param user The authenticated user.
 * @param authz The authorizer (undefined: anyone may impersonate anyone).
 * @returns The user to authorize and admit the request as.
 * @throws {ApiError} 403 when an impersonation is not allowed; 500 for groups or extras without a user (as kube-apiserver).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { impersonate } from "./impersonation.ts";
 * const admin = { username: "system:admin", groups: ["system:masters", "system:authenticated"] };
 * const headers = new Headers({ "impersonate-user": "system:serviceaccount:default:op" });
 * assert.deepEqual(impersonate(headers, admin, undefined).groups, ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]);
 * ```
 */
export function impersonate(
  headers: Headers,
  user: UserInfo,
  authz: RbacAuthorizer | undefined,
): UserInfo {
  const username = headers.get("impersonate-user");
  const groupHeader = headers.get("impersonate-group");
  const groups = groupHeader === null ? [] : groupHeader.split(",").map((g) => g.trim());
  const uid = headers.get("impersonate-uid");
  const extra: Record<string, string[]> = {};
  // forEach, not for…of: the same pairs in the same order, without an iterator's objects (a
  // quarter of the cost, and every request comes here).
  headers.forEach((value, name) => {
    if (!name.startsWith("impersonate-extra-")) return;
    let key: string;
    try {
      key = decodeURIComponent(name.slice("impersonate-extra-".length));
    } catch {
      throw ApiError.badRequest(`the header ${name} is not valid percent-encoding`);
    }
    extra[key] = value.split(",").map((v) => v.trim());
  });
  if (username === null) {
    if (groups.length || uid !== null || Object.keys(extra).length) {
      throw new ApiError(
        500,
        "InternalError",
        "Internal error occurred: requested impersonation of groups, uid or extras without impersonating a user",
      );
    }
    return user;
  }
  const check = (attrs: Partial<RequestAttributes>) => {
    if (!authz) return;
    authz.check(user, {
      resourceRequest: true,
      verb: "impersonate",
      path: "",
      apiGroup: "",
      apiVersion: "",
      namespace: "",
      resource: "",
      subresource: "",
      name: "",
      ...attrs,
    });
  };
  let impersonated: string[] = [...groups];
  if (username.startsWith(SA_PREFIX)) {
    const [namespace = "", name = ""] = username.slice(SA_PREFIX.length).split(":");
    check({ resource: "serviceaccounts", namespace, name });
    if (!groups.length) {
      impersonated = ["system:serviceaccounts", `system:serviceaccounts:${namespace}`];
    }
  } else {
    check({ resource: "users", name: username });
  }
  for (const group of groups) check({ resource: "groups", name: group });
  if (uid !== null) check({ apiGroup: "authentication.k8s.io", resource: "uids", name: uid });
  for (const [key, values] of Object.entries(extra)) {
    for (const value of values) {
      check({
        apiGroup: "authentication.k8s.io",
        resource: "userextras",
        subresource: key,
        name: value,
      });
    }
  }
  if (username === "system:anonymous") {
    if (!impersonated.includes("system:unauthenticated")) {
      impersonated.push("system:unauthenticated");
    }
  } else if (!impersonated.includes("system:authenticated")) {
    impersonated.push("system:authenticated");
  }
  return {
    username,
    groups: impersonated,
    ...(uid !== null ? { uid } : {}),
    ...(Object.keys(extra).length ? { extra } : {}),
  };
}
