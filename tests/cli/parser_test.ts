/**
 * The command-line parser (`src/cli/_parser.ts`) and the help (`src/cli/_help.ts`), in process:
 * values given as `--x=v`, `--x v`, `-xv`, `-x v`; combined short flags; repeatable options;
 * optional values; negations; choices; `--`; unknown options and commands (with suggestions);
 * missing values; help and version; the order in which bad input is reported. The `kopf`
 * program's own table (`_commands.ts`) for the help's layout.
 */

import assert from "node:assert/strict";
import {
  type FreezeValues,
  PROGRAM,
  type ResumeValues,
  type RunValues,
} from "../../src/cli/_commands.ts";
import { helpText } from "../../src/cli/_help.ts";
import {
  type CommandSpec,
  InvalidValueError,
  option,
  type OptionValues,
  parseCommandLine,
  ParseError,
  type ProgramSpec,
} from "../../src/cli/_parser.ts";

const collect = (value: string, previous: unknown) => [
  ...((previous as string[] | undefined) ?? []),
  value,
];
const whole = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new InvalidValueError("use a whole number.");
  return n;
};

const RUN: CommandSpec = {
  name: "run",
  description: "run the handlers of the given files",
  paths: "files with handlers",
  options: [
    option("-n, --namespace <pattern>", "a namespace (repeatable)", { parse: collect }),
    option("-A, --all-namespaces", "all namespaces"),
    option("-v, --verbose", "more"),
    option("-p, --priority <n>", "the priority", { parse: whole }),
    option("-P, --peering <name>", "the peering"),
    option("--shards [group]", "sharding, in this group"),
    option("--log-format <format>", "the format", {
      choices: ["plain", "full"],
      default: "full",
    }),
    option("--log-prefix", "prefix lines"),
    option("--no-log-prefix", "do not prefix lines"),
  ],
};

const FREEZE: CommandSpec = {
  name: "freeze",
  description: "freeze",
  options: [
    option("-t, --lifetime <seconds>", "how long", { parse: whole, mandatory: true }),
    option("-v, --verbose", "more"),
  ],
};

const PROG: ProgramSpec = { name: "demo", description: "a demo", commands: [RUN, FREEZE] };

/** The paths and values of a command line that runs `run` or `freeze`. */
function parsed(...args: string[]): { command: string; paths: string[]; options: OptionValues } {
  const outcome = parseCommandLine(PROG, args);
  assert.equal(outcome.kind, "command", JSON.stringify(outcome));
  if (outcome.kind !== "command") throw new Error("unreachable");
  return { command: outcome.command.name, paths: outcome.paths, options: outcome.options };
}

/** The message of the ParseError of a command line, and whether it points at the help. */
function refused(...args: string[]): [string, boolean] {
  try {
    parseCommandLine(PROG, args);
  } catch (e) {
    if (e instanceof ParseError) return [e.message, e.seeHelp];
    throw e;
  }
  assert.fail(`not refused: ${args.join(" ")}`);
}

Deno.test("parseCommandLine(): a value as --x=v, --x v, -x v and -xv; defaults kept", () => {
  for (
    const args of [
      ["--peering=p", "--priority=5"],
      ["--peering", "p", "--priority", "5"],
      ["-P", "p", "-p", "5"],
      ["-Pp", "-p5"],
    ]
  ) {
    assert.deepEqual(parsed("run", ...args).options, {
      peering: "p",
      priority: 5,
      logFormat: "full",
    }, args.join(" "));
  }
  // A required value is the next argument unless it looks like an option (a negative number
  // does not); one that starts with '-' is given as `--x=-v` or `-x-v`.
  assert.deepEqual(refused("run", "-P", "-A"), [
    "-P/--peering needs a value, but '-A' is an option: give the value " +
    "(one that starts with '-' as --peering=-A)",
    true,
  ]);
  assert.deepEqual(parsed("run", "--peering=-A").options.peering, "-A");
  assert.deepEqual(parsed("run", "-P-A").options.peering, "-A");
  assert.deepEqual(parsed("run", "-p", "-5").options.priority, -5);
  // A value is never empty: `--x=` and `-x ''` are refused, for required and optional values.
  assert.deepEqual(refused("run", "--peering="), [
    "-P/--peering is given an empty value: give one (--peering=NAME), or leave --peering out",
    false,
  ]);
  assert.deepEqual(refused("run", "-P", "")[0], refused("run", "--peering=")[0]);
  assert.deepEqual(refused("run", "--shards="), [
    "--shards is given an empty value: give one (--shards=GROUP), or --shards alone",
    false,
  ]);
});

Deno.test("parseCommandLine(): short flags combine, the last one may take the rest as a value", () => {
  assert.deepEqual(parsed("run", "-Av").options, {
    allNamespaces: true,
    verbose: true,
    logFormat: "full",
  });
  assert.deepEqual(parsed("run", "-Avnfoo").options, {
    allNamespaces: true,
    verbose: true,
    namespace: ["foo"],
    logFormat: "full",
  });
  assert.deepEqual(parsed("run", "-vn", "foo").options.namespace, ["foo"]);
  assert.deepEqual(refused("run", "-Ax"), ["unknown option '-x'", true]);
});

Deno.test("parseCommandLine(): a repeatable option collects its values; another keeps the last", () => {
  const { options } = parsed("run", "-n", "a", "--namespace=b", "-nc", "-P", "x", "--peering", "y");
  assert.deepEqual(options.namespace, ["a", "b", "c"]);
  assert.equal(options.peering, "y");
});

Deno.test("parseCommandLine(): options anywhere among the paths; `--` ends the options", () => {
  assert.deepEqual(parsed("run", "a.ts", "-A", "b.ts").paths, ["a.ts", "b.ts"]);
  const after = parsed("run", "-v", "--", "-A", "--help", "c.ts");
  assert.deepEqual(after.paths, ["-A", "--help", "c.ts"]);
  assert.deepEqual(after.options, { verbose: true, logFormat: "full" });
  // A negative number is a path, not an option.
  assert.deepEqual(parsed("run", "-5").paths, ["-5"]);
  // `-` alone is a path (stdin, by convention).
  assert.deepEqual(parsed("run", "-").paths, ["-"]);
});

Deno.test("parseCommandLine(): an optional value is taken unless the next argument is an option or a path", () => {
  assert.equal(parsed("run", "--shards").options.shards, true);
  assert.equal(parsed("run", "--shards", "g").options.shards, "g");
  assert.equal(parsed("run", "--shards=g").options.shards, "g");
  const before = parsed("run", "--shards", "-A");
  assert.equal(before.options.shards, true);
  assert.equal(before.options.allNamespaces, true);
  assert.equal(parsed("run", "--shards", "-5").options.shards, "-5");
  // A path after it stays a path, where it stands: the files load in the order given.
  for (const file of ["b.ts", "dir/b", "b.mjs", "..\\b.tsx"]) {
    const { paths, options } = parsed("run", "a.ts", "--shards", file, "c.ts");
    assert.deepEqual([paths, options.shards], [["a.ts", file, "c.ts"], true], file);
  }
  // Given with `=`, the value is the value, whatever it looks like.
  assert.deepEqual(parsed("run", "--shards=b.ts", "a.ts").options.shards, "b.ts");
  // A command without paths has no paths to leave it as: the value is taken.
  const noPaths: ProgramSpec = {
    ...PROG,
    commands: [{ name: "x", description: "x", options: [option("--shards [group]", "g")] }],
  };
  const outcome = parseCommandLine(noPaths, ["x", "--shards", "b.ts"]);
  assert.deepEqual(outcome.kind === "command" && outcome.options, { shards: "b.ts" });
});

Deno.test("parseCommandLine(): --no-x sets x to false; the last of --x and --no-x wins", () => {
  assert.equal(parsed("run").options.logPrefix, undefined);
  assert.equal(parsed("run", "--no-log-prefix").options.logPrefix, false);
  assert.equal(parsed("run", "--no-log-prefix", "--log-prefix").options.logPrefix, true);
  assert.equal(parsed("run", "--log-prefix", "--no-log-prefix").options.logPrefix, false);
});

Deno.test("parseCommandLine(): choices and parsers refuse a value with one line naming the flag", () => {
  assert.deepEqual(refused("run", "--log-format", "xml"), [
    "--log-format 'xml' is invalid: allowed choices are plain, full.",
    false,
  ]);
  assert.deepEqual(refused("run", "-p", "high"), [
    "-p/--priority 'high' is invalid: use a whole number.",
    false,
  ]);
  assert.equal(parsed("run", "--log-format=plain").options.logFormat, "plain");
});

Deno.test("parseCommandLine(): a parser's own failure (not an InvalidValueError) is not bad input", () => {
  const program: ProgramSpec = {
    name: "demo",
    description: "",
    commands: [{
      name: "x",
      description: "",
      options: [option("--y <y>", "", {
        parse: () => {
          throw new TypeError("a bug");
        },
      })],
    }],
  };
  assert.throws(() => parseCommandLine(program, ["x", "--y", "1"]), TypeError);
});

Deno.test("parseCommandLine(): unknown options, with the closest known ones", () => {
  assert.deepEqual(refused("run", "--bogus"), ["unknown option '--bogus'", true]);
  assert.deepEqual(refused("run", "--verbos"), [
    "unknown option '--verbos' (did you mean --verbose?)",
    true,
  ]);
  assert.deepEqual(refused("run", "--log-forfix"), [
    "unknown option '--log-forfix' (did you mean one of --log-format, --log-prefix?)",
    true,
  ]);
  // The program's own options are candidates too; a flag does not take a value.
  assert.deepEqual(refused("run", "--version=1"), [
    "unknown option '--version=1' (did you mean --version?)",
    true,
  ]);
  assert.deepEqual(refused("run", "--verbose=1"), [
    "unknown option '--verbose=1' (did you mean --verbose?)",
    true,
  ]);
  assert.deepEqual(refused("run", "-z"), ["unknown option '-z'", true]);
  assert.deepEqual(refused("run", "a.ts", "--bogus", "b.ts"), ["unknown option '--bogus'", true]);
  assert.deepEqual(refused("--bogus", "run"), ["unknown option '--bogus'", true]);
  assert.deepEqual(refused("-5"), ["unknown option '-5'", true]);
});

Deno.test("parseCommandLine(): unknown commands, with the closest known ones", () => {
  assert.deepEqual(refused("bogus"), ["unknown command 'bogus'", true]);
  assert.deepEqual(refused("rn"), ["unknown command 'rn' (did you mean run?)", true]);
  assert.deepEqual(refused("hepl"), ["unknown command 'hepl' (did you mean help?)", true]);
  assert.deepEqual(refused("frezee", "--bogus"), [
    "unknown command 'frezee' (did you mean freeze?)",
    true,
  ]);
});

Deno.test("parseCommandLine(): missing values, a missing mandatory option, too many arguments", () => {
  assert.deepEqual(refused("run", "-n"), ["-n/--namespace needs a value", true]);
  assert.deepEqual(refused("run", "-A", "--log-format"), ["--log-format needs a value", true]);
  assert.deepEqual(refused("freeze"), [
    "required option '-t, --lifetime <seconds>' not specified",
    false,
  ]);
  assert.deepEqual(refused("freeze", "-t", "5", "x"), [
    "too many arguments for 'freeze'. Expected 0 arguments but got 1",
    true,
  ]);
  assert.deepEqual(parsed("freeze", "--lifetime=5").options, { lifetime: 5 });
});

Deno.test("parseCommandLine(): bad input is reported in order: values at once, then mandatory, unknown, extra", () => {
  // A bad value is refused where it comes, even after an unknown option.
  assert.deepEqual(
    refused("run", "--bogus", "-p", "x")[0],
    "-p/--priority 'x' is invalid: use a whole number.",
  );
  // A missing mandatory option before an unknown option; an unknown option before extra paths.
  assert.deepEqual(
    refused("freeze", "--bogus")[0],
    "required option '-t, --lifetime <seconds>' not specified",
  );
  assert.deepEqual(refused("freeze", "-t", "1", "x", "--bogus")[0], "unknown option '--bogus'");
});

Deno.test("parseCommandLine(): the help, of the program or a command; with no command, on stderr", () => {
  const help = (...args: string[]) => parseCommandLine(PROG, args);
  assert.deepEqual(help(), { kind: "help", command: undefined, error: true });
  assert.deepEqual(help("--"), { kind: "help", command: undefined, error: true });
  for (const args of [["-h"], ["--help"], ["help"], ["--help", "run"], ["bogus", "--help"]]) {
    assert.deepEqual(
      help(...args),
      { kind: "help", command: undefined, error: false },
      args.join(" "),
    );
  }
  for (
    const args of [
      ["run", "-h"],
      ["run", "--help"],
      ["help", "run"],
      ["run", "--bogus", "--help"],
      ["run", "-Ah"],
    ]
  ) {
    assert.deepEqual(help(...args), { kind: "help", command: RUN, error: false }, args.join(" "));
  }
  // Before a missing mandatory option; not when it is an option's value or after `--`.
  assert.deepEqual(help("freeze", "--help"), { kind: "help", command: FREEZE, error: false });
  assert.deepEqual(refused("run", "-P", "--help")[0], refused("run", "--peering", "--help")[0]);
  assert.equal(parsed("run", "--peering=--help").options.peering, "--help");
  assert.deepEqual(parsed("run", "--", "-h").paths, ["-h"]);
  // `help` of an unknown command: the program's help, as an error.
  assert.deepEqual(help("help", "bogus"), { kind: "help", command: undefined, error: true });
});

Deno.test("parseCommandLine(): -V/--version, anywhere the program reads it", () => {
  for (
    const args of [["-V"], ["--version"], ["run", "-V"], ["run", "a.ts", "--version"], [
      "--bogus",
      "-V",
    ]]
  ) {
    assert.deepEqual(parseCommandLine(PROG, args), { kind: "version" }, args.join(" "));
  }
  assert.deepEqual(parsed("run", "--", "-V").paths, ["-V"]);
});

Deno.test("option(): flags written otherwise are a programming error", () => {
  assert.throws(() => option("--Namespace", "x"), /option flags '--Namespace'/);
  assert.throws(() => option("-n --namespace", "x"), /write them as/);
  assert.throws(() => option("-n", "x"), /write them as/);
});

Deno.test("helpText(): the program's help lists every command, and help; wrapped at 80 columns", () => {
  assert.equal(
    helpText(PROGRAM, undefined),
    `Usage: kopf [options] [command]

Kopf for Deno: Kubernetes operators in a few lines of TypeScript

Options:
  -V, --version                   output the version number
  -h, --help                      display help for command

Commands:
  apiserver [options]             run the embedded Kubernetes API server (no
                                  cluster needed)
  run [options] [paths...]        run an operator with the handlers of the given
                                  files or modules
  freeze [options]                pause the operators of a peering: a peer entry
                                  with a priority and a lifetime
  resume [options]                resume the operators of a peering: remove the
                                  entry written by 'kopf freeze'
  crd [options] [paths...]        print the CRDs of the typed resources
                                  (kopf.resource) of the given files
  rbac [options] [paths...]       print the Roles, ClusterRoles and bindings
                                  that the handlers of the given files need
  manifests [options] [paths...]  print a deployable set: service account, RBAC,
                                  CRDs and a Deployment of the operator
  bundle [options] [paths...]     bundle kopf run with the given files into a
                                  few minified files: an operator that starts
                                  leaner
  help [command]                  display help for command
`,
  );
});

Deno.test("helpText(): a command's help shows its paths, choices and defaults; every option of it", () => {
  const freeze = PROGRAM.commands.find((c) => c.name === "freeze")!;
  assert.equal(
    helpText(PROGRAM, freeze),
    `Usage: kopf freeze [options]

pause the operators of a peering: a peer entry with a priority and a lifetime

Options:
  -n, --namespace <pattern>  the KopfPeering in these namespaces
  -A, --all-namespaces       the ClusterKopfPeering (the default without -n)
  -i, --id <id>              the peer's identity (default: user@host, or
                             $POD_ID)
  -P, --peering <name>       the peering object's name (default: "default")
  -t, --lifetime <seconds>   how long the freeze lasts unless resumed
  -p, --priority <n>         the priority of the freeze (default: 100)
  --dev                      the priority 666
  -m, --message <text>       why (stored with the entry)
  -v, --verbose              log debug messages too
  -d, --debug                log debug messages too
  -q, --quiet                log warnings and errors only
  --log-format <format>      log line format (choices: "plain", "full", "json",
                             default: "full")
  -h, --help                 display help for command
`,
  );
  for (const command of PROGRAM.commands) {
    const text = helpText(PROGRAM, command);
    assert.match(text, new RegExp(`^Usage: kopf ${command.name} \\[options\\]`));
    for (const o of command.options) assert.ok(text.includes(`  ${o.flags}  `), o.flags);
    assert.equal(text.includes("Arguments:\n  paths "), command.paths !== undefined, command.name);
  }
});

Deno.test("helpText(): a wide terminal keeps descriptions on one line; a narrow one does not wrap them", () => {
  const run = PROGRAM.commands.find((c) => c.name === "run")!;
  const debug = `\n  -d, --debug${" ".repeat(23)}log debug messages and the API traffic ` +
    "(method, path, code, duration)\n";
  const wide = helpText(PROGRAM, run, 200);
  assert.ok(wide.includes(debug), wide);
  // 34 columns of terms leave fewer than 40 for the descriptions in 70: not wrapped.
  const narrow = helpText(PROGRAM, run, 70);
  assert.ok(narrow.includes(debug), narrow);
  // The description above the options wraps at the width (from 40 columns on).
  assert.match(
    helpText(PROGRAM, undefined, 50),
    /^Usage: kopf \[options\] \[command\]\n\nKopf for Deno: Kubernetes operators in a few lines\nof TypeScript\n/,
  );
});

/** Whether two types are the same (checked by the compiler: `deno check` fails otherwise). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;

Deno.test("ValuesOf: a command's values are typed from its options, as the parser stores them", () => {
  // A value's type: parse's result, a choice, the string; true alone for `[value]`; a flag's
  // boolean. Required where a default or `mandatory` makes it always there.
  const checks: [
    Equal<RunValues["namespace"], string[] | undefined>,
    Equal<RunValues["priority"], number | undefined>,
    Equal<RunValues["shards"], string | true | undefined>,
    Equal<RunValues["leaderElection"], string | true | undefined>,
    Equal<RunValues["allNamespaces"], boolean | undefined>,
    Equal<RunValues["logPrefix"], boolean | undefined>,
    Equal<RunValues["logFormat"], "plain" | "full" | "json">,
    Equal<RunValues["logRefkey"], string>,
    Equal<FreezeValues["lifetime"], number>,
    Equal<FreezeValues["priority"], number>,
    Equal<FreezeValues["peering"], string>,
    Equal<keyof ResumeValues & ("lifetime" | "priority"), never>,
  ] = [true, true, true, true, true, true, true, true, true, true, true, true];
  assert.ok(checks.every(Boolean));
  // And the values the parser gives are those: a run of the real program's table.
  const outcome = parseCommandLine(PROGRAM, ["run", "-p", "5", "--shards", "a.ts", "-n", "x"]);
  assert.equal(outcome.kind, "command");
  const values = (outcome as { options: OptionValues }).options as RunValues;
  assert.deepEqual(values, {
    priority: 5,
    shards: true,
    namespace: ["x"],
    logFormat: "full",
    logRefkey: "object",
  });
});
