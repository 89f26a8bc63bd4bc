/**
 * The fake ngrok agent of the tunnel tests, installed as an executable in a
 * temporary directory (a shell wrapper that runs `_fake_ngrok.ts` with this
 * Deno), and what it recorded.
 *
 * @module
 */

/** A fake agent: its executable, what it recorded, and its directory (removed by dispose). */
export interface FakeNgrok extends AsyncDisposable {
  /** The executable to give as `binary`. */
  binary: string;
  /** The temporary directory. */
  dir: string;
  /** The CA (PEM) that signed the public side's certificate (https mode). */
  ca?: string;
  /** What the agent recorded so far, one entry per event. */
  events(): Promise<Record<string, unknown>[]>;
}

const FAKE = new URL("./_fake_ngrok.ts", import.meta.url).pathname;

/**
 * Installs a fake agent.
 *
 * @param mode How it behaves (see `_fake_ngrok.ts`).
 * @returns The agent.
 */
export async function fakeNgrok(mode: "http" | "https" | "fail" | "silent"): Promise<FakeNgrok> {
  const dir = await Deno.makeTempDir({ prefix: "fake-ngrok-" });
  const record = `${dir}/record.jsonl`;
  await Deno.writeTextFile(record, "");
  const config: Record<string, unknown> = { mode, record };
  let ca: string | undefined;
  if (mode === "https") {
    const { makeServerCertificates } = await import("../../src/kits/_certificates.ts");
    const made = await makeServerCertificates(["127.0.0.1", "localhost"]);
    await Deno.writeTextFile(`${dir}/cert.pem`, made.serverCert);
    await Deno.writeTextFile(`${dir}/key.pem`, made.serverKey);
    config.cert = `${dir}/cert.pem`;
    config.key = `${dir}/key.pem`;
    ca = made.caCert;
  }
  await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(config));
  const binary = `${dir}/ngrok`;
  await Deno.writeTextFile(
    binary,
    `#!/bin/sh\nexec '${Deno.execPath()}' run -A --quiet '${FAKE}' '${dir}/config.json' "$@"\n`,
  );
  await Deno.chmod(binary, 0o755);
  return {
    binary,
    dir,
    ...(ca ? { ca } : {}),
    async events() {
      const text = await Deno.readTextFile(record);
      return text.split("\n").filter((l) => l).map((l) => JSON.parse(l));
    },
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true });
    },
  };
}
