/**
 * Fuzzing the API client's answers on both transports: valid answers (a JSON object with
 * Content-Length, a chunked one, a watch stream, an error Status) are cut short, have bytes
 * of their framing changed, inserted or deleted, and come in pieces; a raw TCP server sends
 * them. Every case must end within the (short) timeouts, deliver either the exact original
 * body (for a watch: a prefix of the original events) or an error of the module's own classes.
 *
 * Only the framing is mutated (the status line, the headers, chunk-size lines and their line
 * ends): a changed byte inside a JSON body can make another valid body, which no HTTP client
 * can tell (HTTP/1.1 has no checksum), so "the exact original or an error" cannot hold there.
 * Cuts fall anywhere.
 *
 * The seed is random per run and printed on failure; `KOPF_FUZZ_SEED=<n>` replays a run.
 */

import assert from "node:assert/strict";
import {
  ApiConnectionError,
  ApiError,
  ResponseTooLargeError,
} from "../../src/cogs/clients/errors.ts";
import { LoginError } from "../../src/cogs/structs/login_errors.ts";
import { Resource } from "../../src/cogs/structs/references.ts";
import { WatchingError, watchObjects } from "../../src/cogs/clients/watching.ts";
import type { ClientSettings } from "../../src/cogs/clients/api.ts";
import { clientOf, CLIENTS, delay, rawServer } from "./_hostile.ts";

const ignore = Deno.env.get("KOPF_HTTP_CLIENT") === "fetch"; // picks its transports itself
const CASES = 120;
// Most cases wait (on pauses, stalls and timeouts) rather than compute: many at once.
const IN_FLIGHT = 40;
const enc = new TextEncoder();

/**
 * The module's own error classes: any other error is a failure. A mutated status line may say
 * 401: with no authenticator to log in again, that is a LoginError (KOPF_FUZZ_SEED=2043905064
 * once hung there, and every case after it waited for credentials that never came).
 */
const OWN = [ApiError, ApiConnectionError, ResponseTooLargeError, WatchingError, LoginError];

const SETTINGS: ClientSettings = {
  networking: {
    errorBackoffs: [],
    requestTimeout: 4,
    maxBodySize: 64 * 1024,
    errorBodySize: 4096,
    errorBodyTimeout: 0.3,
    maxConcurrentRequests: null,
  },
  // Timeouts (and the bounds on each case below) with room for a machine loaded by the whole
  // suite, where an intact answer sent in pieces was seen to run out of 2 s (1 s of inactivity).
  watching: { inactivityTimeout: 2, maxLineSize: 64 * 1024, connectTimeout: 4 },
};

/** A seeded PRNG (mulberry32): numbers in [0, 1). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A piece of an answer: framing (mutated) or payload (kept). */
type Piece = [framing: boolean, text: string];

const OBJECT = {
  kind: "ConfigMap",
  metadata: { name: "cm1", resourceVersion: "7" },
  data: { a: "ü" },
};
const STATUS = { kind: "Status", status: "Failure", reason: "NotFound", code: 404, message: "no" };
const EVENTS = [1, 2, 3].map((i) => ({ type: "ADDED", object: { ...OBJECT, data: { i } } }));

const size = (text: string) => enc.encode(text).length;
const head = (
  status: string,
  framing: string,
): Piece => [true, `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\n${framing}\r\n`];
const sized = (text: string): Piece[] => [[true, `${size(text).toString(16)}\r\n`], [false, text], [
  true,
  "\r\n",
]];

interface Template {
  name: string;
  watch: boolean;
  pieces: Piece[];
  /** The outcome of the unchanged answer: the body, or the events (watch). */
  expected: unknown;
  /** The unchanged answer is an error of this code. */
  code?: number;
}

const TEMPLATES: Template[] = [
  {
    name: "object with Content-Length",
    watch: false,
    pieces: [
      head("200 OK", `content-length: ${size(JSON.stringify(OBJECT))}\r\n`),
      [false, JSON.stringify(OBJECT)],
    ],
    expected: OBJECT,
  },
  {
    name: "chunked object",
    watch: false,
    pieces: [
      head("200 OK", "transfer-encoding: chunked\r\n"),
      ...sized(JSON.stringify(OBJECT).slice(0, 20)),
      ...sized(JSON.stringify(OBJECT).slice(20)),
      [true, "0\r\n\r\n"],
    ],
    expected: OBJECT,
  },
  {
    name: "watch stream",
    watch: true,
    pieces: [
      head("200 OK", "transfer-encoding: chunked\r\n"),
      ...EVENTS.flatMap((event) => sized(JSON.stringify(event) + "\n")),
      [true, "0\r\n\r\n"],
    ],
    expected: EVENTS,
  },
  {
    name: "error Status",
    watch: false,
    pieces: [
      head("404 Not Found", `content-length: ${size(JSON.stringify(STATUS))}\r\n`),
      [false, JSON.stringify(STATUS)],
    ],
    expected: STATUS,
    code: 404,
  },
];

/** One case: the bytes, how they are sent, and what may come of them. */
interface Case {
  id: number;
  template: Template;
  /** The bytes in the writes to make (with a pause between). */
  writes: Uint8Array[];
  /** After the bytes: close, or stall (the connection stays open, no more bytes). */
  end: "close" | "stall";
  /** Whether the bytes are the template's, whole and unchanged. */
  intact: boolean;
  what: string;
}

const BYTES = [..."0123456789abcdefABCDEF\r\n :;\t-", "\x00", "\x7f", "\xff"].map((c) =>
  c.charCodeAt(0) & 255
);

function makeCase(id: number, random: () => number): Case {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const template = pick(TEMPLATES);
  // The pieces as bytes; mutations change framing pieces only (within them: a deletion never
  // reaches into a payload).
  const parts = template.pieces.map(([framing, text]) => ({ framing, bytes: enc.encode(text) }));
  const framing = parts.filter((part) => part.framing);
  const whats: string[] = [];
  const mutations = random() < 0.25 ? 0 : 1 + Math.floor(random() * 3);
  for (let m = 0; m < mutations; m++) {
    const part = pick(framing);
    const index = parts.indexOf(part);
    const where = Math.floor(random() * part.bytes.length);
    const kind = pick(["byte", "insert", "delete"] as const);
    const random1 = () => (random() < 0.5 ? pick(BYTES) : Math.floor(random() * 256));
    const old = part.bytes;
    if (kind === "byte") {
      part.bytes = old.slice();
      part.bytes[where] = random1();
    } else if (kind === "insert") {
      const extra = Array.from({ length: 1 + Math.floor(random() * 3) }, random1);
      part.bytes = new Uint8Array([...old.subarray(0, where), ...extra, ...old.subarray(where)]);
    } else {
      const n = 1 + Math.floor(random() * 3);
      part.bytes = new Uint8Array([...old.subarray(0, where), ...old.subarray(where + n)]);
    }
    whats.push(`${kind}@${index}:${where}`);
  }
  let bytes = new Uint8Array(parts.reduce((n, p) => n + p.bytes.length, 0));
  let at = 0;
  for (const part of parts) {
    bytes.set(part.bytes, at);
    at += part.bytes.length;
  }
  const cut = random() < 0.35;
  if (cut) {
    const to = Math.floor(random() * bytes.length);
    bytes = bytes.subarray(0, to);
    whats.push(`cut@${to}`);
  }
  // In pieces: cut anywhere, sent with pauses.
  const writes: Uint8Array[] = [];
  for (let from = 0; from < bytes.length;) {
    const n = random() < 0.5 ? bytes.length - from : 1 + Math.floor(random() * 40);
    writes.push(bytes.subarray(from, from + n));
    from += n;
  }
  const end = random() < 0.3 ? "stall" : "close";
  return {
    id,
    template,
    writes,
    end,
    intact: whats.length === 0,
    what: `${template.name}: ${whats.join(", ") || "intact"}, ${writes.length} writes, ${end}`,
  };
}

/** Whether `events` are the first events of `all`. */
function isPrefix(events: unknown[], all: unknown[]): boolean {
  if (events.length > all.length) return false;
  try {
    assert.deepEqual(events, all.slice(0, events.length));
    return true;
  } catch {
    return false;
  }
}

for (const client of CLIENTS) {
  Deno.test({
    name:
      `fuzz on ${client}: cut and mutated answers end in time, as the original or a module error`,
    ignore,
    async fn() {
      const seed = Number(Deno.env.get("KOPF_FUZZ_SEED") ?? Math.floor(Math.random() * 2 ** 32));
      const random = prng(seed);
      const cases = Array.from({ length: CASES }, (_, id) => makeCase(id, random));
      await using server = rawServer(async (sock, req) => {
        const id = Number(/\/fuzz(\d+)/.exec(req.line)?.[1]);
        const one = cases[id];
        if (!one) return sock.close();
        for (const [i, bytes] of one.writes.entries()) {
          if (i > 0) await delay(2);
          if (!(await sock.write(bytes))) return sock.close();
        }
        // Stalling: the connection stays open with no more bytes (a next request on it, if the
        // client sends one, is served as usual).
        if (one.end === "close") sock.close();
      });
      const { api, vault } = clientOf(server, client, SETTINGS);
      using _ = vault;
      const failures: string[] = [];
      const run = async (one: Case): Promise<void> => {
        const started = performance.now();
        let timer: ReturnType<typeof setTimeout> | undefined;
        const hang = new Promise<"hang">((
          resolve,
        ) => (timer = setTimeout(resolve, 12_000, "hang")));
        const events: unknown[] = [];
        const work = (async () => {
          if (one.template.watch) {
            const resource = new Resource({
              group: "",
              version: "v1",
              plural: `fuzz${one.id}`,
              namespaced: false,
            });
            for await (const event of watchObjects(api, resource, null)) events.push(event);
            return events;
          }
          return await api.request("GET", `/fuzz${one.id}`, { expect: "object" });
        })().then((value) => ({ value }), (error) => ({ error }));
        const result = await Promise.race([work, hang]);
        clearTimeout(timer);
        const ms = Math.round(performance.now() - started);
        const fail = (why: string): void =>
          void failures.push(`case ${one.id} (${one.what}): ${why}`);
        if (result === "hang") return fail("no outcome in 12 s");
        if (ms > 8000) fail(`took ${ms} ms`);
        const expected = one.template.expected;
        if ("error" in result) {
          const error = result.error as Error;
          if (!OWN.some((Class) => error instanceof Class)) {
            return fail(`not a module error: ${error?.name}: ${error?.message}`);
          }
          if (one.template.watch && !isPrefix(events, expected as unknown[])) {
            return fail(`wrong events before the error: ${JSON.stringify(events)}`);
          }
          if (one.intact && one.end === "close" && one.template.code === undefined) {
            return fail(`an intact answer failed: ${error.message}`);
          }
          if (one.intact && one.template.code !== undefined) {
            if ((error as ApiError).code !== one.template.code) {
              fail(`wrong error: ${error.message}`);
            }
          }
          return;
        }
        if (one.template.watch) {
          if (!isPrefix(result.value as unknown[], expected as unknown[])) {
            fail(`wrong events: ${JSON.stringify(result.value)}`);
          } else if (one.intact && one.end === "close" && events.length !== 3) {
            fail(`an intact stream lost events: ${JSON.stringify(result.value)}`);
          }
          return;
        }
        try {
          assert.deepEqual(result.value, expected);
        } catch {
          fail(`a wrong body: ${JSON.stringify(result.value)}`);
        }
      };
      const queue = [...cases];
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          for (let one = queue.shift(); one; one = queue.shift()) await run(one);
        }),
      );
      assert.deepEqual(
        failures,
        [],
        `fuzz on ${client} failed with KOPF_FUZZ_SEED=${seed}:\n${failures.join("\n")}`,
      );
    },
  });
}
