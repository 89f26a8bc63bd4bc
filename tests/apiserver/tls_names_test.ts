/**
 * Names in the generated certificates are taken literally: the client's user
 * and group are written as UTF8String values (not parsed as RFC 4514 text,
 * where `#` would mean hex and `,` a new attribute), and IPv6 hosts in any
 * spelling become the right 16 address bytes.
 *
 * @module
 */

import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { generateCertificates } from "../../src/apiserver/shared/tls.ts";
import { serveTls, type TlsRequestInfo } from "../../src/apiserver/serving/tls_listener.ts";

Deno.test("`generateCertificates()` keeps a user and group with #, commas and quotes literal", async () => {
  const user = '#alice, "the admin"\\';
  const group = "team=a,b";
  const tls = await generateCertificates({ clientCommonName: user, clientOrganization: group });
  const server = await serveTls({
    cert: tls.serverCert,
    key: tls.serverKey,
    ca: tls.caCert,
    handler: (_req, info) => Response.json(info),
  });
  const client = Deno.createHttpClient({
    caCerts: [tls.caCert],
    cert: tls.clientCert,
    key: tls.clientKey,
  });
  try {
    const response = await fetch(`https://127.0.0.1:${server.port}/`, { client });
    const info = await response.json() as TlsRequestInfo;
    assert.deepEqual(info.clientCertificate, { commonName: user, organizations: [group] });
  } finally {
    client.close();
    await server.shutdown();
  }
});

Deno.test("`generateCertificates()` encodes IPv6 hosts with brackets or an embedded IPv4", async () => {
  const tls = await generateCertificates({ hosts: ["[fd00::7]", "::ffff:10.0.0.1", "kopf.test"] });
  // node:crypto's reader (Deno's own, not @peculiar/x509) decodes the 16 address bytes back.
  const sans = new X509Certificate(tls.serverCert).subjectAltName?.split(", ");
  assert.deepEqual(sans, [
    "DNS:localhost",
    "IP Address:127.0.0.1",
    "IP Address:::1",
    "IP Address:fd00::7",
    "IP Address:::ffff:10.0.0.1",
    "DNS:kopf.test",
  ]);
});
