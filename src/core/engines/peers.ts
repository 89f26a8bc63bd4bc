/**
 * Peers as Kopf writes and reads them in the peering objects
 * (`KopfPeering`/`ClusterKopfPeering`): one entry per operator under
 * `status`, keyed by the operator's identity, with its priority, lifetime
 * (seconds) and when it was last seen —
 * `{"status": {"user@host/20260101120000/x7q": {"priority": 0, "lifetime": 60,
 * "lastseen": "2026-01-01T12:00:00.123000+00:00"}}}`.
 *
 * Why byte-for-byte Kopf's: a Python Kopf replica and ours read each other's
 * entries and pause for each other by priority. So the timestamp is Python's
 * `datetime.isoformat()` of a UTC time, unknown fields of an entry are
 * ignored (forward compatibility, as Kopf's `Peer(**_)`), an entry without a
 * `lastseen` counts as just seen, and the log lines show peers as Kopf's
 * `repr()` does: `<Peer id: priority=100, lifetime=60, lastseen='…'>`.
 *
 * Where Kopf would crash on an entry or trust it blindly, this module reads
 * it safely and names the problem (the monitor warns once per problem): a
 * non-object entry or an unreadable `lastseen` counts as expired (and is
 * cleaned), a priority or lifetime of the wrong type falls back, and a
 * `lastseen` further ahead than the entry's lifetime (a skewed clock, a hand
 * edit) is capped at now + lifetime, remembered, so that it expires.
 *
 * Everything here is pure: time is given, not read — the decisions are
 * tested on a fake clock.
 *
 * @module
 */

import { userInfo } from "node:os";

/** One operator's entry in a peering object's status. */
export interface Peer {
  /** The operator's identity (the key of its entry). */
  readonly identity: string;
  /** Its priority: the highest one runs, the others pause. */
  readonly priority: number;
  /** For how many seconds after `lastseen` it counts as alive. */
  readonly lifetime: number;
  /** When it was last seen, as stored (Python's isoformat). */
  readonly lastseen: string;
  /** The wall time (epoch ms) at which it expires: lastseen + lifetime. */
  readonly deadline: number;
  /** What is wrong with its entry (absent when nothing is). */
  readonly problems?: readonly PeerProblem[];
}

/** The peers of one peering object as one operator sees them at one moment. */
export interface PeersView {
  /** All entries, in the order of the status. */
  peers: Peer[];
  /** Expired entries (to be cleaned from the status). */
  dead: Peer[];
  /** Live peers other than this operator with a higher priority: this one pauses. */
  higher: Peer[];
  /** Live peers other than this operator with the same priority: all of them freeze. */
  same: Peer[];
}

/**
 * Formats a wall time as Python's `datetime.now(timezone.utc).isoformat()` does:
 * `2026-01-01T12:00:00.123000+00:00`, without the fraction when it is zero.
 *
 * @param date The time.
 * @returns The text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isoformat } from "./peers.ts";
 * assert.deepEqual(isoformat(new Date(Date.UTC(2026, 0, 1, 12, 0, 0, 123))), "2026-01-01T12:00:00.123000+00:00");
 * assert.deepEqual(isoformat(new Date(Date.UTC(2026, 0, 1))), "2026-01-01T00:00:00+00:00");
 * ```
 */
export function isoformat(date: Date): string {
  const iso = date.toISOString(); // 2026-01-01T12:00:00.123Z
  const ms = date.getUTCMilliseconds();
  const base = iso.slice(0, 19);
  return ms ? `${base}.${String(ms * 1000).padStart(6, "0")}+00:00` : `${base}+00:00`;
}

const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Parses an ISO 8601 timestamp as Kopf's `iso8601.parse_date()` does (a time without a zone is
 * UTC; fractions of any length).
 *
 * @param text The timestamp.
 * @returns Epoch milliseconds, or NaN when it is not a timestamp.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTimestamp } from "./peers.ts";
 * assert.deepEqual(parseTimestamp("2026-01-01T00:00:01.5+00:00"), 1767225601500);
 * assert.deepEqual(parseTimestamp("2026-01-01T02:00:01.5+02:00"), 1767225601500);
 * assert.deepEqual(parseTimestamp("yesterday"), NaN);
 * ```
 */
export function parseTimestamp(text: string): number {
  const m = TIMESTAMP.exec(text.trim());
  if (!m) return NaN;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const ms = frac ? Number(`0.${frac}`) * 1000 : 0;
  let t = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +(s ?? 0)) + ms;
  if (zone && zone.toUpperCase() !== "Z") {
    const sign = zone[0] === "-" ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    t -= sign * (+digits.slice(0, 2) * 60 + +(digits.slice(2) || 0)) * 60_000;
  }
  return t;
}

/** Something wrong with a peer's entry, and what is made of it. */
export interface PeerProblem {
  /** What is wrong, stable while it stays wrong the same way (e.g. `lastseen:future`). */
  readonly code: string;
  /** The line's text after "the peer 'x' in the peering …": what, what is done, what to do. */
  readonly text: string;
}

/**
 * What a reader remembers of lastseen times it capped: the stored text and the time it was
 * capped to, by identity — so that a peer claiming a far future expires after its lifetime
 * unless it writes again, instead of being re-capped to a later "now" at every reading.
 */
export type CappedLastseen = Map<string, { text: string; seen: number }>;

/**
 * Reads one entry of a peering object's status as Kopf's `Peer(identity=…, **entry)` does:
 * priority 0 and lifetime 60 by default, an entry without `lastseen` seen `now`, unknown
 * fields ignored. What Kopf would fail on or trust blindly is made safe and reported in
 * `problems`: a priority or lifetime that is not a whole number (numeric text is read as its
 * number, anything else as the default), an entry that is not an object or a `lastseen` that is
 * not a time (expired, so that it is cleaned), a missing `lastseen` (seen now, as in Kopf — so
 * it never expires), and a `lastseen` further ahead of `now` than the entry's own lifetime
 * (capped at `now + lifetime`: a peer claiming 2099 would pause its peers until 2099).
 *
 * @param identity The entry's key.
 * @param entry The entry.
 * @param now The wall time (epoch ms).
 * @param capped The reader's memory of capped lastseen times (see {@link CappedLastseen});
 *   without it, a future lastseen is capped at this `now`.
 * @returns The peer (with `problems` only when there are any).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readPeer } from "./peers.ts";
 * const now = Date.UTC(2026, 0, 1, 0, 0, 5);
 * const peer = readPeer("op-1", { priority: 100, lifetime: 10, lastseen: "2026-01-01T00:00:00+00:00" }, now);
 * assert.equal(peer.deadline, Date.UTC(2026, 0, 1, 0, 0, 10));
 * // A lastseen further ahead than its lifetime is capped at now + lifetime: it expires a lifetime later.
 * const bad = readPeer("op-2", { priority: "high", lifetime: 10, lastseen: "2099-01-01T00:00:00" }, now);
 * assert.equal(bad.priority, 0);
 * assert.equal(bad.deadline, now + 20000);
 * assert.deepEqual(bad.problems?.map((p) => p.code), ['priority:"high"', "lastseen:future"]);
 * ```
 */
export function readPeer(
  identity: string,
  entry: unknown,
  now: number,
  capped?: CappedLastseen,
): Peer {
  const problems: PeerProblem[] = [];
  const isObject = typeof entry === "object" && entry !== null && !Array.isArray(entry);
  if (!isObject) {
    problems.push({
      code: `entry:${show(entry)}`,
      text: `is not an object of priority, lifetime and lastseen but ${show(entry)}: it counts ` +
        `as expired and is removed from the peering object.`,
    });
  }
  const e = (isObject ? entry : {}) as Record<string, unknown>;
  const whole = (key: "priority" | "lifetime", fallback: number, rule: string): number => {
    const v = e[key];
    if (v === undefined) return fallback;
    const n = typeof v === "number" || typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
    if (typeof v === "number" && Number.isInteger(v)) return v;
    const taken = Number.isFinite(n) ? Math.trunc(n) : fallback;
    problems.push({
      code: `${key}:${show(v)}`,
      text: `has the ${key} ${show(v)}, which is not ${rule}: taken as ${taken}; ` +
        `fix whatever writes that entry (Kopf writes a whole number), or remove the entry.`,
    });
    return taken;
  };
  const priority = whole("priority", 0, "a whole number");
  const lifetime = whole("lifetime", 60, "a whole number of seconds");
  const text = typeof e.lastseen === "string" ? e.lastseen : undefined;
  let seen = e.lastseen === undefined ? now : text !== undefined ? parseTimestamp(text) : NaN;
  if (isObject && e.lastseen === undefined) {
    problems.push({
      code: "lastseen:missing",
      text: `has no lastseen: it counts as seen at every reading (as in Kopf), so it never ` +
        `expires; if that peer is gone, remove its entry (e.g. kopf resume --id '${identity}').`,
    });
  } else if (isObject && Number.isNaN(seen)) {
    // Kopf would fail on it; here it counts as expired (and is cleaned).
    problems.push({
      code: `lastseen:${show(e.lastseen)}`,
      text: `has the lastseen ${show(e.lastseen)}, which is not an ISO 8601 time: it counts ` +
        `as expired and is removed from the peering object.`,
    });
  }
  if (!isObject || Number.isNaN(seen)) seen = -Infinity;
  const limit = now + Math.max(0, lifetime) * 1000;
  if (text !== undefined && seen > limit) {
    const memo = capped?.get(identity);
    const at = memo && memo.text === text ? memo.seen : limit;
    capped?.set(identity, { text, seen: at });
    problems.push({
      code: "lastseen:future",
      text: `claims the lastseen '${text}', more than its lifetime (${lifetime}s) ahead of this ` +
        `operator's clock: capped at ${isoformat(new Date(at))}, so it expires at ` +
        `${isoformat(new Date(at + lifetime * 1000))} unless it writes again; check the ` +
        `clocks of that peer and of this one.`,
    });
    seen = at;
  } else {
    capped?.delete(identity);
  }
  const peer: Peer = {
    identity,
    priority,
    lifetime,
    lastseen: text ?? isoformat(new Date(now)),
    deadline: seen + lifetime * 1000,
  };
  return problems.length ? { ...peer, problems } : peer;
}

/** A value as the problem lines show it: JSON, shortened. */
function show(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * Sorts the peers of a peering object's status for one operator, as Kopf's peering does.
 *
 * @param status The object's `status` (the entries by identity).
 * @param identity This operator's identity (its own entry is never a conflict).
 * @param priority This operator's priority.
 * @param now The wall time (epoch ms): entries with `lastseen + lifetime <= now` are dead.
 * @param capped The reader's memory of capped lastseen times (see {@link readPeer}).
 * @returns All, dead, higher-priority and same-priority peers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { viewPeers } from "./peers.ts";
 * const now = Date.UTC(2026, 0, 1);
 * const lastseen = "2026-01-01T00:00:00+00:00";
 * const view = viewPeers({
 *   me: { priority: 0, lifetime: 60, lastseen },
 *   dev: { priority: 666, lifetime: 60, lastseen },
 *   gone: { priority: 999, lifetime: 0, lastseen },
 * }, "me", 0, now);
 * assert.deepEqual([view.higher.map((p) => p.identity), view.dead.map((p) => p.identity)], [["dev"], ["gone"]]);
 * ```
 */
export function viewPeers(
  status: unknown,
  identity: string,
  priority: number,
  now: number,
  capped?: CappedLastseen,
): PeersView {
  const entries = typeof status === "object" && status !== null && !Array.isArray(status)
    ? Object.entries(status as Record<string, unknown>)
    : [];
  const peers = entries.map(([id, entry]) => readPeer(id, entry, now, capped));
  const dead = peers.filter((p) => p.deadline <= now);
  const live = peers.filter((p) => p.deadline > now && p.identity !== identity);
  return {
    peers,
    dead,
    higher: live.filter((p) => p.priority > priority),
    same: live.filter((p) => p.priority === priority),
  };
}

/**
 * An operator's own entry as Kopf's keep-alive writes it; null (removal) for a zero lifetime.
 *
 * @param priority The priority.
 * @param lifetime The lifetime in seconds; 0 removes the entry (leaving, `kopf resume`).
 * @param now The wall time.
 * @returns The entry, or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { peerEntry } from "./peers.ts";
 * assert.deepEqual(peerEntry(100, 60, new Date(Date.UTC(2026, 0, 1))), { priority: 100, lifetime: 60, lastseen: "2026-01-01T00:00:00+00:00" });
 * assert.deepEqual(peerEntry(100, 0, new Date()), null);
 * ```
 */
export function peerEntry(
  priority: number,
  lifetime: number,
  now: Date,
): { priority: number; lifetime: number; lastseen: string } | null {
  if (lifetime <= 0) return null;
  return { priority, lifetime, lastseen: isoformat(now) };
}

/**
 * Shows peers as Kopf's log lines do (Python's `repr()` of a list of peers).
 *
 * @param peers The peers.
 * @returns E.g. `[<Peer op-1: priority=100, lifetime=60, lastseen='2026-01-01T00:00:00+00:00'>]`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readPeer, reprPeers } from "./peers.ts";
 * const peer = readPeer("dev", { priority: 666, lastseen: "2026-01-01T00:00:00+00:00" }, 0);
 * assert.deepEqual(reprPeers([peer]), "[<Peer dev: priority=666, lifetime=60, lastseen='2026-01-01T00:00:00+00:00'>]");
 * ```
 */
export function reprPeers(peers: readonly Peer[]): string {
  const one = (p: Peer) =>
    `<Peer ${p.identity}: priority=${p.priority}, lifetime=${p.lifetime}, lastseen='${p.lastseen}'>`;
  return `[${peers.map(one).join(", ")}]`;
}

/** Where {@link detectOwnId} reads the environment (injectable for tests). */
export interface IdentitySources {
  /** An environment variable, or undefined (also when it may not be read). */
  env(name: string): string | undefined;
  /** The host's name, or undefined when it may not be read. */
  hostname(): string | undefined;
  /**
   * The user of this process from the password database (Kopf's `getpass.getuser()` falls back
   * to `pwd`), or undefined when it may not be read. Optional: without it, "unknown".
   */
  user?(): string | undefined;
  /** The wall time. */
  now(): Date;
  /** A random number in [0, 1). */
  random(): number;
}

/** Kopf's alphabet of the random suffix (sic: without "g"). */
const ALPHABET = "abcdefhijklmnopqrstuvwxyz0123456789";

/**
 * The operator's identity, as Kopf makes it: `$POD_ID` if set (the pod's name from the downward
 * API), else `user@host/YYYYmmddHHMMSS/xyz` for an operator, or `user@host` for the manual
 * `kopf freeze`/`kopf resume`. The user is `$LOGNAME`, `$USER`, `$LNAME` or `$USERNAME`, else the
 * password database's entry of this process's uid (as Python's `getpass.getuser()`; on Deno
 * read from `/etc/passwd` with `--allow-sys=uid --allow-read=/etc/passwd`, else from
 * `node:os`' `userInfo()` with `--allow-sys`), else `unknown` — never a permission prompt.
 *
 * @param manual For the CLI's freeze/resume: no time and no random suffix.
 * @param sources The environment (default: Deno's, read only where permitted — never a prompt).
 * @returns The identity.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { detectOwnId } from "./peers.ts";
 * const sources = {
 *   env: (name: string) => ({ USER: "dev" } as Record<string, string>)[name],
 *   hostname: () => "laptop.local",
 *   now: () => new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
 *   random: () => 0,
 * };
 * assert.deepEqual(detectOwnId(false, sources), "dev@laptop/20260102030405/aaa");
 * assert.deepEqual(detectOwnId(true, sources), "dev@laptop");
 * ```
 */
export function detectOwnId(manual: boolean, sources: IdentitySources = denoSources): string {
  const pod = sources.env("POD_ID");
  if (pod !== undefined) return pod;
  const user = ["LOGNAME", "USER", "LNAME", "USERNAME"].map((n) => sources.env(n)).find(Boolean) ||
    sources.user?.() || "unknown";
  let host = sources.hostname() ?? sources.env("HOSTNAME") ?? "localhost";
  while (/\.(local|localdomain)$/.test(host)) host = host.replace(/\.(local|localdomain)$/, "");
  if (manual) return `${user}@${host}`;
  const now = sources.now().toISOString().replace(/\D/g, "").slice(0, 14);
  let rnd = "";
  for (let i = 0; i < 3; i++) rnd += ALPHABET[Math.floor(sources.random() * ALPHABET.length)];
  return `${user}@${host}/${now}/${rnd}`;
}

/** Deno's environment, read only where the permissions are granted (no prompts). */
const denoSources: IdentitySources = {
  env(name) {
    if (Deno.permissions.querySync({ name: "env", variable: name }).state !== "granted") {
      return undefined;
    }
    return Deno.env.get(name);
  },
  hostname() {
    if (Deno.permissions.querySync({ name: "sys", kind: "hostname" }).state !== "granted") {
      return undefined;
    }
    return Deno.hostname();
  },
  user: passwdUser,
  now: () => new Date(),
  random: Math.random,
};

/** Whether a permission is granted (querying never prompts). */
function granted(descriptor: Deno.PermissionDescriptor): boolean {
  try {
    return Deno.permissions.querySync(descriptor).state === "granted";
  } catch {
    return false;
  }
}

/**
 * The name of this process's user in the password database: `/etc/passwd`'s line of
 * `Deno.uid()` (needs `--allow-sys=uid` and `--allow-read=/etc/passwd`), else `node:os`'
 * `userInfo()` (needs `--allow-sys`: it reads the uid, gid and user name); undefined when
 * neither is permitted or there is no such entry (e.g. a container's arbitrary uid).
 */
function passwdUser(): string | undefined {
  if (!granted({ name: "sys", kind: "uid" })) return undefined;
  let uid: number | null;
  try {
    uid = Deno.uid();
  } catch {
    return undefined;
  }
  if (uid === null) return undefined; // Windows: no uid (and no /etc/passwd)
  if (granted({ name: "read", path: "/etc/passwd" })) {
    try {
      const name = userOfUid(Deno.readTextFileSync("/etc/passwd"), uid);
      if (name) return name;
    } catch { /* no such file: try the system's own lookup */ }
  }
  const all = ["gid", "username", "homedir"].every((kind) =>
    granted({ name: "sys", kind } as Deno.PermissionDescriptor)
  );
  if (all) {
    try {
      return userInfo().username || undefined;
    } catch { /* no entry for this uid */ }
  }
  return undefined;
}

/**
 * The user name of a uid in the text of `/etc/passwd` (`name:x:uid:gid:…` lines).
 *
 * @param passwd The file's text.
 * @param uid The uid.
 * @returns The name, or undefined when no line has that uid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { userOfUid } from "./peers.ts";
 * const passwd = "root:x:0:0::/root:/bin/sh\nkopf:x:1000:1000::/home/kopf:/bin/sh\n";
 * assert.equal(userOfUid(passwd, 1000), "kopf");
 * ```
 */
export function userOfUid(passwd: string, uid: number): string | undefined {
  for (const line of passwd.split("\n")) {
    if (line.startsWith("#")) continue;
    const [name, , id] = line.split(":");
    if (name && id !== undefined && id.trim() === String(uid)) return name;
  }
  return undefined;
}
