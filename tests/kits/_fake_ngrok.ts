/**
 * A fake ngrok agent for the tunnel tests (nothing can reach ngrok.com here):
 * `deno run -A _fake_ngrok.ts <config.json> http <target> --log=stdout
 * --log-format=json [--region=…]`, started through a shell wrapper that the
 * tests write (`fakeNgrok()` of `_ngrok.ts`), so the tunnel runs it as it runs
 * the real binary.
 *
 * Like the agent, it logs JSON lines ("starting web service" with its API's
 * address, "started tunnel" with the URL), serves `GET /api/tunnels` in the
 * agent's shape, and forwards what reaches its "public" endpoint (HTTP, or
 * HTTPS with the config's certificate) to the target. It records what it was
 * given and what it did (JSON lines in the config's `record` file): its
 * arguments, `NGROK_AUTHTOKEN`, each forwarded request, and SIGTERM.
 *
 * Modes: `http` and `https` (the public side), `fail` (an authentication
 * error, then exit 1), `silent` (logs and serves nothing: the start times out).
 *
 * @module
 */

interface FakeConfig {
  mode: "http" | "https" | "fail" | "silent";
  record: string;
  cert?: string;
  key?: string;
}

const [configPath, ...args] = Deno.args;
const config: FakeConfig = JSON.parse(await Deno.readTextFile(configPath!));
const record = (entry: Record<string, unknown>) =>
  Deno.writeTextFileSync(config.record, JSON.stringify(entry) + "\n", { append: true });
const log = (entry: Record<string, unknown>) =>
  console.log(JSON.stringify({ t: new Date().toISOString(), ...entry }));

record({ event: "started", args, token: Deno.env.get("NGROK_AUTHTOKEN") ?? null, pid: Deno.pid });
Deno.addSignalListener("SIGTERM", () => {
  record({ event: "stopped" });
  Deno.exit(0);
});

if (config.mode === "fail") {
  const err = "authentication failed: The authtoken you specified does not look like a proper " +
    "ngrok tunnel authtoken.";
  log({ lvl: "eror", msg: "session closing", obj: "tunnels.session", err });
  console.error(`ERROR:  ${err}`);
  Deno.exit(1);
}
if (config.mode === "silent") {
  await new Promise(() => {}); // until SIGTERM
}

const target = args[1]!;
const tls = config.mode === "https"
  ? { cert: await Deno.readTextFile(config.cert!), key: await Deno.readTextFile(config.key!) }
  : undefined;
const publicSide = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {}, ...tls },
  async (req) => {
    const url = new URL(req.url);
    record({ event: "forwarded", method: req.method, path: url.pathname });
    const upstream = await fetch(`${target}${url.pathname}${url.search}`, {
      method: req.method,
      headers: req.headers,
      body: req.body,
    });
    return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
  },
);
const publicUrl = `${tls ? "https" : "http"}://127.0.0.1:${publicSide.addr.port}`;
const tunnels = {
  tunnels: [{
    name: "command_line",
    ID: "c1a7e2f0",
    uri: "/api/tunnels/command_line",
    public_url: publicUrl,
    proto: tls ? "https" : "http",
    config: { addr: target, inspect: true },
    metrics: {},
  }],
  uri: "/api/tunnels",
};
const api = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  (req) =>
    new URL(req.url).pathname === "/api/tunnels"
      ? Response.json(tunnels)
      : new Response("not found", { status: 404 }),
);
log({ lvl: "info", msg: "no configuration paths supplied", obj: "config" });
log({ lvl: "info", msg: "starting web service", obj: "web", addr: `127.0.0.1:${api.addr.port}` });
log({ lvl: "info", msg: "tunnel session started", obj: "tunnels.session" });
log({
  lvl: "info",
  msg: "started tunnel",
  obj: "tunnels",
  name: "command_line",
  addr: target,
  url: publicUrl,
});
