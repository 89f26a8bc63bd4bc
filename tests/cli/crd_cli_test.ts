import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

async function kopf(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}cli.ts`, ...args],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("kopf crd: files without typed resources print nothing and say what to do, exit 1", async () => {
  const out = await kopf("crd", `${ROOT}examples/01-minimal/example.ts`);
  assert.equal(out.code, 1);
  assert.equal(out.stdout, "");
  assert.equal(
    out.stderr.trim(),
    "kopf: no typed resources: register handlers on a kopf.resource({...}) to get its CRD",
  );
});

Deno.test("kopf crd: a missing file is one line, exit 1", async () => {
  const out = await kopf("crd", "no-such-file.ts");
  assert.equal(out.code, 1);
  assert.match(out.stderr, /^kopf: cannot load handlers from no-such-file\.ts: no such file/);
});
