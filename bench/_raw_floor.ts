/**
 * The runtime's floor under the operator benchmark's floor (`_floor_operator.ts`): the same HTTP
 * requests and the same watch, per object, written as bytes on `Deno.connect` sockets and read
 * back with the least parsing an operator can do — the head's `content-length`, the watch's
 * chunks, one `JSON.parse` per watch line and per answer (an operator reads what it is told) —
 * with no client: no request objects, no header maps, no timeouts, no retries, no patch
 * splitting, no settings. What it costs per object is what Deno (its event loop, its sockets, V8
 * entering and leaving JavaScript for every read) and the kernel cost at the least for this
 * traffic; the floor's CPU per object beyond it is our client's.
 *
 * Per object, the floor's requests, in its order: the finalizer (a JSON patch guarded by the
 * resourceVersion); the create handler's result, as two merge patches (the object's annotation,
 * then its `/status`: the client splits a patch so); with `events`, the two Event POSTs at once;
 * when the object is being deleted, the finalizer's removal. Plain HTTP only, and only to a
 * server that frames its answers by `content-length` and its watch by chunks (the embedded API
 * server does): it is a probe, not a client.
 *
 * It speaks the line protocol of `_bench_operator.ts` (`ready`, `report`, `stopped`), so that
 * `_operator_process.ts` drives it as the others (sides `raw` and `rawq` of `pair_probe.ts` and
 * `trickle_probe.ts`).
 *
 * Usage: `deno run -A bench/_raw_floor.ts <kubeconfig> [options as JSON]` (`{"events": true}`,
 * `{"namespace": "ns"}`).
 *
 * @module
 */

import * as kopf from "../mod.ts";
import { answerReports, type ChildOptions } from "./_bench_operator.ts";
import {
  finalizerPatch,
  floorAction,
  floorEvent,
  floorRef,
  floorReport,
  LAST_HANDLED,
  releasePatch,
} from "./_floor_operator.ts";
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CRLF2 = encoder.encode("\r\n\r\n");

/** Where `needle` starts in `bytes[from..to]`, or -1. */
function find(bytes: Uint8Array, needle: Uint8Array, from: number, to: number): number {
  outer: for (let i = from; i + needle.length <= to; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** One keep-alive connection: a request at a time, answers framed by `content-length`. */
class Socket {
  #buf = new Uint8Array(64 * 1024);
  #start = 0;
  #end = 0;
  constructor(readonly conn: Deno.TcpConn) {}

  /** Reads more bytes into the buffer; false at the end. */
  async fill(): Promise<boolean> {
    if (this.#start === this.#end) this.#start = this.#end = 0;
    if (this.#end === this.#buf.length) {
      const bigger = new Uint8Array(this.#buf.length * 2);
      bigger.set(this.#buf.subarray(this.#start, this.#end));
      this.#end -= this.#start;
      this.#start = 0;
      this.#buf = bigger;
    }
    const n = await this.conn.read(this.#buf.subarray(this.#end));
    if (n === null) return false;
    this.#end += n;
    return true;
  }

  /** The next head: its status and its lower-cased text. */
  async head(): Promise<{ status: number; text: string }> {
    let at;
    while ((at = find(this.#buf, CRLF2, this.#start, this.#end)) < 0) {
      if (!(await this.fill())) throw new Error("the server closed the connection");
    }
    const text = decoder.decode(this.#buf.subarray(this.#start, at)).toLowerCase();
    this.#start = at + 4;
    return { status: Number(text.slice(9, 12)), text };
  }

  /** `n` bytes of body, as text. */
  async take(n: number): Promise<string> {
    while (this.#end - this.#start < n) {
      if (!(await this.fill())) throw new Error("the server closed the connection");
    }
    const text = decoder.decode(this.#buf.subarray(this.#start, this.#start + n));
    this.#start += n;
    return text;
  }

  /** A request's answer: its status and its body (parsed if `parse`, else its text). */
  async request(bytes: Uint8Array, parse: boolean): Promise<{ status: number; body: unknown }> {
    for (let written = 0; written < bytes.length;) {
      written += await this.conn.write(bytes.subarray(written));
    }
    const { status, text } = await this.head();
    const length = /content-length: *(\d+)/.exec(text);
    if (!length) throw new Error(`no content-length in an answer: ${text}`);
    const body = await this.take(Number(length[1]));
    return { status, body: parse ? JSON.parse(body) : body };
  }

  /** The watch's lines, as they come (chunked). */
  async *lines(): AsyncGenerator<string> {
    let pending = "";
    for (;;) {
      const size = await this.#chunkSize();
      if (size === 0) return;
      pending += await this.take(size);
      await this.take(2); // the chunk's CRLF
      for (let nl; (nl = pending.indexOf("\n")) >= 0;) {
        yield pending.slice(0, nl);
        pending = pending.slice(nl + 1);
      }
    }
  }

  async #chunkSize(): Promise<number> {
    for (;;) {
      for (let i = this.#start; i + 1 < this.#end; i++) {
        if (this.#buf[i] === 13 && this.#buf[i + 1] === 10) {
          const line = decoder.decode(this.#buf.subarray(this.#start, i));
          this.#start = i + 2;
          return parseInt(line, 16);
        }
      }
      if (!(await this.fill())) return 0;
    }
  }
}

if (import.meta.main) {
  const [kubeconfig, json = "{}"] = Deno.args;
  if (!kubeconfig) throw new Error("usage: _raw_floor.ts <kubeconfig> [options as JSON]");
  const options = JSON.parse(json) as ChildOptions;
  const posting = !!options.events;
  const out = (line: Record<string, unknown>) =>
    Deno.stdout.writeSync(encoder.encode(JSON.stringify(line) + "\n"));

  const login = await kopf.loginWithKubeconfig({ path: kubeconfig });
  if (!login) throw new Error(`no credentials in ${kubeconfig}`);
  const url = new URL(login.server);
  if (url.protocol !== "http:") throw new Error(`_raw_floor.ts speaks plain HTTP only: ${url}`);
  const auth = login.token ? `authorization: Bearer ${login.token}\r\n` : "";
  const host = `host: ${url.host}\r\n${auth}`;
  const connect = async () => {
    const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port || 80) });
    conn.setNoDelay(true);
    return new Socket(conn);
  };
  const idle: Socket[] = [];
  /**
   * A request on an idle connection, or a new one; its answer's body (an error if not 2xx),
   * parsed unless `parse` is false (the client keeps a split patch's main answer as text).
   */
  const send = async (method: string, path: string, type: string, body: string, parse = true) => {
    const head = `${method} ${path} HTTP/1.1\r\n${host}accept: application/json\r\n` +
      `content-type: ${type}\r\ncontent-length: ${encoder.encode(body).length}\r\n\r\n`;
    const socket = idle.pop() ?? await connect();
    const answer = await socket.request(encoder.encode(head + body), parse);
    idle.push(socket);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status}`);
    return answer.body as kopf.KubeObject;
  };

  const collection = (namespace: string | undefined, plural: string, group = "kopf.dev") =>
    `/apis/${group}/v1/${namespace ? `namespaces/${namespace}/` : ""}${plural}`;
  const busy = new Set<string>();
  let failures = 0;
  const create = async (object: kopf.KubeObject) => {
    const { name, namespace, resourceVersion } = object.metadata;
    const path = `${collection(namespace, "kopfexamples")}/${name}`;
    const finalized = await send(
      "PATCH",
      path,
      "application/json-patch+json",
      JSON.stringify(finalizerPatch(resourceVersion)),
    );
    const essence = JSON.stringify({ spec: finalized.spec }) + "\n";
    const merge = "application/merge-patch+json";
    const annotation = { metadata: { annotations: { [LAST_HANDLED]: essence } } };
    await send("PATCH", path, merge, JSON.stringify(annotation), false);
    await send(
      "PATCH",
      `${path}/status`,
      merge,
      JSON.stringify({ status: { create_fn: { message: "created" } } }),
    );
    if (posting) {
      const ref = floorRef(object);
      await Promise.all([
        post(ref, "Handler 'create_fn' succeeded."),
        post(ref, "All handlers succeeded for creation."),
      ]);
    }
  };
  const post = (ref: Record<string, unknown>, message: string) =>
    send(
      "POST",
      `/api/v1/namespaces/${ref.namespace}/events`,
      "application/json",
      JSON.stringify(floorEvent(ref, message)),
    );
  const release = async (object: kopf.KubeObject) => {
    const { name, namespace, resourceVersion, finalizers = [] } = object.metadata;
    await send(
      "PATCH",
      `${collection(namespace, "kopfexamples")}/${name}`,
      "application/json-patch+json",
      JSON.stringify(releasePatch(resourceVersion, finalizers)),
    );
  };
  const run = (uid: string, work: Promise<void>) => {
    busy.add(uid);
    work.catch((e) => {
      failures++;
      console.error(`the raw floor's write failed: ${e}`);
    }).finally(() => busy.delete(uid));
  };

  answerReports(() => out({ ...floorReport("report", failures) }));
  const watch = await connect();
  const target = `${collection(options.namespace, "kopfexamples")}?watch=true`;
  await watch.conn.write(
    encoder.encode(`GET ${target} HTTP/1.1\r\n${host}accept: application/json\r\n\r\n`),
  );
  const { status } = await watch.head();
  if (status !== 200) throw new Error(`the watch failed: ${status}`);
  Deno.addSignalListener("SIGTERM", () => {
    out({ ...floorReport("stopped", failures) });
    Deno.exit(0);
  });
  out({ event: "ready" });
  for await (const line of watch.lines()) {
    const { type, object } = JSON.parse(line) as { type: string; object: kopf.KubeObject };
    const uid = object.metadata.uid!;
    if (busy.has(uid)) continue;
    const action = floorAction(type, object);
    if (action) run(uid, action === "create" ? create(object) : release(object));
  }
}
