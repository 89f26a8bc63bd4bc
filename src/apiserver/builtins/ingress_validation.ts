/**
 * kube-apiserver's validation of networking.k8s.io/v1 Ingresses, the rules a
 * user meets first: a `defaultBackend` or `rules`; each rule's `host` a DNS
 * name (a wildcard only as the first label), not an IP address; each HTTP
 * rule with `paths`; each path's `pathType` required (`Exact`, `Prefix`,
 * `ImplementationSpecific`), an absolute `path` for `Exact` and `Prefix`
 * without `//`, `/./`, `/../`, `%2f` or a trailing `/.` or `/..`; each
 * backend exactly one of `service` (its name a DNS-1035 label, a port name or
 * number) and `resource` (its kind and name); `tls` hosts DNS names and
 * secret names valid; `ingressClassName` a DNS subdomain; the
 * `kubernetes.io/ingress.class` annotation, on create, equal to
 * `ingressClassName` when both are set.
 *
 * @module
 */

import type { StatusCause } from "../shared/errors.ts";
import { invalid, notSupported, required } from "../schemas/field_errors.ts";
import { validateName } from "../schemas/metadata_validation.ts";
import { portNameCauses } from "./pod_validation.ts";
import { dns1035Label } from "./webhook_config_validation.ts";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const has = (v: unknown) => v !== undefined && v !== null;
const bare = (message: string) => message.replace(/^Invalid value: "(?:[^"\\]|\\.)*": /, "");

const PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"];
const BAD_SEQUENCES = ["//", "/./", "/../", "%2f", "%2F"];
const BAD_SUFFIXES = ["/..", "/."];
const CLASS_ANNOTATION = "kubernetes.io/ingress.class";

/**
 * The 422 causes of an Ingress, as kube-apiserver's `ValidateIngressCreate` and
 * `ValidateIngressUpdate` find them.
 *
 * @param ingress The Ingress.
 * @param old The stored Ingress on update.
 * @returns The causes; empty when valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ingressCauses } from "./ingress_validation.ts";
 * const causes = ingressCauses({
 *   spec: { rules: [{ http: { paths: [{ path: "/", backend: { service: { name: "web", port: { number: 80 } } } }] } }] },
 * });
 * assert.deepEqual(causes.map((c) => [c.field, c.message]), [
 *   ["spec.rules[0].http.paths[0].pathType", "Required value: pathType must be specified"],
 * ]);
 * ```
 */
export function ingressCauses(ingress: Obj, old?: Obj): StatusCause[] {
  const spec = isObj(ingress.spec) ? ingress.spec : {};
  const causes: StatusCause[] = [];
  const rules = list(spec.rules);
  if (!rules.length && !has(spec.defaultBackend)) {
    const value = Array.isArray(spec.rules)
      ? "[]networking.IngressRule{}"
      : "[]networking.IngressRule(nil)";
    causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid value: ${value}: either \`defaultBackend\` or \`rules\` must be specified`,
      field: "spec",
    });
  }
  if (has(spec.defaultBackend)) {
    causes.push(...backendCauses(spec.defaultBackend, "spec.defaultBackend"));
  }
  rules.forEach((r, i) => causes.push(...ruleCauses(isObj(r) ? r : {}, `spec.rules[${i}]`)));
  list(spec.tls).forEach((t, i) => {
    const tls = isObj(t) ? t : {};
    list(tls.hosts).forEach((h, j) => {
      causes.push(...hostCauses(String(h ?? ""), `spec.tls[${i}].hosts[${j}]`, false));
    });
    if (typeof tls.secretName === "string" && tls.secretName && !invalidSecretsKept(old)) {
      causes.push(...validateName(tls.secretName, { field: `spec.tls[${i}].secretName` }));
    }
  });
  if (typeof spec.ingressClassName === "string") {
    causes.push(
      ...validateName(spec.ingressClassName, { field: "spec.ingressClassName" }).map(
        (c) => c.reason === "FieldValueRequired" ? invalidEmptyName("spec.ingressClassName") : c,
      ),
    );
  }
  const annotations = isObj(ingress.metadata) && isObj(ingress.metadata.annotations)
    ? ingress.metadata.annotations
    : {};
  const annotated = annotations[CLASS_ANNOTATION];
  if (
    !old && annotated !== undefined && typeof spec.ingressClassName === "string" &&
    annotated !== spec.ingressClassName
  ) {
    causes.push(
      invalid(
        `annotations.${CLASS_ANNOTATION}`,
        annotated,
        "must match `ingressClassName` when both are specified",
      ),
    );
  }
  return causes;
}

/** `NameIsDNSSubdomain("")` as kube's field.Invalid words it: the empty value is named. */
function invalidEmptyName(field: string): StatusCause {
  return invalid(
    field,
    "",
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  );
}

/** An update keeps an invalid TLS secret name already stored (kube's `allowInvalidSecretName`). */
function invalidSecretsKept(old: Obj | undefined): boolean {
  const spec = old && isObj(old.spec) ? old.spec : {};
  return list(spec.tls).some((t) =>
    isObj(t) && typeof t.secretName === "string" && t.secretName !== "" &&
    validateName(t.secretName, { field: "" }).length > 0
  );
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const isIp = (host: string) =>
  (IPV4.test(host) && host.split(".").every((p) => Number(p) <= 255)) ||
  (host.includes(":") && /^[0-9a-fA-F:.]+$/.test(host));

function hostCauses(host: string, field: string, ruleHost: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  if (ruleHost && isIp(host)) {
    causes.push(invalid(field, host, "must be a DNS name, not an IP address"));
  }
  if (host.includes("*")) {
    const rest = host.slice(2);
    const ok = host.startsWith("*.") && rest.length > 0 && !rest.includes("*") &&
      validateName(rest, { field }).length === 0 && host.length <= 253;
    if (!ok) {
      causes.push(
        invalid(
          field,
          host,
          "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
      );
    }
  } else {
    for (const c of validateName(host, { field })) {
      causes.push(invalid(field, host, bare(c.message)));
    }
  }
  return causes;
}

function ruleCauses(rule: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (typeof rule.host === "string" && rule.host) {
    causes.push(...hostCauses(rule.host, `${at}.host`, true));
  }
  if (!isObj(rule.http)) return causes;
  const paths = list(rule.http.paths);
  if (!paths.length) causes.push(required(`${at}.http.paths`));
  paths.forEach((p, i) => causes.push(...pathCauses(isObj(p) ? p : {}, `${at}.http.paths[${i}]`)));
  return causes;
}

function pathCauses(path: Obj, at: string): StatusCause[] {
  if (!has(path.pathType)) return [required(`${at}.pathType`, "pathType must be specified")];
  const causes: StatusCause[] = [];
  const value = typeof path.path === "string" ? path.path : "";
  switch (path.pathType) {
    case "Exact":
    case "Prefix":
      if (!value.startsWith("/")) {
        causes.push(invalid(`${at}.path`, value, "must be an absolute path"));
      }
      if (value) {
        for (const seq of BAD_SEQUENCES) {
          if (value.includes(seq)) {
            causes.push(invalid(`${at}.path`, value, `must not contain '${seq}'`));
          }
        }
        for (const suffix of BAD_SUFFIXES) {
          if (value.endsWith(suffix)) {
            causes.push(invalid(`${at}.path`, value, `cannot end with '${suffix}'`));
          }
        }
      }
      break;
    case "ImplementationSpecific":
      if (value && !value.startsWith("/")) {
        causes.push(invalid(`${at}.path`, value, "must be an absolute path"));
      }
      break;
    default:
      causes.push(notSupported(`${at}.pathType`, path.pathType, PATH_TYPES));
  }
  causes.push(...backendCauses(path.backend, `${at}.backend`));
  return causes;
}

function backendCauses(value: unknown, at: string): StatusCause[] {
  const backend = isObj(value) ? value : {};
  const resource = has(backend.resource);
  const service = has(backend.service);
  if (resource && service) {
    return [invalid(at, "", "cannot set both resource and service backends")];
  }
  if (!resource && !service) return [invalid(at, "", "resource or service backend is required")];
  const causes: StatusCause[] = [];
  if (resource) {
    const ref = isObj(backend.resource) ? backend.resource : {};
    if (typeof ref.apiGroup === "string") {
      for (const c of validateName(ref.apiGroup, { field: `${at}.resource.apiGroup` })) {
        causes.push(
          c.reason === "FieldValueRequired" ? invalidEmptyName(`${at}.resource.apiGroup`) : c,
        );
      }
    }
    for (const key of ["kind", "name"]) {
      const v = ref[key];
      if (typeof v !== "string" || v === "") causes.push(required(`${at}.resource.${key}`));
      else causes.push(...pathSegmentCauses(v, `${at}.resource.${key}`));
    }
    return causes;
  }
  const svc = isObj(backend.service) ? backend.service : {};
  const name = typeof svc.name === "string" ? svc.name : "";
  if (!name) causes.push(required(`${at}.service.name`));
  else for (const p of dns1035Label(name)) causes.push(invalid(`${at}.service.name`, name, p));
  const port = isObj(svc.port) ? svc.port : {};
  const portName = typeof port.name === "string" ? port.name : "";
  const portNumber = typeof port.number === "number" ? port.number : 0;
  if (portName && portNumber) {
    causes.push(invalid(at, "", "cannot set both port name & port number"));
  } else if (portName) {
    causes.push(...portNameCauses(portName, `${at}.service.port.name`));
  } else if (portNumber) {
    if (!(Number.isInteger(portNumber) && portNumber >= 1 && portNumber <= 65535)) {
      causes.push(
        invalid(`${at}.service.port.number`, portNumber, "must be between 1 and 65535, inclusive"),
      );
    }
  } else {
    causes.push(required(at, "port name or number is required"));
  }
  return causes;
}

function pathSegmentCauses(value: string, field: string): StatusCause[] {
  if (value === "." || value === "..") return [invalid(field, value, `may not be '${value}'`)];
  return ["/", "%"].filter((ch) => value.includes(ch)).map((ch) =>
    invalid(field, value, `may not contain '${ch}'`)
  );
}
