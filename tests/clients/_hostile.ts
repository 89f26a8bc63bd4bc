/**
 * A raw TCP server for the hostile-peer tests: it answers with whatever bytes a test scripts
 * (broken HTTP, stalls, closes), and the API clients under test (both transports) talk to it.
 *
 * @module
 */

import { ConnectionInfo, Vault } from "../../src/cogs/structs/credentials.ts";
import { ApiClient, type ClientSettings } from "../../src/cogs/clients/api.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** One request as the raw server read it. */
export interface RawRequest {
  /** The head's text, up to the empty line. */
  head: string;
  /** The request line, e.g. `GET /x HTTP/1.1`. */
  line: string;
  /** Its Content-Length, if any (the body is not read unless the script reads it). */
  length: number;
  /** How many connections were accepted before this one's (0 for the first). */
  connection: number;
  /** The request's index on its connection (0 for the first). */
  index: number;
}

/** What a script does with a request: writes, reads, closes the connection (`sock`). */
export type Script = (sock: RawSocket, req: RawRequest) => Promise<void>;

/** A connection of the raw server, with what it read past the last request head. */
export class RawSocket {
  readonly conn: Deno.Conn;
  #buf = new Uint8Array(0);
  closed = false;

  constructor(conn: Deno.Conn) {
    this.conn = conn;
  }

  /** Writes all of `data`; false if the peer is gone. */
  async write(data: string | Uint8Array): Promise<boolean> {
    const bytes = typeof data === "string" ? enc.encode(data) : data;
    try {
      for (let at = 0; at < bytes.length;) at += await this.conn.write(bytes.subarray(at));
      return true;
    } catch {
      return false;
    }
  }

  /** Reads the next request head; undefined at the end of the connection. */
  async head(): Promise<string | undefined> {
    for (;;) {
      const text = dec.decode(this.#buf);
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) {
        const head = text.slice(0, end + 4);
        this.#buf = this.#buf.subarray(enc.encode(head).length);
        return head;
      }
      if (!(await this.#more())) return undefined;
    }
  }

  /** Reads and drops `n` bytes (a request body); false if the connection ended first. */
  async skip(n: number): Promise<boolean> {
    while (this.#buf.length < n) {
      n -= this.#buf.length;
      this.#buf = new Uint8Array(0);
      if (!(await this.#more())) return false;
    }
    this.#buf = this.#buf.subarray(n);
    return true;
  }

  /** Closes the connection (idempotent). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.conn.close();
    } catch { /* closed */ }
  }

  async #more(): Promise<boolean> {
    const chunk = new Uint8Array(64 * 1024);
    let n: number | null;
    try {
      n = await this.conn.read(chunk);
    } catch {
      return false;
    }
    if (n === null) return false;
    const joined = new Uint8Array(this.#buf.length + n);
    joined.set(this.#buf);
    joined.set(chunk.subarray(0, n), this.#buf.length);
    this.#buf = joined;
    return true;
  }
}

/** A running raw server. */
export interface RawServer extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** How many connections were accepted. */
  readonly connections: number;
  /** The request lines in the order they came. */
  readonly requests: string[];
  /** How many connections have ended (closed by the client, or by the script). */
  readonly ended: number;
}

/**
 * Starts a raw server: every request of every connection goes to `script`; the connection is
 * served request after request until the script closes it or the client does.
 *
 * @param script What to answer.
 * @returns The server; dispose it to stop it and close its connections.
 */
export function rawServer(script: Script): RawServer {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const sockets = new Set<RawSocket>();
  const requests: string[] = [];
  const tasks = new Set<Promise<void>>();
  let connections = 0;
  let ended = 0;
  const serve = async (sock: RawSocket, connection: number) => {
    try {
      for (let index = 0;; index++) {
        const head = await sock.head();
        if (head === undefined) return;
        const line = head.slice(0, head.indexOf("\r\n"));
        requests.push(line);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        await script(sock, { head, line, length, connection, index });
        if (sock.closed) return;
      }
    } finally {
      sock.close();
      sockets.delete(sock);
      ended++;
    }
  };
  const accepting = (async () => {
    for await (const conn of listener) {
      const sock = new RawSocket(conn);
      sockets.add(sock);
      const task = serve(sock, connections++);
      tasks.add(task);
      task.finally(() => tasks.delete(task));
    }
  })().catch(() => {});
  const { port } = listener.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    requests,
    get ended() {
      return ended;
    },
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const sock of sockets) sock.close();
      await accepting;
      await Promise.allSettled([...tasks]);
    },
  };
}

/** The two transports of the API client. */
export const CLIENTS = ["http1", "fetch"] as const;

/** An API client of a raw server over one transport, with the given settings; close its vault. */
export function clientOf(
  server: RawServer,
  httpClient: "http1" | "fetch",
  settings: ClientSettings = {},
): { api: ApiClient; vault: Vault } {
  const vault = new Vault({ raw: new ConnectionInfo({ server: server.url }) });
  const api = new ApiClient({ vault, settings, httpClient });
  return { api, vault };
}

/** A JSON answer with a Content-Length. */
export function jsonAnswer(body: unknown, status = "200 OK", extra = ""): string {
  const text = JSON.stringify(body);
  return `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\n${extra}` +
    `content-length: ${enc.encode(text).length}\r\n\r\n${text}`;
}

/**
 * Waits until `check()` holds, for 10 s at most (then fails, saying what it waited for).
 *
 * @param check The condition.
 * @param what What it waits for, for the failure.
 */
export async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within 10 s: ${what}`);
    await delay(5);
  }
}

/** Waits until `ms` passed. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
