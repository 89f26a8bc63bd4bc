/**
 * `kopf run --shards[=GROUP]` at the door: a bad group name and `--shards` with
 * `--leader-election` are one line and exit code 2; a settings mistake found after the startup
 * handlers (the durations) is one line and exit code 1; `--shards handlers.ts` takes the file
 * as a file, not as a group.
 */

import assert from "node:assert/strict";
import { cluster, ROOT } from "../reactor/_setup.ts";

async function kopf(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", `${ROOT}deno.json`, `${ROOT}cli.ts`, ...args],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("kopf run --shards: bad input is one line (exit 2)", async () => {
  const cases: Array<[string[], string]> = [
    [
      ["run", "--shards", "Orders!", "x.ts"],
      "kopf: --shards 'Orders!' is invalid: use lowercase letters, digits and '-' (at most 40), " +
      "starting and ending with a letter or digit.",
    ],
    [
      ["run", "--shards", "--leader-election", "x.ts"],
      "kopf: Sharding and leader election exclude each other (all replicas active vs. one): " +
      "use --shards or --leader-election, not both",
    ],
  ];
  for (const [args, line] of cases) {
    const { code, stderr } = await kopf(args);
    assert.equal(stderr.trim(), line, args.join(" "));
    assert.equal(code, 2);
  }
});

Deno.test("kopf run --shards handlers.ts: the file is a file; durations that do not fit are one line (exit 1)", async () => {
  await using c = await cluster();
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/handlers.ts`;
    await Deno.writeTextFile(
      file,
      `import * as kopf from "${ROOT}mod.ts";
kopf.on.startup(({ settings }) => { settings.sharding.renewPeriod = 20; });
kopf.on.create("kopfexamples", () => {});
`,
    );
    const { code, stderr } = await kopf(["run", "-A", "--shards", file], {
      KUBECONFIG: c.api.kubeconfig.path,
    });
    assert.equal(
      stderr.trim().split("\n").at(-1),
      "kopf: settings.sharding.renewDeadline (10s) must be greater than renewPeriod (20s).",
    );
    assert.equal(code, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
