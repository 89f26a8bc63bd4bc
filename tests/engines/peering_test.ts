/**
 * Peering decisions on a fake clock: Kopf's status entries read and written (Python's isoformat,
 * defaults, unknown fields), the identity, and the monitor's decisions — pause for a higher
 * priority, the same-priority warning and freeze, expired peers cleaned and the resume when the
 * blocker expires without any event, the mandatory object's absence — and the keep-alives'
 * rhythm and exact status layout against the embedded API server.
 */

import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { FakeClock } from "../../testing.ts";
import { ToggleSet } from "../../src/cogs/aio/toggles.ts";
import { ApiClient } from "../../src/cogs/clients/api.ts";
import { OperatorSettings, PeeringSettings } from "../../src/cogs/configs/settings.ts";
import { ConnectionInfo, Vault } from "../../src/cogs/structs/credentials.ts";
import { Resource } from "../../src/cogs/structs/references.ts";
import { type LogRecord, OperatorLogger } from "../../src/core/actions/loggers.ts";
import { KeepAlive, PeeringMonitor } from "../../src/core/engines/peering.ts";
import {
  type CappedLastseen,
  detectOwnId,
  isoformat,
  parseTimestamp,
  type Peer,
  readPeer,
  userOfUid,
  viewPeers,
} from "../../src/core/engines/peers.ts";
import { applyPeering, peeringStatus } from "../reactor/_peering.ts";
import { cluster, until } from "../reactor/_setup.ts";

const START = new Date("2026-01-01T00:00:00Z");
const T0 = "2026-01-01T00:00:00+00:00";

Deno.test("peers: Kopf's entries — isoformat, timestamps with zones, defaults, unknown fields", () => {
  assert.equal(isoformat(new Date("2026-03-04T05:06:07.089Z")), "2026-03-04T05:06:07.089000+00:00");
  assert.equal(isoformat(START), T0);
  // Python's isoformat with microseconds (as Kopf writes it), other zones, 'Z', no zone at all.
  const t = START.getTime();
  assert.equal(parseTimestamp("2026-01-01T00:00:00.123456+00:00"), t + 123.456);
  assert.equal(parseTimestamp("2026-01-01T01:00:00+01:00"), t);
  assert.equal(parseTimestamp("2026-01-01T00:00:00Z"), t);
  assert.equal(parseTimestamp("2026-01-01 00:00:00"), t);
  assert.ok(Number.isNaN(parseTimestamp("")));
  // Kopf's defaults: priority 0, lifetime 60, no lastseen = seen now; other fields ignored.
  const p = readPeer("x", { message: "maintenance", future: [1] }, t);
  assert.deepEqual({ ...p, problems: p.problems?.map((x) => x.code) }, {
    identity: "x",
    priority: 0,
    lifetime: 60,
    lastseen: T0,
    deadline: t + 60_000,
    problems: ["lastseen:missing"], // as in Kopf, but warned about: it never expires
  });
  // An unreadable lastseen counts as expired (and is cleaned), never as eternal.
  assert.equal(readPeer("y", { lastseen: "never" }, t).deadline, -Infinity);
});

Deno.test("peers: the view — own entry never a conflict; dead at exactly lastseen + lifetime", () => {
  const now = START.getTime() + 10_000;
  const view = viewPeers(
    {
      me: { priority: 5, lifetime: 1, lastseen: T0 }, // dead, but mine: cleaned only if dead
      hi: { priority: 6, lifetime: 10, lastseen: T0 }, // expires exactly now: dead
      hi2: { priority: 6, lifetime: 11, lastseen: T0 },
      same: { priority: 5, lifetime: 60, lastseen: T0 },
      low: { priority: 4, lifetime: 60, lastseen: T0 },
    },
    "me",
    5,
    now,
  );
  const ids = (ps: Peer[]) => ps.map((p) => p.identity);
  assert.deepEqual(ids(view.dead), ["me", "hi"]);
  assert.deepEqual(ids(view.higher), ["hi2"]);
  assert.deepEqual(ids(view.same), ["same"]);
  assert.deepEqual(ids(view.peers), ["me", "hi", "hi2", "same", "low"]);
  assert.deepEqual(viewPeers(undefined, "me", 0, now).peers, []);
});

Deno.test("peers: Kopf's identity — $POD_ID, user@host/time/rnd (no 'g'), user@host for the CLI", () => {
  const env: Record<string, string> = { USER: "dev" };
  const sources = {
    env: (n: string) => env[n],
    hostname: () => "box.localdomain.local",
    now: () => new Date("2026-05-06T07:08:09.999Z"),
    random: () => 0.999,
  };
  assert.equal(detectOwnId(false, sources), "dev@box/20260506070809/999");
  assert.equal(detectOwnId(true, sources), "dev@box");
  env.LOGNAME = "first";
  assert.equal(detectOwnId(true, { ...sources, hostname: () => undefined }), "first@localhost");
  env.POD_ID = "operator-5d8f-abc";
  assert.equal(detectOwnId(false, sources), "operator-5d8f-abc");
});

/** A monitor on a fake clock, with its toggle, log lines and clean/touch calls recorded. */
function monitor(options: { priority?: number; mandatory?: boolean } = {}) {
  const clock = new FakeClock({ start: START });
  const gate = new ToggleSet();
  const toggle = gate.make("peering 'default' cluster-wide", true);
  const settings = new PeeringSettings();
  settings.priority = options.priority ?? 0;
  const lines: string[] = [];
  const cleaned: string[][] = [];
  let touched = 0;
  const m = new PeeringMonitor({
    identity: "me",
    settings,
    toggle,
    logger: new OperatorLogger((r: LogRecord) => lines.push(`${r.level}: ${r.message}`)),
    what: "'default' cluster-wide",
    mandatory: options.mandatory ?? false,
    clean: (peers) => {
      cleaned.push(peers.map((p) => p.identity));
      return Promise.resolve();
    },
    touch: () => void touched++,
    clock,
  });
  return { clock, gate, m, lines, cleaned, touched: () => touched };
}

const entry = (priority: number, lifetime: number, lastseen = T0) => ({
  priority,
  lifetime,
  lastseen,
});

Deno.test("monitor: a higher priority pauses; its silent expiry resumes on the clock and cleans it", async () => {
  const { clock, gate, m, lines, cleaned } = monitor();
  m.update({ status: { me: entry(0, 60), dev: entry(666, 10) } });
  assert.equal(gate.on, true);
  assert.deepEqual(lines, [
    "info: Pausing operations in favour of " +
    "[<Peer dev: priority=666, lifetime=10, lastseen='2026-01-01T00:00:00+00:00'>].",
  ]);
  // The same state again (a keep-alive of ours): no new line.
  m.update({ status: { me: entry(0, 60, "2026-01-01T00:00:05+00:00"), dev: entry(666, 10) } });
  assert.equal(lines.length, 1);
  await clock.advance(9.99);
  assert.equal(gate.on, true);
  await clock.advance(0.01); // dev expires: no event comes, the clock decides
  assert.equal(gate.on, false);
  assert.deepEqual(cleaned, [["dev"]]);
  assert.equal(
    lines.at(-1),
    "info: Resuming operations after the pause. Conflicting operators with the same priority are gone.",
  );
  m.close();
});

Deno.test("monitor: the same priority — the docs' warning once per set of twins, and all freeze", async () => {
  const { clock, gate, m, lines } = monitor({ priority: 7 });
  const status = { me: entry(7, 60), twin: entry(7, 60) };
  m.update({ status });
  assert.equal(gate.on, true);
  const twin = "<Peer twin: priority=7, lifetime=60, lastseen='2026-01-01T00:00:00+00:00'>";
  const me = "<Peer me: priority=7, lifetime=60, lastseen='2026-01-01T00:00:00+00:00'>";
  assert.deepEqual(lines, [
    `warning: Possibly conflicting operators with the same priority: [${twin}].`,
    `warning: Pausing all operators, including self: [${me}, ${twin}]`,
  ]);
  await clock.advance(30);
  m.update({ status });
  assert.equal(lines.length, 2, "the same twins: no line again");
  // Another twin joins: the set changed, so the warning again (without another pausing line).
  m.update({ status: { ...status, twin2: entry(7, 60, "2026-01-01T00:00:30+00:00") } });
  assert.equal(lines.length, 3);
  assert.match(lines[2]!, /^warning: Possibly conflicting operators .*twin.*twin2/);
  // The twin leaves (its entry removed): resume.
  m.update({ status: { me: entry(7, 60) } });
  assert.equal(gate.on, false);
  assert.match(lines.at(-1)!, /^info: Resuming operations after the pause/);
  m.close();
});

Deno.test("monitor: lower priorities and dead entries do not pause; the first decision releases quietly", () => {
  const { gate, m, lines, cleaned } = monitor({ priority: 10 });
  assert.equal(gate.on, true, "held until the first decision");
  m.update({
    status: {
      me: entry(10, 60),
      low: entry(1, 60),
      old: entry(99, 60, "2025-12-31T00:00:00+00:00"),
    },
  });
  assert.equal(gate.on, false);
  assert.deepEqual(lines, [], "no 'Resuming' without a pause for peers");
  assert.deepEqual(cleaned, [["old"]]);
  // The same dead entry seen again while its cleaning is in flight: one request, not one per event.
  m.update({ status: { me: entry(10, 60), old: entry(99, 60, "2025-12-31T00:00:00+00:00") } });
  assert.equal(cleaned.length, 1);
  m.close();
});

Deno.test("monitor: mandatory — paused while the object is absent (logged once), released when it appears", () => {
  const { gate, m, lines, touched } = monitor({ mandatory: true });
  m.update(undefined);
  m.update(undefined);
  assert.equal(gate.on, true);
  assert.deepEqual(lines, [
    "info: The mandatory peering 'default' cluster-wide does not exist: pausing until it appears.",
  ]);
  m.update({ metadata: { name: "default" } }); // created, no peers yet: announce ourselves now
  assert.equal(gate.on, false);
  assert.equal(touched(), 1);
  assert.equal(lines.at(-1), "info: The mandatory peering 'default' cluster-wide exists now.");
  m.update(undefined); // deleted: paused again
  assert.equal(gate.on, true);
  m.close();
  m.update({ metadata: { name: "default" } }); // closed: ignored
  assert.equal(gate.on, true);
});

Deno.test("monitor: automatic — a deleted object leaves nobody to pause for", () => {
  const { gate, m } = monitor();
  m.update({ status: { dev: entry(666, 60) } });
  assert.equal(gate.on, true);
  m.update(undefined);
  assert.equal(gate.on, false);
  m.close();
});

Deno.test("keep-alive: Kopf's status layout, every lifetime minus 5-10 s, removed when leaving", async () => {
  await using c = await cluster();
  await applyPeering(c);
  using vault = new Vault({ login: new ConnectionInfo({ server: c.api.url }) });
  const api = new ApiClient({ vault });
  const clock = new FakeClock({ start: new Date("2026-01-01T00:00:00.250Z") });
  const settings = new OperatorSettings().peering;
  settings.priority = 100;
  settings.lifetime = 20;
  const lines: string[] = [];
  const resource = new Resource({
    group: "kopf.dev",
    version: "v1",
    plural: "clusterkopfpeerings",
    kind: "ClusterKopfPeering",
    namespaced: false,
  });
  const keepalive = new KeepAlive({
    api,
    target: { resource, namespace: null, name: "default" },
    identity: "user@host/20260101000000/abc",
    settings,
    logger: new OperatorLogger((r: LogRecord) => lines.push(r.message)),
    clock,
    random: () => 0, // the jitter's 5 seconds: every 15 seconds
  });
  const running = keepalive.run();
  const statusIs = async (expected: unknown) => {
    for (let i = 0; i < 200; i++) {
      if (isDeepStrictEqual(await peeringStatus(c), expected)) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.deepEqual(await peeringStatus(c), expected);
  };
  // Exactly Python Kopf's layout: {identity: {priority, lifetime, lastseen}}.
  await statusIs({
    "user@host/20260101000000/abc": {
      lastseen: "2026-01-01T00:00:00.250000+00:00",
      lifetime: 20,
      priority: 100,
    },
  });
  assert.deepEqual(lines, ["Keep-alive in 'default' cluster-wide: ok."]);
  await clock.advance(14.9);
  assert.equal(lines.length, 1);
  await clock.advance(0.1);
  await statusIs({
    "user@host/20260101000000/abc": {
      lastseen: "2026-01-01T00:00:15.250000+00:00",
      lifetime: 20,
      priority: 100,
    },
  });
  settings.stealth = true; // not logged any more (but still sent)
  await clock.advance(15);
  await statusIs({
    "user@host/20260101000000/abc": {
      lastseen: "2026-01-01T00:00:30.250000+00:00",
      lifetime: 20,
      priority: 100,
    },
  });
  assert.equal(lines.length, 2);
  await keepalive.leave();
  await running;
  assert.deepEqual(await peeringStatus(c), {});
  // A short lifetime: never more often than every second.
  settings.lifetime = 2;
  const fast = new KeepAlive({
    api,
    target: { resource, namespace: null, name: "absent" },
    identity: "x",
    settings,
    logger: new OperatorLogger((r: LogRecord) => lines.push(r.message)),
    clock,
  });
  const run2 = fast.run();
  // Awaited, not slept for: on a loaded machine a request took longer than a fixed 50 ms.
  await until(() => lines.length >= 3, "the first keep-alive of 'absent'");
  await clock.advance(1);
  await until(() => lines.length >= 4, "the next keep-alive, a second later");
  await fast.leave();
  await run2;
  // A missing object is logged even when stealthy.
  assert.deepEqual(lines.slice(2), [
    "Keep-alive in 'absent' cluster-wide: not found.",
    "Keep-alive in 'absent' cluster-wide: not found.",
    "Keep-alive in 'absent' cluster-wide: not found.",
  ]);
});

// Issue 24: without $USER the identity was `unknown@host`; Kopf's getpass.getuser() falls back
// to the password database.
Deno.test("peers: Kopf's identity without $USER — the password database's user, else 'unknown'", () => {
  const sources = {
    env: (_: string) => undefined,
    hostname: () => "box",
    now: () => new Date("2026-05-06T07:08:09Z"),
    random: () => 0,
  };
  assert.equal(detectOwnId(true, { ...sources, user: () => "kopf" }), "kopf@box");
  assert.equal(detectOwnId(true, { ...sources, user: () => undefined }), "unknown@box");
  assert.equal(detectOwnId(true, sources), "unknown@box");
  // The environment wins over the database, as in getpass.getuser().
  assert.equal(
    detectOwnId(true, {
      ...sources,
      env: (n: string) => n === "USER" ? "dev" : undefined,
      user: () => "kopf",
    }),
    "dev@box",
  );
  assert.equal(
    userOfUid(
      "# comment\nroot:x:0:0:root:/root:/bin/sh\nkopf:x:1000:1000::/home/kopf:/bin/sh",
      1000,
    ),
    "kopf",
  );
  assert.equal(userOfUid("root:x:0:0:root:/root:/bin/sh\n", 1234), undefined);
});

Deno.test("peers: the identity without $USER in a real process — /etc/passwd by Deno.uid(), no prompts", async () => {
  let passwd: string;
  try {
    passwd = Deno.readTextFileSync("/etc/passwd");
  } catch {
    console.log("no /etc/passwd on this machine: the subprocess part of this test cannot run");
    return;
  }
  const uid = Deno.uid();
  const expected = uid === null ? undefined : userOfUid(passwd, uid);
  if (expected === undefined) {
    console.log("this uid has no /etc/passwd entry: the subprocess part of this test cannot run");
    return;
  }
  const url = new URL("../../src/core/engines/peers.ts", import.meta.url).href;
  const code = `import { detectOwnId } from "${url}"; console.log(detectOwnId(true));`;
  const identity = async (...flags: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", ...flags, "-"],
      clearEnv: true,
      // No user variables; only where Deno keeps its cache (a HOME elsewhere would make one).
      env: Object.fromEntries(
        ["NO_COLOR", "DENO_DIR", "HOME", "XDG_CACHE_HOME"].flatMap((n) => {
          const v = n === "NO_COLOR" ? "1" : Deno.env.get(n);
          return v === undefined ? [] : [[n, v]];
        }),
      ),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const w = out.stdin.getWriter();
    await w.write(new TextEncoder().encode(code));
    await w.close();
    const { stdout, stderr, code: rc } = await out.output();
    const text = new TextDecoder().decode(stdout).trim();
    assert.equal(rc, 0, new TextDecoder().decode(stderr));
    return text.split("@")[0];
  };
  assert.equal(await identity("--allow-sys=uid", "--allow-read=/etc/passwd"), expected);
  assert.equal(await identity("--allow-sys"), expected); // node:os userInfo()
  assert.equal(await identity(), "unknown"); // no permissions: no prompt, no failure
});

// Issue 24: after a kill -9 of a same-priority twin, our own keep-alives (events) repeated the
// warning until the twin's entry expired.
Deno.test("monitor: a killed twin — the warning once, not again at our keep-alives; again for a new set", async () => {
  const { clock, gate, m, lines } = monitor();
  const at = (s: number) => isoformat(new Date(START.getTime() + s * 1000));
  m.update({ status: { me: entry(0, 60), twin: entry(0, 60) } });
  const warnings = () => lines.filter((l) => l.includes("Possibly conflicting")).length;
  assert.equal(warnings(), 1);
  // The twin is killed (its entry stays); ours is renewed every ~50 s: each renewal is an event.
  await clock.advance(25);
  m.update({ status: { me: entry(0, 60, at(25)), twin: entry(0, 60) } });
  await clock.advance(25);
  m.update({ status: { me: entry(0, 60, at(50)), twin: entry(0, 60) } });
  assert.equal(warnings(), 1, "once per change of the set of conflicting peers");
  assert.equal(gate.on, true);
  await clock.advance(10); // the twin expires
  assert.equal(gate.on, false);
  assert.match(lines.at(-1)!, /^info: Resuming operations after the pause/);
  // It comes back (a new process, the same identity): a change of the set, so warned again.
  m.update({ status: { me: entry(0, 60, at(50)), twin: entry(0, 60, at(60)) } });
  assert.equal(warnings(), 2);
  m.close();
});

// Issue 24: malformed entries were silently ignored (or trusted), and a peer claiming a lastseen
// in 2099 paused its peers until 2099.
Deno.test("peers: malformed entries are read safely and their problems named", () => {
  const t = START.getTime();
  const codes = (entry: unknown) => readPeer("x", entry, t).problems?.map((p) => p.code);
  assert.equal(readPeer("x", { priority: 5, lifetime: 60, lastseen: T0 }, t).problems, undefined);
  assert.deepEqual(codes("busy"), ['entry:"busy"']);
  assert.equal(readPeer("x", "busy", t).deadline, -Infinity, "not an object: expired, cleaned");
  assert.deepEqual(codes([1]), ["entry:[1]"]);
  const typed = readPeer("x", { priority: "high", lifetime: "30", lastseen: T0 }, t);
  assert.deepEqual([typed.priority, typed.lifetime], [0, 30]);
  assert.deepEqual(typed.problems?.map((p) => p.code), ['priority:"high"', 'lifetime:"30"']);
  assert.deepEqual(codes({ priority: 1.5, lastseen: T0 }), ["priority:1.5"]);
  assert.deepEqual(codes({ lastseen: "yesterday" }), ['lastseen:"yesterday"']);
  assert.deepEqual(codes({ lastseen: 1767225600 }), ["lastseen:1767225600"]);
  assert.equal(readPeer("x", { lastseen: 1767225600 }, t).deadline, -Infinity);
  assert.match(
    readPeer("x", { priority: "high", lastseen: T0 }, t).problems![0]!.text,
    /^has the priority "high", which is not a whole number: taken as 0; fix whatever writes that entry/,
  );
});

Deno.test("peers: a lastseen further ahead than the entry's lifetime is capped at now + lifetime, once", () => {
  const t = START.getTime();
  const capped: CappedLastseen = new Map();
  const future = { priority: 9, lifetime: 10, lastseen: "2099-01-01T00:00:00+00:00" };
  const p = readPeer("x", future, t, capped);
  assert.equal(p.deadline, t + 20_000, "capped at now + 10 s, so it expires 10 s after that");
  assert.deepEqual(p.problems?.map((x) => x.code), ["lastseen:future"]);
  assert.match(
    p.problems![0]!.text,
    /^claims the lastseen '2099-01-01T00:00:00\+00:00', more than its lifetime \(10s\) ahead of this operator's clock: capped at 2026-01-01T00:00:10\+00:00, so it expires at 2026-01-01T00:00:20\+00:00 unless it writes again/,
  );
  // Read again later: the same text keeps its cap (not re-capped to a later now).
  assert.equal(readPeer("x", future, t + 15_000, capped).deadline, t + 20_000);
  // It writes again (a new lastseen, still far ahead): capped anew from then.
  const again = { ...future, lastseen: "2099-01-01T00:00:05+00:00" };
  assert.equal(readPeer("x", again, t + 15_000, capped).deadline, t + 35_000);
  // Clock skew within its lifetime is no problem; nor is any of this for a sane entry.
  const skewed = readPeer("x", { ...future, lastseen: "2026-01-01T00:00:09+00:00" }, t, capped);
  assert.equal(skewed.problems, undefined);
  assert.equal(capped.size, 0, "forgotten when no longer capped");
});

Deno.test("monitor: malformed entries are warned about once per problem, not at every beat", async () => {
  const { clock, gate, m, lines, cleaned } = monitor();
  const at = (s: number) => isoformat(new Date(START.getTime() + s * 1000));
  m.update({
    status: {
      me: entry(0, 60),
      odd: { priority: "low", lifetime: 60, lastseen: T0 },
      nodate: { priority: -1, lifetime: 60 },
      broken: { priority: -1, lifetime: 60, lastseen: "never" },
    },
  });
  const warnings = () => lines.filter((l) => l.startsWith("warning: The peer"));
  assert.deepEqual(warnings(), [
    `warning: The peer 'odd' in the peering 'default' cluster-wide has the priority "low", which is not a whole number: taken as 0; fix whatever writes that entry (Kopf writes a whole number), or remove the entry.`,
    `warning: The peer 'nodate' in the peering 'default' cluster-wide has no lastseen: it counts as seen at every reading (as in Kopf), so it never expires; if that peer is gone, remove its entry (e.g. kopf resume --id 'nodate').`,
    `warning: The peer 'broken' in the peering 'default' cluster-wide has the lastseen "never", which is not an ISO 8601 time: it counts as expired and is removed from the peering object.`,
  ]);
  assert.deepEqual(cleaned, [["broken"]]);
  // Every beat of "odd" changes its lastseen, but not its problem: no new line.
  for (let i = 1; i <= 3; i++) {
    await clock.advance(20);
    m.update({
      status: {
        me: entry(0, 60, at(20 * i)),
        odd: { priority: "low", lifetime: 60, lastseen: at(20 * i) },
        nodate: { priority: -1, lifetime: 60 },
      },
    });
  }
  assert.equal(warnings().length, 3);
  // Its problem changes: warned again.
  m.update({
    status: {
      me: entry(0, 60, at(60)),
      odd: { priority: "lower", lifetime: 60, lastseen: at(60) },
    },
  });
  assert.equal(warnings().length, 4);
  assert.match(warnings()[3]!, /'odd' .* the priority "lower"/);
  assert.equal(gate.on, true, "'odd' still counts, as priority 0: the same as ours");
  // The own entry is never warned about (this operator rewrites it at its next keep-alive).
  m.update({ status: { me: { priority: "x" } } });
  assert.equal(warnings().length, 4);
  m.close();
});

Deno.test("monitor: a peer claiming lastseen in 2099 pauses only until now + 2 lifetimes, warned once", async () => {
  const { clock, gate, m, lines, cleaned } = monitor();
  const status = {
    me: entry(0, 60),
    future: { priority: 100, lifetime: 10, lastseen: "2099-01-01T00:00:00+00:00" },
  };
  m.update({ status });
  assert.equal(gate.on, true);
  await clock.advance(15);
  m.update({ status: { ...status, me: entry(0, 60, "2026-01-01T00:00:15+00:00") } });
  assert.equal(gate.on, true);
  assert.equal(lines.filter((l) => l.includes("claims the lastseen")).length, 1);
  await clock.advance(5); // 20 s: capped lastseen (10 s) + its lifetime (10 s)
  assert.equal(gate.on, false, "resumed on the clock, not in 2099");
  assert.deepEqual(cleaned, [["future"]]);
  assert.match(lines.at(-1)!, /^info: Resuming operations after the pause/);
  m.close();
});
