/**
 * The values of `kopf`'s options at the real command line, in process (`cli()`): a handlers file
 * right after an option with an optional value (`--shards`, `--leader-election`) is a path in
 * its place, so the files load in the order given; bad values are one line naming the flag and
 * exit code 2 — an option where a value should be (`-n --help`), an empty value (`--peering=`),
 * an integer that is not plain decimal digits (`-p 0x10`, `1e3`, `" 7 "`).
 */

import assert from "node:assert/strict";
import { cli } from "../../cli.ts";

/** The exit code of `kopf <args>` and its lines on stderr (caught, not printed). */
async function kopf(...args: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  return { code: await cli(args, { writeError: (line) => lines.push(line) }), lines };
}

type Loaded = { kopfOptionValuesOrder?: string[] };

Deno.test("kopf run a.ts --shards b.ts (or --leader-election b.ts): the files load in the order given", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-option-values-" });
  const global = globalThis as Loaded;
  try {
    for (const name of ["a", "b", "c"]) {
      await Deno.writeTextFile(
        `${dir}/${name}.ts`,
        `((globalThis as { kopfOptionValuesOrder?: string[] }).kopfOptionValuesOrder ??= []).push("${name}");\n`,
      );
    }
    for (const flag of ["--shards", "--leader-election"]) {
      global.kopfOptionValuesOrder = [];
      // No cluster: the files load, then the login fails (thrown to us, not printed).
      await assert.rejects(
        cli(["run", "-A", `${dir}/a.ts`, flag, `${dir}/b.ts`, `${dir}/c.ts`], {
          kubeconfig: `${dir}/absent.kubeconfig`,
          signal: AbortSignal.timeout(60_000),
          write: () => {},
          throwErrors: true,
        }),
      );
      assert.deepEqual(global.kopfOptionValuesOrder, ["a", "b", "c"], flag);
    }
  } finally {
    delete global.kopfOptionValuesOrder;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kopf: a bad option value is one line naming the flag and the fix, exit code 2", async () => {
  const cases: Array<[string[], string]> = [
    [
      ["run", "-n", "--help"],
      "kopf: -n/--namespace needs a value, but '--help' is an option: give the value " +
      "(one that starts with '-' as --namespace=--help): see 'kopf run --help'",
    ],
    [
      ["run", "-A", "--peering", "--standalone"],
      "kopf: -P/--peering needs a value, but '--standalone' is an option: give the value " +
      "(one that starts with '-' as --peering=--standalone): see 'kopf run --help'",
    ],
    [
      ["run", "-A", "--peering=", "a.ts"],
      "kopf: -P/--peering is given an empty value: give one (--peering=NAME), " +
      "or leave --peering out",
    ],
    [
      ["run", "-A", "--leader-election=", "a.ts"],
      "kopf: --leader-election is given an empty value: give one (--leader-election=NAME), " +
      "or --leader-election alone",
    ],
    [
      ["rbac", "-A", "--leader-election=", "a.ts"],
      "kopf: --leader-election is given an empty value: give one (--leader-election=NAME), " +
      "or --leader-election alone",
    ],
    [
      ["run", "-A", "--shards=", "a.ts"],
      "kopf: --shards is given an empty value: give one (--shards=GROUP), or --shards alone",
    ],
    ...["0x10", "1e3", " 7 ", "1.0", "+5", ""].map((n): [string[], string] => [
      ["run", "-A", "-p", n, "a.ts"],
      n
        ? `kopf: -p/--priority '${n}' is invalid: use a whole number in plain decimal digits, e.g. 100.`
        : "kopf: -p/--priority is given an empty value: give one (--priority=N), " +
          "or leave --priority out",
    ]),
    [
      ["freeze", "-A", "-t", "60", "--priority=0x10"],
      "kopf: -p/--priority '0x10' is invalid: use a whole number in plain decimal digits, e.g. 100.",
    ],
    [
      ["freeze", "-A", "--lifetime", "1e3"],
      "kopf: -t/--lifetime '1e3' is invalid: use a whole number of seconds in plain decimal " +
      "digits, e.g. 60.",
    ],
    [
      ["apiserver", "--port", "0x10"],
      "kopf: --port '0x10' is invalid: use a port number from 0 to 65535 in decimal digits " +
      "(0 picks a free port).",
    ],
    [
      ["manifests", "--image", "x", "--replicas", " 2"],
      "kopf: --replicas ' 2' is invalid: use a whole number in plain decimal digits, e.g. 2.",
    ],
  ];
  for (const [args, line] of cases) {
    assert.deepEqual(await kopf(...args), { code: 2, lines: [line] }, JSON.stringify(args));
  }
  // A negative priority is a number, not an option.
  const parsed = await kopf("run", "-A", "-p", "-5", "--standalone", "--peering=x", "-q", "-v");
  assert.equal(parsed.code, 2);
  assert.match(parsed.lines[0]!, /^kopf: -q\/--quiet and -v\/--verbose contradict/);
});
