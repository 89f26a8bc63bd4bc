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

function volumeCauses(volumes: unknown[], path: string, names: Set<string>): StatusCause[] {
  const causes: StatusCause[] = [];
  volumes.forEach((v, i) => {
    const at = `${path}[${i}]`;
    const vol = isObj(v) ? v : {};
    const el: StatusCause[] = [];
    let sources = 0;
    for (const [key, named] of VOLUME_SOURCES) {
      if (vol[key] === undefined || vol[key] === null) continue;
      if (sources > 0) {
        el.push(forbidden(`${at}.${named}`, "may not specify more than 1 volume type"));
      } else sources++;
    }
    if (sources === 0) el.push(required(at, "must specify a volume type"));
    const name = text(vol.name);
    if (!name) el.push(required(`${at}.name`));
    else el.push(...validateName(name, { field: `${at}.name`, dns1123Label: true }));
    if (names.has(name)) el.push(duplicate(`${at}.name`, name));
    if (el.length === 0) names.add(name);
    causes.push(...el);
  });
  return causes;
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

const validPort = (p: unknown) =>
  typeof p === "number" && Number.isInteger(p) && p >= 1 && p <= 65535;

function portCauses(ports: unknown[], path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const at = `${path}[${i}]`;
    const port = isObj(p) ? p : {};
    const name = text(port.name);
    if (name) {
      const bad = portNameCauses(name, `${at}.name`);
      if (bad.length) causes.push(...bad);
      else if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
      else names.add(name);
    }
    if (port.containerPort === undefined || port.containerPort === 0) {
      causes.push(required(`${at}.containerPort`));
    } else if (!validPort(port.containerPort)) {
      causes.push(invalid(`${at}.containerPort`, port.containerPort, PORT_RANGE));
    }
    if (port.hostPort !== undefined && port.hostPort !== 0 && !validPort(port.hostPort)) {
      causes.push(invalid(`${at}.hostPort`, port.hostPort, PORT_RANGE));
    }
    const protocol = text(port.protocol);
    if (!protocol) causes.push(required(`${at}.protocol`));
    else if (!["SCTP", "TCP", "UDP"].includes(protocol)) {
      causes.push(notSupported(`${at}.protocol`, protocol, ["SCTP", "TCP", "UDP"]));
    }
  });
  return causes;
}

/** Whether requests may be below limits (kube's `IsOvercommitAllowed`: native, not hugepages). */
function overcommitAllowed(name: string): boolean {
  const native = !name.includes("/") || name.includes("kubernetes.io/");
  return native && !name.startsWith("hugepages-");
}

function resourceCauses(resources: unknown, path: string): StatusCause[] {
  if (!isObj(resources)) return [];
  const causes: StatusCause[] = [];
  const limits = new Map<string, Quantity>();
  const read = (listName: string, into?: Map<string, Quantity>) => {
    const values = resources[listName];
    const out = new Map<string, Quantity>();
    if (!isObj(values)) return out;
    for (const name in values) {
      if (!Object.hasOwn(values, name)) continue;
      const value = values[name];
      const q = parseQuantity(value);
      if (typeof q === "string") continue; // refused when decoding (pod_defaults.ts)
      if (q.mantissa < 0n) {
        causes.push(
          invalid(`${path}.${listName}[${name}]`, value, "must be greater than or equal to 0"),
        );
      }
      out.set(name, q);
      into?.set(name, q);
    }
    return out;
  };
  read("limits", limits);
  const requests = read("requests");
  const shownOf = (listName: string, name: string) => (resources[listName] as Obj)[name] as string;
  for (const [name, q] of requests) {
    const limit = limits.get(name);
    const at = `${path}.requests`;
    if (limit) {
      const cmp = compareQuantities(q, limit);
      if (cmp !== 0 && !overcommitAllowed(name)) {
        causes.push(
          invalid(
            at,
            shownOf("requests", name),
            `must be equal to ${name} limit of ${shownOf("limits", name)}`,
          ),
        );
      } else if (cmp > 0) {
        causes.push(
          invalid(
            at,
            shownOf("requests", name),
            `must be less than or equal to ${name} limit of ${shownOf("limits", name)}`,
          ),
        );
      }
    } else if (!overcommitAllowed(name)) {
      causes.push(required(`${path}.limits`, "Limit must be set for non overcommitable resources"));
    }
  }
  return causes;
}

function handlerCauses(handler: Obj, path: string, kinds: string[]): StatusCause[] {
  const causes: StatusCause[] = [];
  let found = 0;
  for (const key of kinds) {
    if (handler[key] === undefined || handler[key] === null) continue;
    if (found > 0) {
      causes.push(forbidden(`${path}.${key}`, "may not specify more than 1 handler type"));
    } else found++;
  }
  if (found === 0) causes.push(required(path, "must specify a handler type"));
  return causes;
}

function probeCauses(c: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (isObj(c.lifecycle)) {
    for (const hook of ["postStart", "preStop"]) {
      const h = c.lifecycle[hook];
      if (isObj(h)) causes.push(...handlerCauses(h, `${at}.lifecycle.${hook}`, LIFECYCLE_HANDLERS));
    }
  }
  for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) {
    const p = c[probe];
    if (!isObj(p)) continue;
    causes.push(...handlerCauses(p, `${at}.${probe}`, PROBE_HANDLERS));
    if (
      probe !== "readinessProbe" && p.successThreshold !== undefined && p.successThreshold !== 1
    ) {
      causes.push(invalid(`${at}.${probe}.successThreshold`, p.successThreshold, "must be 1"));
    }
  }
  return causes;
}

/** kube's `validateContainerCommon`: what every container needs. */
function containerCauses(c: Obj, at: string, volumes: Set<string>): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = text(c.name);
  if (!name) causes.push(required(`${at}.name`));
  else causes.push(...validateName(name, { field: `${at}.name`, dns1123Label: true }));
  if (!text(c.image)) causes.push(required(`${at}.image`));
  const policy = c.terminationMessagePolicy;
  if (policy !== undefined && policy !== "File" && policy !== "FallbackToLogsOnError") {
    causes.push(
      notSupported(`${at}.terminationMessagePolicy`, policy, ["File", "FallbackToLogsOnError"]),
    );
  }
  causes.push(...portCauses(list(c.ports), `${at}.ports`));
  const mountPaths = new Set<string>();
  list(c.volumeMounts).forEach((m, i) => {
    const mount = isObj(m) ? m : {};
    const mat = `${at}.volumeMounts[${i}]`;
    if (!text(mount.name)) causes.push(required(`${mat}.name`));
    if (!volumes.has(text(mount.name))) causes.push(notFound(`${mat}.name`, text(mount.name)));
    const mountPath = text(mount.mountPath);
    if (!mountPath) causes.push(required(`${mat}.mountPath`));
    if (mountPaths.has(mountPath)) {
      causes.push(invalid(`${mat}.mountPath`, mountPath, "must be unique"));
    }
    mountPaths.add(mountPath);
  });
  const pull = c.imagePullPolicy;
  if (pull !== undefined && !["Always", "IfNotPresent", "Never"].includes(pull as string)) {
    causes.push(notSupported(`${at}.imagePullPolicy`, pull, ["Always", "IfNotPresent", "Never"]));
  }
  causes.push(...resourceCauses(c.resources, `${at}.resources`));
  return causes;
}

/**
 * The causes of a pod spec's 422 (see the module doc), or none.
 *
 * @param spec The spec, defaulted.
 * @param path Where it is: `spec`, `spec.template.spec`, `template.spec`, ….
 * @returns kube's causes, in kube's order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { podSpecCauses } from "./pod_validation.ts";
 * const causes = podSpecCauses({ containers: [{ name: "c", image: "x", ports: [{ containerPort: 70000, protocol: "TCP" }] }] }, "spec");
 * assert.deepEqual(causes.map((c) => c.message), ["Invalid value: 70000: must be between 1 and 65535, inclusive"]);
 * ```
 */
export function podSpecCauses(spec: unknown, path: string): StatusCause[] {
  const s = isObj(spec) ? spec : {};
  const causes: StatusCause[] = [];
  const volumes = new Set<string>();
  causes.push(...volumeCauses(list(s.volumes), `${path}.volumes`, volumes));
  const containers = list(s.containers);
  const names = new Set<string>();
  if (containers.length === 0) causes.push(required(`${path}.containers`));
  containers.forEach((c, i) => {
    const at = `${path}.containers[${i}]`;
    const ctr = isObj(c) ? c : {};
    causes.push(...containerCauses(ctr, at, volumes));
    const name = text(ctr.name);
    if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
    else names.add(name);
    causes.push(...probeCauses(ctr, at));
    if (ctr.restartPolicy !== undefined) {
      causes.push(forbidden(`${at}.restartPolicy`, "may not be set for non-init containers"));
    }
  });
  list(s.initContainers).forEach((c, i) => {
    const at = `${path}.initContainers[${i}]`;
    const ctr = isObj(c) ? c : {};
    causes.push(...containerCauses(ctr, at, volumes));
    const name = text(ctr.name);
    if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
    else if (name) names.add(name);
    if (ctr.restartPolicy === "Always") causes.push(...probeCauses(ctr, at));
    else {
      const detail = "may not be set for init containers without restartPolicy=Always";
      for (const f of ["lifecycle", "livenessProbe", "readinessProbe", "startupProbe"]) {
        if (ctr[f] !== undefined && ctr[f] !== null) causes.push(forbidden(`${at}.${f}`, detail));
      }
    }
  });
  const restart = s.restartPolicy;
  if (restart !== undefined && !["Always", "OnFailure", "Never"].includes(restart as string)) {
    causes.push(notSupported(`${path}.restartPolicy`, restart, ["Always", "OnFailure", "Never"]));
  }
  const dns = s.dnsPolicy;
  const dnsValues = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
  if (dns !== undefined && !dnsValues.includes(dns as string)) {
    causes.push(notSupported(`${path}.dnsPolicy`, dns, dnsValues));
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
