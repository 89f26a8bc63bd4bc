/**
 * kube-apiserver's validation of a pod spec — a Pod's or a pod template's —
 * for the mistakes users make first, with kube's 422 causes in kube's order:
 * volumes (a DNS-1123 name, unique, exactly one source); containers (at least
 * one; each named, unique, with an image; ports in 1–65535 with unique names;
 * requests and limits not negative and requests not above limits; probes and
 * lifecycle hooks with exactly one handler; volume mounts of declared
 * volumes); init containers; `restartPolicy` and `dnsPolicy` among kube's
 * values. Also the rules of pod templates in workloads (a Job's pods restart
 * `OnFailure` or `Never`, a replicated workload's `Always`), a Pod's spec
 * that may not change on update but for the fields kube lets change, and a
 * StatefulSet's spec updates.
 *
 * The spec is validated after its defaults (`pod_defaults.ts`), as kube
 * validates it: a spec sent without `restartPolicy` has `Always` by then.
 *
 * @module
 */

import type { StatusCause } from "../shared/errors.ts";
import {
  duplicate,
  forbidden,
  invalid,
  notFound,
  notSupported,
  required,
} from "../schemas/field_errors.ts";
import { validateName } from "../schemas/metadata_validation.ts";
import { compareQuantities, parseQuantity, type Quantity } from "./quantity.ts";
import { keptCauses } from "./pod_spec_memo.ts";

/** A JSON object of a spec. */
export type Obj = Record<string, unknown>;

/** Whether a value is a JSON object. */
export const isObj = (v: unknown): v is Obj =>
  v !== null && typeof v === "object" && !Array.isArray(v);
/** The value as a list (empty when it is not one). */
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** The value as a string (empty when it is not one). */
export const text = (v: unknown): string => (typeof v === "string" ? v : "");

/** Volume sources in the order kube's `validateVolumeSource` counts them, with the path it names. */
const VOLUME_SOURCES: Array<[string, string]> = [
  ["emptyDir", "emptyDir"],
  ["hostPath", "hostPath"],
  ["gitRepo", "gitRepo"],
  ["gcePersistentDisk", "gcePersistentDisk"],
  ["awsElasticBlockStore", "awsElasticBlockStore"],
  ["secret", "secret"],
  ["nfs", "nfs"],
  ["iscsi", "iscsi"],
  ["glusterfs", "glusterfs"],
  ["flocker", "flocker"],
  ["persistentVolumeClaim", "persistentVolumeClaim"],
  ["rbd", "rbd"],
  ["cinder", "cinder"],
  ["cephfs", "cephFS"],
  ["quobyte", "quobyte"],
  ["downwardAPI", "downwarAPI"], // sic: kube's path has this typo
  ["fc", "fc"],
  ["flexVolume", "flexVolume"],
  ["configMap", "configMap"],
  ["azureFile", "azureFile"],
  ["vsphereVolume", "vsphereVolume"],
  ["photonPersistentDisk", "photonPersistentDisk"],
  ["portworxVolume", "portworxVolume"],
  ["azureDisk", "azureDisk"],
  ["storageos", "storageos"],
  ["projected", "projected"],
  ["scaleIO", "scaleIO"],
  ["csi", "csi"],
  ["ephemeral", "ephemeral"],
  ["image", "image"],
];

const PROBE_HANDLERS = ["exec", "httpGet", "tcpSocket", "grpc"];
const LIFECYCLE_HANDLERS = ["exec", "httpGet", "tcpSocket", "sleep"];
const PORT_RANGE = "must be between 1 and 65535, inclusive";
const PROTOCOLS = ["SCTP", "TCP", "UDP"];
const PULL_POLICIES = ["Always", "IfNotPresent", "Never"];
const RESTART_POLICIES = ["Always", "OnFailure", "Never"];
const DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
const PROBES = ["livenessProbe", "readinessProbe", "startupProbe"];
const HOOKS = ["postStart", "preStop"];

/** A DNS-1123 label, checked the way `validateName` checks one (the common, valid case at once). */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * A name that must be a DNS-1123 label: nothing when it is one (most are: no cause, no path
 * built), else `validateName`'s causes.
 */
function labelNameCauses(name: string, field: () => string, causes: StatusCause[]): void {
  if (name.length <= 63 && DNS1123_LABEL.test(name)) return;
  for (const c of validateName(name, { field: field(), dns1123Label: true })) causes.push(c);
}

// The walk below pushes every cause into one array and builds a field's path only when it
// reports one: a valid spec (the usual case) costs no strings and no arrays but the sets of
// names it checks for duplicates.

function volumeCauses(volumes: unknown[], path: string, names: Set<string>, causes: StatusCause[]) {
  for (let i = 0; i < volumes.length; i++) {
    const v = volumes[i];
    const at = () => `${path}[${i}]`;
    const vol = isObj(v) ? v : {};
    const before = causes.length;
    let sources = 0;
    for (const [key, named] of VOLUME_SOURCES) {
      if (vol[key] === undefined || vol[key] === null) continue;
      if (sources > 0) {
        causes.push(forbidden(`${at()}.${named}`, "may not specify more than 1 volume type"));
      } else sources++;
    }
    if (sources === 0) causes.push(required(at(), "must specify a volume type"));
    const name = text(vol.name);
    if (!name) causes.push(required(`${at()}.name`));
    else labelNameCauses(name, () => `${at()}.name`, causes);
    if (names.has(name)) causes.push(duplicate(`${at()}.name`, name));
    if (causes.length === before) names.add(name);
  }
}

/**
 * `IsValidPortName`: a port's name as an IANA service name (kube's messages).
 *
 * @param name The name (not empty).
 * @param field The field to report.
 * @returns One cause per broken rule; empty when valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { portNameCauses } from "./pod_validation.ts";
 * assert.deepEqual(portNameCauses("http", "x"), []);
 * assert.equal(portNameCauses("80", "x")[0]?.message, 'Invalid value: "80": must contain at least one letter (a-z)');
 * ```
 */
export function portNameCauses(name: string, field: string): StatusCause[] {
  const details: string[] = [];
  if (name.length > 15) details.push("must be no more than 15 characters");
  if (!/^[-a-z0-9]+$/.test(name)) {
    details.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (!/[a-z]/.test(name)) details.push("must contain at least one letter (a-z)");
  if (name.includes("--")) details.push("must not contain consecutive hyphens");
  if (name.startsWith("-") || name.endsWith("-")) {
    details.push("must not begin or end with a hyphen");
  }
  return details.map((d) => invalid(field, name, d));
}

/** A port name kube accepts (the rules of {@linkcode portNameCauses}, in one test). */
const PORT_NAME = /^(?=.{1,15}$)(?=[^a-z]*[a-z])(?!-)(?!.*--)[-a-z0-9]*[a-z0-9]$/;

const validPort = (p: unknown) =>
  typeof p === "number" && Number.isInteger(p) && p >= 1 && p <= 65535;

function portCauses(ports: unknown[], path: () => string, causes: StatusCause[]): void {
  let names: Set<string> | undefined;
  for (let i = 0; i < ports.length; i++) {
    const p = ports[i];
    const at = () => `${path()}[${i}]`;
    const port = isObj(p) ? p : {};
    const name = text(port.name);
    if (name) {
      const bad = PORT_NAME.test(name) ? undefined : portNameCauses(name, `${at()}.name`);
      if (bad?.length) { for (const c of bad) causes.push(c); }
      else if ((names ??= new Set()).has(name)) causes.push(duplicate(`${at()}.name`, name));
      else names.add(name);
    }
    if (port.containerPort === undefined || port.containerPort === 0) {
      causes.push(required(`${at()}.containerPort`));
    } else if (!validPort(port.containerPort)) {
      causes.push(invalid(`${at()}.containerPort`, port.containerPort, PORT_RANGE));
    }
    if (port.hostPort !== undefined && port.hostPort !== 0 && !validPort(port.hostPort)) {
      causes.push(invalid(`${at()}.hostPort`, port.hostPort, PORT_RANGE));
    }
    const protocol = text(port.protocol);
    if (!protocol) causes.push(required(`${at()}.protocol`));
    else if (!PROTOCOLS.includes(protocol)) {
      causes.push(notSupported(`${at()}.protocol`, protocol, PROTOCOLS));
    }
  }
}

/** Whether requests may be below limits (kube's `IsOvercommitAllowed`: native, not hugepages). */
function overcommitAllowed(name: string): boolean {
  const native = !name.includes("/") || name.includes("kubernetes.io/");
  return native && !name.startsWith("hugepages-");
}

/** A request or limit as a quantity; undefined when it is not one (refused when decoding). */
function quantityOf(value: unknown): Quantity | undefined {
  const q = parseQuantity(value);
  return typeof q === "string" ? undefined : q;
}

/** Negative quantities in a list of requests or limits. */
function negativeCauses(
  values: Obj,
  path: () => string,
  listName: string,
  causes: StatusCause[],
): void {
  for (const name in values) {
    if (!Object.hasOwn(values, name)) continue;
    const q = quantityOf(values[name]);
    if (q && q.mantissa < 0n) {
      causes.push(
        invalid(
          `${path()}.${listName}[${name}]`,
          values[name],
          "must be greater than or equal to 0",
        ),
      );
    }
  }
}

function resourceCauses(resources: unknown, path: () => string, causes: StatusCause[]): void {
  if (!isObj(resources)) return;
  const limits = isObj(resources.limits) ? resources.limits : undefined;
  const requests = isObj(resources.requests) ? resources.requests : undefined;
  if (limits) negativeCauses(limits, path, "limits", causes);
  if (!requests) return;
  negativeCauses(requests, path, "requests", causes);
  for (const name in requests) {
    if (!Object.hasOwn(requests, name)) continue;
    const q = quantityOf(requests[name]);
    if (!q) continue;
    const limit = limits && Object.hasOwn(limits, name) ? quantityOf(limits[name]) : undefined;
    if (limit) {
      const cmp = compareQuantities(q, limit);
      const shown = requests[name] as string;
      if (cmp !== 0 && !overcommitAllowed(name)) {
        causes.push(
          invalid(
            `${path()}.requests`,
            shown,
            `must be equal to ${name} limit of ${limits![name]}`,
          ),
        );
      } else if (cmp > 0) {
        causes.push(
          invalid(
            `${path()}.requests`,
            shown,
            `must be less than or equal to ${name} limit of ${limits![name]}`,
          ),
        );
      }
    } else if (!overcommitAllowed(name)) {
      causes.push(
        required(`${path()}.limits`, "Limit must be set for non overcommitable resources"),
      );
    }
  }
}

function handlerCauses(
  handler: Obj,
  path: () => string,
  kinds: string[],
  causes: StatusCause[],
): void {
  let found = 0;
  for (const key of kinds) {
    if (handler[key] === undefined || handler[key] === null) continue;
    if (found > 0) {
      causes.push(forbidden(`${path()}.${key}`, "may not specify more than 1 handler type"));
    } else found++;
  }
  if (found === 0) causes.push(required(path(), "must specify a handler type"));
}

function probeCauses(c: Obj, at: () => string, causes: StatusCause[]): void {
  if (isObj(c.lifecycle)) {
    for (const hook of HOOKS) {
      const h = c.lifecycle[hook];
      if (isObj(h)) handlerCauses(h, () => `${at()}.lifecycle.${hook}`, LIFECYCLE_HANDLERS, causes);
    }
  }
  for (const probe of PROBES) {
    const p = c[probe];
    if (!isObj(p)) continue;
    handlerCauses(p, () => `${at()}.${probe}`, PROBE_HANDLERS, causes);
    if (
      probe !== "readinessProbe" && p.successThreshold !== undefined && p.successThreshold !== 1
    ) {
      causes.push(invalid(`${at()}.${probe}.successThreshold`, p.successThreshold, "must be 1"));
    }
  }
}

/** kube's `validateContainerCommon`: what every container needs. */
function containerCauses(
  c: Obj,
  at: () => string,
  volumes: Set<string>,
  causes: StatusCause[],
): void {
  const name = text(c.name);
  if (!name) causes.push(required(`${at()}.name`));
  else labelNameCauses(name, () => `${at()}.name`, causes);
  if (!text(c.image)) causes.push(required(`${at()}.image`));
  const policy = c.terminationMessagePolicy;
  if (policy !== undefined && policy !== "File" && policy !== "FallbackToLogsOnError") {
    causes.push(
      notSupported(`${at()}.terminationMessagePolicy`, policy, ["File", "FallbackToLogsOnError"]),
    );
  }
  if (Array.isArray(c.ports)) portCauses(c.ports, () => `${at()}.ports`, causes);
  if (Array.isArray(c.volumeMounts)) {
    const mountPaths = new Set<string>();
    const mounts = c.volumeMounts;
    for (let i = 0; i < mounts.length; i++) {
      const m = mounts[i];
      const mount = isObj(m) ? m : {};
      const mat = () => `${at()}.volumeMounts[${i}]`;
      if (!text(mount.name)) causes.push(required(`${mat()}.name`));
      if (!volumes.has(text(mount.name))) causes.push(notFound(`${mat()}.name`, text(mount.name)));
      const mountPath = text(mount.mountPath);
      if (!mountPath) causes.push(required(`${mat()}.mountPath`));
      if (mountPaths.has(mountPath)) {
        causes.push(invalid(`${mat()}.mountPath`, mountPath, "must be unique"));
      }
      mountPaths.add(mountPath);
    }
  }
  const pull = c.imagePullPolicy;
  if (pull !== undefined && !PULL_POLICIES.includes(pull as string)) {
    causes.push(notSupported(`${at()}.imagePullPolicy`, pull, PULL_POLICIES));
  }
  resourceCauses(c.resources, () => `${at()}.resources`, causes);
}

/**
 * The causes of a pod spec's 422 (see the module doc), or none.
 *
 * @param spec The spec, defaulted.
 * @param path Where it is: `spec`, `spec.template.spec`, `template.spec`, ….
 * @param causes Where to add them (a new array when omitted).
 * @returns `causes`, with kube's causes added in kube's order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { podSpecCauses } from "./pod_validation.ts";
 * const causes = podSpecCauses({ containers: [{ name: "c", image: "x", ports: [{ containerPort: 70000, protocol: "TCP" }] }] }, "spec");
 * assert.deepEqual(causes.map((c) => c.message), ["Invalid value: 70000: must be between 1 and 65535, inclusive"]);
 * ```
 */
export function podSpecCauses(
  spec: unknown,
  path: string,
  causes: StatusCause[] = [],
): StatusCause[] {
  // A spec kept defaulted (`pod_spec_memo.ts`, shared by the objects stored with it) is
  // validated once at each path.
  for (const c of keptCauses(spec, path, () => specCauses(spec, path, []))) causes.push(c);
  return causes;
}

function specCauses(spec: unknown, path: string, causes: StatusCause[]): StatusCause[] {
  const s = isObj(spec) ? spec : {};
  const volumes = new Set<string>();
  if (Array.isArray(s.volumes)) volumeCauses(s.volumes, `${path}.volumes`, volumes, causes);
  const containers = list(s.containers);
  const names = new Set<string>();
  if (containers.length === 0) causes.push(required(`${path}.containers`));
  for (let i = 0; i < containers.length; i++) {
    const c = containers[i];
    const at = () => `${path}.containers[${i}]`;
    const ctr = isObj(c) ? c : {};
    containerCauses(ctr, at, volumes, causes);
    const name = text(ctr.name);
    if (names.has(name)) causes.push(duplicate(`${at()}.name`, name));
    else names.add(name);
    probeCauses(ctr, at, causes);
    if (ctr.restartPolicy !== undefined) {
      causes.push(forbidden(`${at()}.restartPolicy`, "may not be set for non-init containers"));
    }
  }
  const inits = list(s.initContainers);
  for (let i = 0; i < inits.length; i++) {
    const c = inits[i];
    const at = () => `${path}.initContainers[${i}]`;
    const ctr = isObj(c) ? c : {};
    containerCauses(ctr, at, volumes, causes);
    const name = text(ctr.name);
    if (names.has(name)) causes.push(duplicate(`${at()}.name`, name));
    else if (name) names.add(name);
    if (ctr.restartPolicy === "Always") probeCauses(ctr, at, causes);
    else {
      const detail = "may not be set for init containers without restartPolicy=Always";
      for (const f of ["lifecycle", "livenessProbe", "readinessProbe", "startupProbe"]) {
        if (ctr[f] !== undefined && ctr[f] !== null) causes.push(forbidden(`${at()}.${f}`, detail));
      }
    }
  }
  const restart = s.restartPolicy;
  if (restart !== undefined && !RESTART_POLICIES.includes(restart as string)) {
    causes.push(notSupported(`${path}.restartPolicy`, restart, RESTART_POLICIES));
  }
  const dns = s.dnsPolicy;
  if (dns !== undefined && !DNS_POLICIES.includes(dns as string)) {
    causes.push(notSupported(`${path}.dnsPolicy`, dns, DNS_POLICIES));
  }
  return causes;
}

/**
 * A workload's pod template may only restart its pods as the workload allows:
 * a Job's `OnFailure` or `Never`, a replicated workload's `Always` (kube's
 * `ValidatePodTemplateSpecForReplicaSet`/`…StatefulSet`, batch's `validateJobSpec`).
 *
 * @param spec The template's spec, defaulted.
 * @param path Its path, e.g. `spec.template.spec`.
 * @param allowed The policies allowed, in kube's order.
 * @returns The cause, if the policy is not allowed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { templateRestartCauses } from "./pod_validation.ts";
 * const [cause] = templateRestartCauses({ restartPolicy: "Always" }, "spec.template.spec", ["OnFailure", "Never"]);
 * assert.equal(cause?.message, 'Unsupported value: "Always": supported values: "OnFailure", "Never"');
 * ```
 */
export function templateRestartCauses(
  spec: unknown,
  path: string,
  allowed: string[],
): StatusCause[] {
  const policy = isObj(spec) ? spec.restartPolicy : undefined;
  if (policy === undefined || allowed.includes(policy as string)) return [];
  return [notSupported(`${path}.restartPolicy`, policy, allowed)];
}
