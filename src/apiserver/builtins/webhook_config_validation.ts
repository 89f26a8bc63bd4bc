/**
 * kube-apiserver's validation of admissionregistration.k8s.io/v1 webhook
 * configurations (`ValidatingWebhookConfiguration`,
 * `MutatingWebhookConfiguration`), the rules a user meets first: each
 * webhook's `name` required, a fully qualified domain of three segments or
 * more, unique in its configuration; `sideEffects` required and `None` or
 * `NoneOnDryRun`; `admissionReviewVersions` required, without repeats, with
 * `v1` or `v1beta1` among them; `clientConfig` with exactly one of `url`
 * (https, a host, no user, query or fragment) and `service` (its name,
 * namespace, port 1–65535 and path); `timeoutSeconds` from 1 to 30; the
 * enums of `failurePolicy`, `matchPolicy`, `reinvocationPolicy` and the
 * rules' `scope` and `operations`; the rules' groups, versions and
 * resources. The defaults (`failurePolicy: Fail`, `timeoutSeconds: 10`, …)
 * are `kind_defaults.ts`'s and come first, as in kube.
 *
 * As kube, an update keeps accepting what the stored configuration already
 * had: side effects other than `None`/`NoneOnDryRun`, review versions this
 * server does not know, repeated names (objects stored by v1beta1 once).
 * Label selectors and `matchConditions` (CEL) are not validated here.
 *
 * @module
 */

import type { StatusCause } from "../shared/errors.ts";
import { duplicate, invalid, notSupported, required } from "../schemas/field_errors.ts";
import { validateName } from "../schemas/metadata_validation.ts";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const has = (v: unknown) => v !== undefined && v !== null;

const ACCEPTED_REVIEW_VERSIONS = ["v1", "v1beta1"];
const NO_SIDE_EFFECTS = ["None", "NoneOnDryRun"];
const ANY_SIDE_EFFECTS = ["None", "NoneOnDryRun", "Some", "Unknown"];
const FAILURE_POLICIES = ["Fail", "Ignore"];
const MATCH_POLICIES = ["Equivalent", "Exact"];
const REINVOCATION_POLICIES = ["IfNeeded", "Never"];
const SCOPES = ["*", "Cluster", "Namespaced"];
const OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const URL_FORM = "; desired format: https://host[/path]";

/**
 * A list as Go's `%#v` prints it in a `field.Invalid` (`[]string{"a", "b"}`).
 *
 * @param type Go's type name of the list.
 * @param values The values.
 * @returns The text.
 */
export function goList(type: string, values: unknown[]): string {
  return `${type}{${values.map((v) => JSON.stringify(v)).join(", ")}}`;
}

/** `field.Invalid` with a value already rendered as Go renders it. */
function invalidRendered(field: string, rendered: string, detail: string): StatusCause {
  return { reason: "FieldValueInvalid", message: `Invalid value: ${rendered}: ${detail}`, field };
}

/** What an update inherits from the stored configuration (kube's `validationOptions`). */
interface Allowances {
  sideEffects: string[];
  requireRecognizedVersion: boolean;
  requireUniqueNames: boolean;
}

function allowances(old: Obj | undefined): Allowances {
  const hooks = list(old?.webhooks).filter(isObj);
  if (!old) {
    return {
      sideEffects: NO_SIDE_EFFECTS,
      requireRecognizedVersion: true,
      requireUniqueNames: true,
    };
  }
  const names = hooks.map((h) => h.name);
  return {
    sideEffects: hooks.every((h) => NO_SIDE_EFFECTS.includes(h.sideEffects as string))
      ? NO_SIDE_EFFECTS
      : ANY_SIDE_EFFECTS,
    requireRecognizedVersion: hooks.every((h) => {
      const versions = list(h.admissionReviewVersions);
      return !versions.length ||
        versions.some((v) => ACCEPTED_REVIEW_VERSIONS.includes(v as string));
    }),
    requireUniqueNames: new Set(names).size === names.length,
  };
}

/**
 * The 422 causes of a webhook configuration, as kube-apiserver's
 * `ValidateValidatingWebhookConfiguration` and `ValidateMutatingWebhookConfiguration` (and their
 * updates) find them.
 *
 * @param config The configuration, defaulted.
 * @param mutating Whether it is a MutatingWebhookConfiguration.
 * @param old The stored configuration on update.
 * @returns The causes; empty when valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { webhookConfigurationCauses } from "./webhook_config_validation.ts";
 * const causes = webhookConfigurationCauses({
 *   webhooks: [{ name: "check.example.com", clientConfig: { url: "https://hook.example.com/" } }],
 * }, false);
 * assert.deepEqual(causes.map((c) => [c.field, c.message]), [
 *   ["webhooks[0].sideEffects", "Required value: must specify one of None, NoneOnDryRun"],
 *   ["webhooks[0].admissionReviewVersions", "Required value: must specify one of v1, v1beta1"],
 * ]);
 * ```
 */
export function webhookConfigurationCauses(
  config: Obj,
  mutating: boolean,
  old?: Obj,
): StatusCause[] {
  const allow = allowances(old);
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  list(config.webhooks).forEach((h, i) => {
    const hook = isObj(h) ? h : {};
    const at = `webhooks[${i}]`;
    causes.push(...webhookCauses(hook, at, mutating, allow));
    causes.push(
      ...reviewVersionCauses(hook.admissionReviewVersions, `${at}.admissionReviewVersions`, allow),
    );
    const name = typeof hook.name === "string" ? hook.name : "";
    if (allow.requireUniqueNames && name) {
      if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
      else names.add(name);
    }
  });
  return causes;
}

function webhookCauses(hook: Obj, at: string, mutating: boolean, allow: Allowances): StatusCause[] {
  const causes: StatusCause[] = [...fullyQualifiedName(hook.name, `${at}.name`)];
  list(hook.rules).forEach((r, j) =>
    causes.push(...ruleCauses(isObj(r) ? r : {}, `${at}.rules[${j}]`))
  );
  const oneOf = (field: string, values: string[]) => {
    if (has(hook[field]) && !values.includes(hook[field] as string)) {
      causes.push(notSupported(`${at}.${field}`, hook[field], values));
    }
  };
  oneOf("failurePolicy", FAILURE_POLICIES);
  oneOf("matchPolicy", MATCH_POLICIES);
  if (!has(hook.sideEffects)) {
    causes.push(
      required(`${at}.sideEffects`, `must specify one of ${allow.sideEffects.join(", ")}`),
    );
  } else oneOf("sideEffects", allow.sideEffects);
  const timeout = hook.timeoutSeconds;
  if (typeof timeout === "number" && (timeout > 30 || timeout < 1)) {
    causes.push(
      invalid(
        `${at}.timeoutSeconds`,
        timeout,
        "the timeout value must be between 1 and 30 seconds",
      ),
    );
  }
  if (mutating) oneOf("reinvocationPolicy", REINVOCATION_POLICIES);
  causes.push(...clientConfigCauses(hook.clientConfig, `${at}.clientConfig`));
  return causes;
}

/** `utilvalidation.IsFullyQualifiedName`. */
function fullyQualifiedName(name: unknown, field: string): StatusCause[] {
  if (typeof name !== "string" || name === "") return [required(field)];
  const problems = validateName(name, { field });
  if (problems.length) {
    // One cause, its messages joined by "," as kube joins them.
    const detail = problems.map((p) =>
      p.message.replace(/^Invalid value: "(?:[^"\\]|\\.)*": /, "")
    );
    return [invalid(field, name, detail.join(","))];
  }
  if (name.split(".").length < 3) {
    return [
      invalid(field, name, "should be a domain with at least three segments separated by dots"),
    ];
  }
  return [];
}

function reviewVersionCauses(value: unknown, at: string, allow: Allowances): StatusCause[] {
  const versions = list(value);
  if (!versions.length) {
    return [required(at, `must specify one of ${ACCEPTED_REVIEW_VERSIONS.join(", ")}`)];
  }
  const causes: StatusCause[] = [];
  const seen = new Set<unknown>();
  let accepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      causes.push(invalid(`${at}[${i}]`, v, "duplicate version"));
      return;
    }
    seen.add(v);
    for (const problem of dns1035Label(String(v))) causes.push(invalid(`${at}[${i}]`, v, problem));
    if (ACCEPTED_REVIEW_VERSIONS.includes(v as string)) accepted = true;
  });
  if (allow.requireRecognizedVersion && !accepted) {
    causes.push(
      invalidRendered(
        at,
        goList("[]string", versions),
        `must include at least one of ${ACCEPTED_REVIEW_VERSIONS.join(", ")}`,
      ),
    );
  }
  return causes;
}

const DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?";

/**
 * `IsDNS1035Label`'s messages.
 *
 * @param value The value.
 * @returns Why it is not a DNS-1035 label; empty when it is.
 */
export function dns1035Label(value: string): string[] {
  const problems: string[] = [];
  if (value.length > 63) problems.push("must be no more than 63 characters");
  if (!new RegExp(`^${DNS1035_FMT}$`).test(value)) {
    problems.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '" +
        DNS1035_FMT + "')",
    );
  }
  return problems;
}

const hasWildcard = (values: unknown[]) => values.includes("*");

/** `validateRuleWithOperations` and `validateRule` (subresources allowed). */
function ruleCauses(rule: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const operations = list(rule.operations);
  if (!operations.length) causes.push(required(`${at}.operations`));
  if (operations.length > 1 && hasWildcard(operations)) {
    causes.push(
      invalidRendered(
        `${at}.operations`,
        goList("[]admissionregistration.OperationType", operations),
        "if '*' is present, must not specify other operations",
      ),
    );
  }
  operations.forEach((op, k) => {
    if (!OPERATIONS.includes(op as string)) {
      causes.push(notSupported(`${at}.operations[${k}]`, op, OPERATIONS));
    }
  });
  const groups = list(rule.apiGroups);
  if (!groups.length) causes.push(required(`${at}.apiGroups`));
  if (groups.length > 1 && hasWildcard(groups)) {
    causes.push(
      invalidRendered(
        `${at}.apiGroups`,
        goList("[]string", groups),
        "if '*' is present, must not specify other API groups",
      ),
    );
  }
  const versions = list(rule.apiVersions);
  if (!versions.length) causes.push(required(`${at}.apiVersions`));
  if (versions.length > 1 && hasWildcard(versions)) {
    causes.push(
      invalidRendered(
        `${at}.apiVersions`,
        goList("[]string", versions),
        "if '*' is present, must not specify other API versions",
      ),
    );
  }
  versions.forEach((v, k) => {
    if (v === "") causes.push(required(`${at}.apiVersions[${k}]`));
  });
  causes.push(...resourceCauses(list(rule.resources), `${at}.resources`));
  if (has(rule.scope) && !SCOPES.includes(rule.scope as string)) {
    causes.push(notSupported(`${at}.scope`, rule.scope, SCOPES));
  }
  return causes;
}

/** `validateResources`: `x`, `x/y`, `x/*`, `* /y` (no space), `*`, `* /*` without overlaps. */
function resourceCauses(resources: unknown[], at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (!resources.length) causes.push(required(at));
  const wildcardSub = new Set<string>(); // x/*
  const wildcardRes = new Set<string>(); // */x
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  resources.forEach((r, i) => {
    const resSub = String(r ?? "");
    if (resSub === "") {
      causes.push(required(`${at}[${i}]`));
      return;
    }
    if (resSub === "*/*") doubleWildcard = true;
    if (resSub === "*") singleWildcard = true;
    const slash = resSub.indexOf("/");
    if (slash < 0) {
      withoutSub = resSub !== "*";
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (wildcardSub.has(res)) {
      causes.push(
        invalid(`${at}[${i}]`, resSub, `if '${res}/*' is present, must not specify ${resSub}`),
      );
    }
    if (wildcardRes.has(sub)) {
      causes.push(
        invalid(`${at}[${i}]`, resSub, `if '*/${sub}' is present, must not specify ${resSub}`),
      );
    }
    if (sub === "*") wildcardSub.add(res);
    if (res === "*") wildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) {
    causes.push(
      invalidRendered(
        at,
        goList("[]string", resources),
        "if '*/*' is present, must not specify other resources",
      ),
    );
  }
  if (singleWildcard && withoutSub) {
    causes.push(
      invalidRendered(
        at,
        goList("[]string", resources),
        "if '*' is present, must not specify other resources without subresources",
      ),
    );
  }
  return causes;
}

/** The parts of a URL as Go's `url.Parse` splits them (it accepts nearly any text). */
function splitUrl(
  text: string,
): { scheme: string; user?: string; host: string; query: string; fragment: string } {
  let rest = text;
  let fragment = "";
  const hash = rest.indexOf("#");
  if (hash >= 0) [rest, fragment] = [rest.slice(0, hash), rest.slice(hash + 1)];
  let query = "";
  const q = rest.indexOf("?");
  if (q >= 0) [rest, query] = [rest.slice(0, q), rest.slice(q + 1)];
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest);
  const scheme = m ? m[1]!.toLowerCase() : "";
  if (m) rest = rest.slice(m[0].length);
  let host = "";
  let user: string | undefined;
  if (rest.startsWith("//")) {
    const end = rest.indexOf("/", 2);
    const authority = end < 0 ? rest.slice(2) : rest.slice(2, end);
    const at = authority.lastIndexOf("@");
    if (at >= 0) user = authority.slice(0, at);
    host = at >= 0 ? authority.slice(at + 1) : authority;
  }
  return { scheme, ...(user !== undefined ? { user } : {}), host, query, fragment };
}

/** `webhook.ValidateWebhookURL` (https forced) and `ValidateWebhookService`. */
function clientConfigCauses(value: unknown, at: string): StatusCause[] {
  const cc = isObj(value) ? value : {};
  if (has(cc.url) === has(cc.service)) {
    return [required(at, "exactly one of url or service is required")];
  }
  const causes: StatusCause[] = [];
  if (has(cc.url)) {
    const field = `${at}.url`;
    const u = splitUrl(String(cc.url));
    if (u.scheme !== "https") {
      causes.push(invalid(field, u.scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
    }
    if (!u.host) causes.push(invalid(field, u.host, `host must be specified${URL_FORM}`));
    if (u.user !== undefined) {
      causes.push(invalid(field, u.user, "user information is not permitted in the URL"));
    }
    if (u.fragment) {
      causes.push(invalid(field, u.fragment, "fragments are not permitted in the URL"));
    }
    if (u.query) {
      causes.push(invalid(field, u.query, "query parameters are not permitted in the URL"));
    }
    return causes;
  }
  const svc = isObj(cc.service) ? cc.service : {};
  const field = `${at}.service`;
  // kube passes (name, namespace) to a function declared (namespace, name): a missing name is
  // reported on `namespace` and a missing namespace on `name`. Reported here as kube reports it.
  if (!svc.namespace) causes.push(required(`${field}.name`));
  if (!svc.name) causes.push(required(`${field}.namespace`));
  const port = svc.port;
  if (typeof port === "number" && !(Number.isInteger(port) && port >= 1 && port <= 65535)) {
    causes.push(
      invalid(`${field}.port`, port, "port is not valid: must be between 1 and 65535, inclusive"),
    );
  }
  if (typeof svc.path === "string") causes.push(...servicePathCauses(svc.path, `${field}.path`));
  return causes;
}

function servicePathCauses(path: string, field: string): StatusCause[] {
  if (path === "/" || path === "") return [];
  if (path === "//") return [invalid(field, path, "segment[0] may not be empty")];
  const causes: StatusCause[] = [];
  if (!path.startsWith("/")) causes.push(invalid(field, path, "must start with a '/'"));
  let check = path.slice(1);
  if (check.endsWith("/")) check = check.slice(0, -1);
  check.split("/").forEach((step, i) => {
    if (!step) {
      causes.push(invalid(field, path, `segment[${i}] may not be empty`));
      return;
    }
    for (const p of validateName(step, { field })) {
      causes.push(
        invalid(
          field,
          path,
          `segment[${i}]: ${p.message.replace(/^Invalid value: "(?:[^"\\]|\\.)*": /, "")}`,
        ),
      );
    }
  });
  return causes;
}
