/**
 * The printers of the networking kinds: Services, Endpoints, Ingresses, IngressClasses
 * and NetworkPolicies — how kube prints their addresses, ports and hosts.
 *
 * @module
 */

import type { KObject } from "../shared/types.ts";
import {
  AGE,
  type Any,
  col,
  formatLabels,
  formatSelector,
  NAME,
  orNone,
  type Printer,
  spec,
  status,
  wide,
} from "./table_columns.ts";

function serviceExternalIP(o: KObject): string {
  const sp = spec(o);
  const ext = (sp.externalIPs ?? []) as string[];
  switch (sp.type ?? "ClusterIP") {
    case "ClusterIP":
    case "NodePort":
      return ext.length ? ext.join(",") : "<none>";
    case "LoadBalancer": {
      const lb = ((status(o).loadBalancer?.ingress ?? []) as Any[])
        .flatMap((i) => [i.ip, i.hostname].filter((x) => x)) as string[];
      if (ext.length) return [...lb, ...ext].join(",");
      return lb.length ? lb.join(",") : "<pending>";
    }
    case "ExternalName":
      return sp.externalName ?? "";
  }
  return "<unknown>";
}

function servicePorts(o: KObject): string {
  const ports = ((spec(o).ports ?? []) as Any[]).map((p) =>
    p.nodePort > 0
      ? `${p.port}:${p.nodePort}/${p.protocol ?? "TCP"}`
      : `${p.port}/${p.protocol ?? "TCP"}`
  );
  return ports.length ? ports.join(",") : "<none>";
}

/** Go's `net.JoinHostPort`: IPv6 in brackets. */
const hostPort = (ip: string, port: unknown) =>
  ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;

/** `formatEndpoints`: up to three addresses (with each port), then `+ N more...`. */
function formatEndpoints(o: KObject): string {
  const subsets = ((o as Any).subsets ?? []) as Any[];
  if (!subsets.length) return "<none>";
  const max = 3;
  const list: string[] = [];
  let more = false;
  let count = 0;
  const add = (text: string) => {
    if (list.length === max) more = true;
    else list.push(text);
  };
  for (const ss of subsets) {
    const addresses = (ss.addresses ?? []) as Any[];
    const ports = (ss.ports ?? []) as Any[];
    if (!ports.length) {
      count += addresses.length;
      for (const a of addresses) add(a.ip ?? "");
      continue;
    }
    for (const port of ports) {
      count += addresses.length;
      for (const a of addresses) add(hostPort(a.ip ?? "", port.port ?? 0));
    }
  }
  const text = list.join(",");
  return more ? `${text} + ${count - max} more...` : text;
}

/** `formatHosts`: up to three rule hosts, `*` when none, then `+ N more...`. */
function ingressHosts(o: KObject): string {
  const rules = (spec(o).rules ?? []) as Any[];
  const max = 3;
  const list: string[] = [];
  let more = false;
  for (const rule of rules) {
    if (list.length === max) more = true;
    if (!more && rule.host) list.push(rule.host);
  }
  if (!list.length) return "*";
  return more ? `${list.join(",")} + ${rules.length - max} more...` : list.join(",");
}

/** An Ingress's ADDRESS: its load balancer's IPs or host names, sorted and distinct. */
function ingressAddress(o: KObject): string {
  const seen = new Set<string>();
  for (const i of (status(o).loadBalancer?.ingress ?? []) as Any[]) {
    if (i.ip) seen.add(i.ip);
    else if (i.hostname) seen.add(i.hostname);
  }
  return [...seen].sort().join(",");
}

function ingressClassParameters(o: KObject): string {
  const p = spec(o).parameters;
  if (!p) return "<none>";
  return `${p.kind ?? ""}${typeof p.apiGroup === "string" ? `.${p.apiGroup}` : ""}/${p.name ?? ""}`;
}

/** The networking printers by `group/plural` (the core group as `/plural`). */
export const NETWORK_PRINTERS: Record<string, Printer> = {
  "/services": {
    columns: [
      NAME,
      col("Type", (o) => spec(o).type ?? "ClusterIP"),
      col("Cluster-IP", (o) => orNone(spec(o).clusterIPs?.[0] ?? spec(o).clusterIP)),
      col("External-IP", serviceExternalIP),
      col("Port(s)", servicePorts),
      AGE,
      wide("Selector", (o) => formatLabels(spec(o).selector)),
    ],
  },
  "/endpoints": { columns: [NAME, col("Endpoints", formatEndpoints), AGE] },
  "networking.k8s.io/ingresses": {
    columns: [
      NAME,
      col("Class", (o) => spec(o).ingressClassName ?? "<none>"),
      col("Hosts", ingressHosts),
      col("Address", ingressAddress),
      col("Ports", (o) => ((spec(o).tls ?? []).length ? "80, 443" : "80")),
      AGE,
    ],
  },
  "networking.k8s.io/ingressclasses": {
    columns: [
      NAME,
      col("Controller", (o) => spec(o).controller ?? ""),
      col("Parameters", ingressClassParameters),
      AGE,
    ],
  },
  "networking.k8s.io/networkpolicies": {
    columns: [NAME, col("Pod-Selector", (o) => formatSelector(spec(o).podSelector ?? {})), AGE],
  },
};
