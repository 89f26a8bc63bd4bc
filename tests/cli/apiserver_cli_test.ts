import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url).pathname;

function kopf(args: string[], permissions = ["-A"]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, `--config=${root}deno.json`, `${root}cli.ts`, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
}

async function finish(
  child: Deno.ChildProcess,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("`kopf apiserver` prints its URL and KUBECONFIG line, serves, and stops cleanly on SIGTERM", async () => {
  const dir = await Deno.makeTempDir();
  const child = kopf(["apiserver", "--port", "0", "--kubeconfig", `${dir}/kc`]);
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("export KUBECONFIG=")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  const url = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1];
  assert.ok(url, text);
  assert.match(text, new RegExp(`export KUBECONFIG=${dir}/kc`));
  const kc = await Deno.readTextFile(`${dir}/kc`);
  assert.match(kc, new RegExp(`server: ${url}`));
  assert.match(kc, /current-context: kopf-embedded/);
  const ns = await (await fetch(`${url}/api/v1/namespaces/default`)).json();
  assert.equal(ns.metadata.name, "default");
  child.kill("SIGTERM");
  while (!(await reader.read()).done) { /* drain */ }
  const status = await child.status;
  await child.stderr.cancel();
  assert.equal(status.code, 0);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("`kopf apiserver --data-dir` keeps objects across restarts", async () => {
  const dir = await Deno.makeTempDir();
  for (const round of [1, 2]) {
    const child = kopf([
      "apiserver",
      "--port",
      "0",
      "--kubeconfig",
      `${dir}/kc`,
      "--data-dir",
      `${dir}/data`,
    ]);
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("export KUBECONFIG=")) text += (await reader.read()).value ?? "";
    const url = /listening at (\S+)/.exec(text)![1];
    if (round === 1) {
      const res = await fetch(`${url}/api/v1/namespaces/default/configmaps`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ metadata: { name: "kept" }, data: { round: "1" } }),
      });
      assert.equal(res.status, 201);
      await res.body?.cancel();
    } else {
      const cm = await (await fetch(`${url}/api/v1/namespaces/default/configmaps/kept`)).json();
      assert.deepEqual(cm.data, { round: "1" });
    }
    child.kill("SIGTERM");
    while (!(await reader.read()).done) { /* drain */ }
    await child.stderr.cancel();
    assert.equal((await child.status).code, 0);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("bad input to `kopf apiserver` is one line naming the problem, and a non-zero exit", async () => {
  const cases: Array<[string[], string[], RegExp]> = [
    [["apiserver", "--port", "abc"], ["-A"], /--port.*use a port number from 0 to 65535/],
    [["apiserver", "--faults", "{nope"], ["-A"], /--faults must be a JSON object/],
    [
      ["apiserver", "--faults", '{"rate500":3}'],
      ["-A"],
      /fault "rate500" must be a number between 0 and 1/,
    ],
    [
      ["apiserver", "--port", "0"],
      ["--allow-read"],
      /^kopf: missing Deno permission: needs net access to "127.0.0.1": run with --allow-net=127.0.0.1$/,
    ],
  ];
  for (const [args, perms, pattern] of cases) {
    const { code, stderr } = await finish(kopf(args, perms));
    assert.notEqual(code, 0, args.join(" "));
    const lines = stderr.trim().split("\n");
    assert.equal(lines.length, 1, `one line for ${args.join(" ")}: ${stderr}`);
    assert.match(lines[0]!, pattern);
  }
});

Deno.test("`kopf apiserver` on a busy port says so in one line", async () => {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const { code, stderr } = await finish(
    kopf(["apiserver", "--port", String(port), "--kubeconfig", "/dev/null"]),
  );
  assert.equal(code, 1);
  assert.equal(
    stderr.trim(),
    `kopf: 127.0.0.1:${port} is already in use: give kopf apiserver another --port ` +
      "(--port 0 picks a free one), or stop what listens there",
  );
});

Deno.test("`kopf apiserver --kubeconfig PATH` that cannot be written names the flag and the path, exit 1", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-apiserver-kc-" });
  try {
    await Deno.writeTextFile(`${dir}/a-file`, "");
    const cases: Array<[string, string]> = [
      [`${dir}/a-file/kubeconfig`, "Not a directory (os error 20)"],
      [`${dir}/missing/kubeconfig`, "No such file or directory (os error 2)"],
    ];
    for (const [path, why] of cases) {
      const { code, stderr } = await finish(
        kopf(["apiserver", "--port", "0", "--kubeconfig", path]),
      );
      assert.deepEqual([stderr.trim(), code], [
        `kopf: --kubeconfig ${path} cannot be written (${why}): give --kubeconfig a path in a ` +
        "directory that exists, e.g. --kubeconfig ./kopf.kubeconfig",
        1,
      ]);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("`kopf apiserver --webhook-client-cert/--webhook-client-key` presents the certificate to webhooks that require one", async () => {
  const { generateCertificates } = await import("../../src/apiserver/shared/tls.ts");
  const https = await import("node:https");
  const tls = await generateCertificates({ clientCommonName: "kube-apiserver" });
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/client.pem`, tls.clientCert);
  await Deno.writeTextFile(`${dir}/client.key`, tls.clientKey);
  // A validating webhook that requires a client certificate signed by the CA; it records the CN.
  const seen: string[] = [];
  const server = https.createServer({
    cert: tls.serverCert,
    key: tls.serverKey,
    ca: [tls.caCert],
    requestCert: true,
    rejectUnauthorized: true,
  }, (req, res) => {
    // deno-lint-ignore no-explicit-any
    const peer = (req.socket as any).getPeerCertificate();
    seen.push(String(peer?.subject?.CN));
    let body = "";
    req.on("data", (c) => body += c);
    req.on("end", () => {
      const uid = JSON.parse(body).request.uid;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: { uid, allowed: true },
      }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const child = kopf([
    "apiserver",
    "--port",
    "0",
    "--kubeconfig",
    `${dir}/kc`,
    "--webhook-client-cert",
    `${dir}/client.pem`,
    "--webhook-client-key",
    `${dir}/client.key`,
  ]);
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("export KUBECONFIG=")) text += (await reader.read()).value ?? "";
  const url = /listening at (\S+)/.exec(text)![1];
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  try {
    const config = await post(
      "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
      {
        metadata: { name: "needs-cert" },
        webhooks: [{
          name: "needs-cert.example.com",
          clientConfig: { url: `https://127.0.0.1:${port}/`, caBundle: btoa(tls.caCert) },
          rules: [{
            operations: ["CREATE"],
            apiGroups: [""],
            apiVersions: ["v1"],
            resources: ["configmaps"],
          }],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        }],
      },
    );
    assert.equal(config.status, 201, JSON.stringify(config.body));
    const made = await post("/api/v1/namespaces/default/configmaps", { metadata: { name: "x" } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.deepEqual(seen, ["kube-apiserver"]);
  } finally {
    child.kill("SIGTERM");
    while (!(await reader.read()).done) { /* drain */ }
    await child.stderr.cancel();
    await child.status;
    await new Promise((resolve) => server.close(resolve));
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("`kopf apiserver --webhook-client-cert` without its key, or not PEM: one line, exit 1", async () => {
  const alone = await finish(kopf(["apiserver", "--webhook-client-cert", "x.pem"]));
  assert.equal(alone.code, 1);
  assert.equal(
    alone.stderr.trim(),
    "kopf: --webhook-client-cert and --webhook-client-key go together: give both",
  );
  const notPem = await finish(
    kopf([
      "apiserver",
      "--webhook-client-cert",
      `${root}README.md`,
      "--webhook-client-key",
      `${root}README.md`,
    ]),
  );
  assert.equal(notPem.code, 1);
  assert.equal(
    notPem.stderr.trim(),
    `kopf: --webhook-client-cert: ${root}README.md is not a PEM file`,
  );
});

Deno.test("`kopf apiserver --authorization rbac`: the kubeconfig is the administrator's, no credentials is 401, a --token-auth-file user is judged by RBAC", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(
    `${dir}/tokens.csv`,
    '# token,user,uid,groups\nt-alice,alice,u1,"devs,ops"\n',
  );
  const child = kopf([
    "apiserver",
    "--port",
    "0",
    "--kubeconfig",
    `${dir}/kc`,
    "--authorization",
    "rbac",
    "--token-auth-file",
    `${dir}/tokens.csv`,
  ]);
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("Authorization: rbac")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  try {
    assert.match(
      text,
      /^Authorization: rbac \(that kubeconfig's token is the administrator's, in system:masters; kubectl sends tokens only over HTTPS: add --tls to use kubectl\)$/m,
    );
    const url = /listening at (\S+)/.exec(text)![1];
    const token = /token: (\S+)/.exec(await Deno.readTextFile(`${dir}/kc`))![1];
    const get = async (path: string, bearer?: string) => {
      const res = await fetch(`${url}${path}`, {
        headers: bearer ? { authorization: `Bearer ${bearer}` } : {},
      });
      return { status: res.status, body: await res.json() };
    };
    assert.equal((await get("/api/v1/namespaces")).status, 401);
    assert.equal((await get("/api/v1/namespaces", token)).status, 200);
    const refused = await get("/api/v1/namespaces", "t-alice");
    assert.equal(refused.status, 403);
    assert.equal(
      refused.body.message,
      'namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope',
    );
    assert.equal((await get("/apis", "t-alice")).status, 200);
  } finally {
    child.kill("SIGTERM");
    while (!(await reader.read()).done) { /* drain */ }
    await child.stderr.cancel();
    assert.equal((await child.status).code, 0);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("`kopf apiserver --authorization`/`--token-auth-file` mistakes: one line each", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const mode = await finish(kopf(["apiserver", "--authorization", "abac"]));
    assert.equal(mode.code, 2);
    assert.equal(
      mode.stderr.trim(),
      "kopf: --authorization 'abac' is invalid: allowed choices are rbac.",
    );
    const alone = await finish(kopf(["apiserver", "--token-auth-file", "x.csv"]));
    assert.equal(alone.code, 1);
    assert.equal(
      alone.stderr.trim(),
      "kopf: --token-auth-file needs --authorization rbac (without it, anyone may do anything)",
    );
    await Deno.writeTextFile(`${dir}/bad.csv`, "only-a-token\n");
    const bad = await finish(
      kopf(["apiserver", "--authorization", "rbac", "--token-auth-file", `${dir}/bad.csv`]),
    );
    assert.equal(bad.code, 1);
    assert.equal(
      bad.stderr.trim(),
      `kopf: --token-auth-file ${dir}/bad.csv: line 1: expected token,user,uid[,"group1,group2"], got "only-a-token"`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
