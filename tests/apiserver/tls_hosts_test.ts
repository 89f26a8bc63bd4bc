/**
 * The embedded server's certificate names the address it listens on: with `--tls --host X`
 * (or a wildcard address, reached by one of the machine's own addresses) clients verify it.
 * Before, the certificate named localhost, 127.0.0.1 and ::1 only, so `--host 127.0.0.2` made
 * every client fail the host-name check.
 *
 * @module
 */

import { startApiServer } from "../../testing.ts";

async function getNamespaces(url: string, caCert: string, cert: string, key: string) {
  const client = Deno.createHttpClient({ caCerts: [caCert], cert, key });
  try {
    const response = await fetch(`${url}/api/v1/namespaces`, { client });
    await response.body?.cancel();
    return response.status;
  } finally {
    client.close();
  }
}

Deno.test("TLS: the certificate names a specific --host, and clients verify it there", async () => {
  await using api = await startApiServer({ tls: true, host: "127.0.0.2", port: 0 });
  const tls = api.tls!;
  if (!api.url.startsWith("https://127.0.0.2:")) throw new Error(`url ${api.url}`);
  const status = await getNamespaces(api.url, tls.caCert, tls.clientCert, tls.clientKey);
  if (status !== 200) throw new Error(`expected 200, got ${status}`);
});

/** A non-loopback IPv4 address of this machine, if it has one. */
const address = Deno.networkInterfaces().find((nic) =>
  nic.family === "IPv4" && !nic.address.startsWith("127.")
)?.address;

Deno.test({
  name: "TLS: on 0.0.0.0 the certificate names the machine's own addresses" +
    (address ? "" : " (not run: this machine has no non-loopback IPv4 address)"),
  ignore: !address,
  fn: async () => {
    await using api = await startApiServer({ tls: true, host: "0.0.0.0", port: 0 });
    const tls = api.tls!;
    const url = `https://${address}:${api.port}`;
    const status = await getNamespaces(url, tls.caCert, tls.clientCert, tls.clientKey);
    if (status !== 200) throw new Error(`expected 200, got ${status}`);
  },
});
