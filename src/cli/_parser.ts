/**
 * The parser of the `kopf` command line: a program with commands, each with its options and,
 * for some, positional paths.
 *
 * Why our own: the usual npm parsers are CommonJS packages, and the first CommonJS package that
 * Deno loads brings in its CommonJS loader (with the parser, ≈1.7 MiB more for an idle
 * `kopf run`). `node:util`'s `parseArgs` has no options with an optional value
 * (`--shards[=GROUP]`), no commands with options of their own, no suggestions; so the rules are
 * written here, and they are the ones `kopf` has always had:
 *
 * - Options may come anywhere among the paths; `--` ends them (what follows is paths).
 * - `--opt=value`, `--opt value`, `-o value`, `-ovalue`; short flags combine (`-Av`).
 * - An option with a required value takes the next argument, unless that looks like an option
 *   (`-n --help` is refused: the value was forgotten); a value that starts with `-` is given as
 *   `--namespace=-x` or `-n-x` (a negative number needs neither: `-p -5`).
 * - One with an optional value (`--shards [group]`) takes the next argument only if it looks
 *   neither like an option nor, for a command that takes paths, like a path (`a.ts`, `dir/x`):
 *   `kopf run a.ts --shards b.ts` is sharding in the default group with the files a.ts, b.ts,
 *   in that order. `--shards=b.ts` gives the value whatever it looks like.
 * - A value is never empty: `--peering=` or `-n ''` is refused (an unset shell variable, most
 *   often), not taken as if the option were not given.
 * - A repeated option keeps the last value, unless its `parse` collects them (`-n a -n b`).
 * - The program reads its own options (`-V`) first, anywhere on the line; the command then
 *   reads the rest. `-h`/`--help` anywhere that is not an option's value shows the help.
 * - Bad input is a {@link ParseError}: one line, in the order the arguments come — a bad value
 *   or a missing value at once; then a missing mandatory option; then the first unknown option
 *   (with the closest known ones); then arguments the command does not take.
 *
 * @module
 */

import { suggestion } from "./_suggest.ts";

/** How an option takes a value: never (a flag), always (`<value>`), or optionally (`[value]`). */
export type Arity = "none" | "required" | "optional";

/** What an option's value converts to (and what `parse` gets back as `previous`). */
export type OptionValues = Record<string, unknown>;

/**
 * One option of a command, made by {@link option}. Its type keeps what its value will be: `K`,
 * the key (`namespace`, from the flags as written); `R`, whether it takes a value; `V`, what a
 * value converts to (`parse`'s result, a choice, or the string); `A`, whether the value is always
 * there (a default, or mandatory). {@link ValuesOf} makes a command's values from its options.
 */
export interface OptionSpec<
  K extends string = string,
  R extends Arity = Arity,
  V = unknown,
  A extends boolean = boolean,
> {
  /** The flags as the help and the messages show them: `-n, --namespace <pattern>`. */
  readonly flags: string;
  /** The help's description. */
  readonly description: string;
  /** The short flag (`-n`), if any. */
  readonly short: string | undefined;
  /** The long flag (`--namespace`). */
  readonly long: string;
  /** Whether it takes a value. */
  readonly arity: R;
  /** `--no-x`: sets `x` to false. */
  readonly negate: boolean;
  /** Its value's key: `--all-namespaces` → `allNamespaces`, `--no-log-prefix` → `logPrefix`. */
  readonly key: K;
  /** Converts and checks a value; throws {@link InvalidValueError}. Gets the value so far. */
  readonly parse: ((value: string, previous: unknown) => V) | undefined;
  /** The value when the option is not given (shown in the help). */
  readonly default: unknown;
  /** The values allowed (shown in the help). */
  readonly choices: readonly string[] | undefined;
  /** The option must be given. */
  readonly mandatory: boolean;
  /** Whether the value is always there (type only: a default, or mandatory). */
  readonly always?: A;
}

/** `--all-namespaces` → `allNamespaces`, as a type. */
type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}`
  : S;

/** The long flag's name of an option's flags: `-n, --no-log-prefix` → `no-log-prefix`. */
type LongName<F extends string> = F extends `${string}--${infer R}`
  ? R extends `${infer L} ${string}` ? L : R
  : never;

/** The key of an option's value, from its flags (as {@link option} makes it). */
export type KeyOf<F extends string> = string extends F ? string
  : LongName<F> extends `no-${infer N}` ? Camel<N>
  : Camel<LongName<F>>;

/** Whether an option takes a value, from its flags (as {@link option} makes it). */
export type ArityOf<F extends string> = string extends F ? Arity
  : F extends `${string}<${string}>` ? "required"
  : F extends `${string}[${string}]` ? "optional"
  : "none";

/** What one option stores: true/false for a flag; the value, or true alone, for `[value]`. */
type StoredOf<R extends Arity, V> = R extends "required" ? V : R extends "optional" ? V | true
: boolean;

/** The values that the options' keys name, those always there required, the others optional. */
type Always<S> = S extends OptionSpec<string, Arity, unknown, true> ? S : never;
type Maybe<S> = S extends OptionSpec<string, Arity, unknown, true> ? never : S;
type Stored<S> = S extends OptionSpec<string, infer R, infer V> ? StoredOf<R, V> : never;

/**
 * The values of a command's options, as the parser gives them, derived from the options
 * themselves: `ValuesOf<typeof RUN.options>` has `namespace?: string[]`, `logFormat: LogFormat`,
 * `shards?: string | true`, … — so a command's values are never copied by hand.
 */
export type ValuesOf<T extends readonly OptionSpec[]> =
  & { [S in Always<T[number]> as S["key"]]: Stored<S> }
  & { [S in Maybe<T[number]> as S["key"]]?: Stored<S> };

/** The type of an option's value: `parse`'s result, else one of the choices, else the string. */
type ValueOf<V, C> = [V] extends [never] ? [C] extends [never] ? string : C : V;

/** What {@link option} takes besides the flags and the description. */
export interface OptionExtras {
  /** Converts and checks a value; throws {@link InvalidValueError}. Gets the value so far. */
  parse?: (value: string, previous: unknown) => unknown;
  /** The value when the option is not given. */
  default?: unknown;
  /** The values allowed. */
  choices?: readonly string[];
  /** The option must be given. */
  mandatory?: boolean;
}

/** A command of the program. */
export interface CommandSpec {
  /** Its name: `run`. */
  readonly name: string;
  /** The help's description. */
  readonly description: string;
  /** The description of the positional `[paths...]`, for a command that takes paths. */
  readonly paths?: string;
  /** Its options, in the help's order. */
  readonly options: readonly OptionSpec[];
}

/** The program: its commands, and its own `-V, --version`. */
export interface ProgramSpec {
  /** Its name: `kopf`. */
  readonly name: string;
  /** The help's description. */
  readonly description: string;
  /** Its commands, in the help's order. */
  readonly commands: readonly CommandSpec[];
}

/** What the command line asks for. */
export type ParseOutcome =
  /** The help of the program (no command) or of a command; `error`: on stderr, exit code 1. */
  | { kind: "help"; command: CommandSpec | undefined; error: boolean }
  /** The version. */
  | { kind: "version" }
  /** A command to run, with its paths and its options' values (defaults included). */
  | { kind: "command"; command: CommandSpec; paths: string[]; options: OptionValues };

/** Bad input on the command line: one line; `seeHelp` when the help would tell what is right. */
export class ParseError extends Error {
  override name = "ParseError";
  /** Whether the line should point at the command's help. */
  readonly seeHelp: boolean;

  /**
   * @param message What is wrong.
   * @param seeHelp Whether the line should point at the command's help.
   */
  constructor(message: string, seeHelp: boolean) {
    super(message);
    this.seeHelp = seeHelp;
  }
}

/** Thrown by an option's `parse`: the value is not one the option takes; the message says why. */
export class InvalidValueError extends Error {
  override name = "InvalidValueError";
}

/** `-V, --version`: the program's own option. */
export const VERSION_OPTION: OptionSpec = option("-V, --version", "output the version number");

/** `-h, --help`: every command's (found anywhere, not read as an option). */
export const HELP_OPTION: OptionSpec = option("-h, --help", "display help for command");

/** The implicit `help [command]` of the program. */
export const HELP_COMMAND = "help";

/**
 * Makes an option from its flags: `-n, --namespace <pattern>` (a required value),
 * `--shards [group]` (an optional value), `-A, --all-namespaces` (a flag), `--no-log-prefix`
 * (a negation: sets `logPrefix` to false).
 *
 * @param flags The short flag (optional), the long flag, and the value's name in `<>` or `[]`.
 * @param description The help's description.
 * @param extras A parser, a default, choices, whether it is mandatory.
 * @returns The option.
 * @throws {Error} For flags that are not written so.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { option } from "./_parser.ts";
 * const o = option("-n, --namespace <pattern>", "serve this namespace");
 * assert.deepEqual([o.short, o.long, o.arity, o.key], ["-n", "--namespace", "required", "namespace"]);
 * ```
 */
export function option<
  const F extends string,
  V = never,
  const C extends string = never,
  D = undefined,
  M extends boolean = false,
>(
  flags: F,
  description: string,
  extras?: {
    parse?: (value: string, previous: unknown) => V;
    default?: D;
    choices?: readonly C[];
    mandatory?: M;
  },
): OptionSpec<
  KeyOf<F>,
  ArityOf<F>,
  // Not inferred from where the option goes (`satisfies CommandSpec` would make it `unknown`).
  NoInfer<ValueOf<V, C>>,
  NoInfer<M extends true ? true : undefined extends D ? false : true>
>;
export function option(flags: string, description: string, extras: OptionExtras = {}): OptionSpec {
  const m = /^(?:(-[A-Za-z]), )?(--[a-z][a-z0-9-]*)(?: (<[^>]+>|\[[^\]]+\]))?$/.exec(flags);
  if (!m) throw new Error(`option flags '${flags}': write them as '-s, --long <value>'`);
  const [, short, long, value] = m as unknown as [string, string | undefined, string, string?];
  const negate = long.startsWith("--no-");
  const name = long.slice(negate ? 5 : 2);
  return {
    flags,
    description,
    short,
    long,
    arity: value === undefined ? "none" : value.startsWith("<") ? "required" : "optional",
    negate,
    key: name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase()),
    parse: extras.parse,
    default: extras.default,
    choices: extras.choices,
    mandatory: extras.mandatory ?? false,
  };
}

/**
 * Parses the command line of a program.
 *
 * @param program The program and its commands.
 * @param args The arguments (without the program's name).
 * @returns The help or the version to show, or the command to run with its values.
 * @throws {ParseError} For bad input: one line naming the argument.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { option, parseCommandLine } from "./_parser.ts";
 * const run = {
 *   name: "run",
 *   description: "run it",
 *   paths: "files",
 *   options: [option("-n, --namespace <pattern>", "a namespace", {
 *     parse: (v, previous) => [...(previous as string[] | undefined ?? []), v],
 *   })],
 * };
 * const program = { name: "demo", description: "a demo", commands: [run] };
 * const parsed = parseCommandLine(program, ["run", "a.ts", "-n", "x", "--namespace=y"]);
 * assert.deepEqual(parsed, {
 *   kind: "command",
 *   command: run,
 *   paths: ["a.ts"],
 *   options: { namespace: ["x", "y"] },
 * });
 * ```
 */
export function parseCommandLine(program: ProgramSpec, args: readonly string[]): ParseOutcome {
  const top: OptionValues = {};
  const { operands, unknown } = scan([VERSION_OPTION], args, top, false, false);
  if (top.version) return { kind: "version" };
  const [first, ...rest] = operands;
  const command = program.commands.find((c) => c.name === first);
  if (command) return parseCommand(command, rest, unknown);
  if (first === HELP_COMMAND) {
    const name = rest[0];
    if (name === undefined) return { kind: "help", command: undefined, error: false };
    const target = program.commands.find((c) => c.name === name);
    return { kind: "help", command: target, error: !target };
  }
  if (!operands.length && !unknown.length) return { kind: "help", command: undefined, error: true };
  if (unknown.some(isHelp)) return { kind: "help", command: undefined, error: false };
  if (first !== undefined) {
    const names = [...program.commands.map((c) => c.name), HELP_COMMAND];
    throw new ParseError(`unknown command '${first}'${suggestion(first, names)}`, true);
  }
  throw unknownOption(unknown[0]!, [VERSION_OPTION, HELP_OPTION]);
}

/** The command's part: its options and paths, after the program has read its own. */
function parseCommand(command: CommandSpec, operands: string[], rest: string[]): ParseOutcome {
  const values: OptionValues = {};
  for (const o of command.options) {
    if (o.default !== undefined && !o.negate) values[o.key] = o.default;
  }
  // A lone `--no-x` (no `--x` beside it) makes `x` true by default.
  for (const o of command.options) {
    if (o.negate && !command.options.some((p) => !p.negate && p.key === o.key)) {
      values[o.key] = o.default ?? true;
    }
  }
  const scanned = scan(command.options, rest, values, true, command.paths !== undefined);
  if (scanned.unknown.some(isHelp)) return { kind: "help", command, error: false };
  for (const o of command.options) {
    if (o.mandatory && values[o.key] === undefined) {
      throw new ParseError(`required option '${o.flags}' not specified`, false);
    }
  }
  if (scanned.unknown.length) {
    throw unknownOption(scanned.unknown[0]!, [...command.options, HELP_OPTION, VERSION_OPTION]);
  }
  const paths = [...operands, ...scanned.operands];
  if (command.paths === undefined && paths.length) {
    throw new ParseError(
      `too many arguments for '${command.name}'. Expected 0 arguments but got ${paths.length}`,
      true,
    );
  }
  return { kind: "command", command, paths, options: values };
}

/**
 * Reads the known options of `args` into `values`, in order; returns the rest: operands, and
 * everything from the first unknown option on (which a command may know, or the help asks).
 */
function scan(
  options: readonly OptionSpec[],
  args: readonly string[],
  values: OptionValues,
  leaf: boolean,
  takesPaths: boolean,
): { operands: string[]; unknown: string[] } {
  const operands: string[] = [];
  const unknown: string[] = [];
  let dest = operands;
  const find = (flag: string) => options.find((o) => o.short === flag || o.long === flag);
  let i = 0;
  let group: string | undefined; // the rest of combined short flags: `-Av` → `-v`
  while (i < args.length || group !== undefined) {
    const arg = group ?? args[i++]!;
    group = undefined;
    if (arg === "--") {
      if (dest === unknown) dest.push(arg);
      dest.push(...args.slice(i));
      break;
    }
    if (looksLikeOption(arg)) {
      const known = find(arg);
      if (known) {
        const next = args[i];
        const isValue = next !== undefined && (!looksLikeOption(next) || negativeNumber(next));
        if (known.arity === "required") {
          if (next === undefined) throw new ParseError(`${flagName(known)} needs a value`, true);
          if (!isValue) {
            throw new ParseError(
              `${flagName(known)} needs a value, but '${next}' is an option: give the value ` +
                `(one that starts with '-' as ${known.long}=${next})`,
              true,
            );
          }
          assign(known, args[i++]!, values);
        } else if (known.arity === "optional" && isValue && !(takesPaths && looksLikePath(next))) {
          assign(known, args[i++]!, values);
        } else {
          assign(known, undefined, values);
        }
        continue;
      }
    }
    if (arg.length > 2 && arg[0] === "-" && arg[1] !== "-") {
      const known = find(arg.slice(0, 2));
      if (known) {
        if (known.arity === "none") {
          assign(known, undefined, values);
          group = `-${arg.slice(2)}`;
        } else {
          assign(known, arg.slice(2), values);
        }
        continue;
      }
    }
    if (/^--[^=]+=/.test(arg)) {
      const eq = arg.indexOf("=");
      const known = find(arg.slice(0, eq));
      if (known && known.arity !== "none") {
        assign(known, arg.slice(eq + 1), values);
        continue;
      }
    }
    // Not ours: from the first unknown option on, all goes to the command (or the help).
    if (dest === operands && looksLikeOption(arg) && !(leaf && negativeNumber(arg))) {
      dest = unknown;
    }
    dest.push(arg);
  }
  return { operands, unknown };
}

/** Stores one occurrence of an option: its value (parsed), or true/false for a flag. */
function assign(o: OptionSpec, value: string | undefined, values: OptionValues): void {
  if (value === undefined) {
    values[o.key] = !o.negate;
    return;
  }
  if (value === "") {
    const name = /[<[]([^>\]]+)/.exec(o.flags)?.[1]?.toUpperCase() ?? "VALUE";
    const instead = o.arity === "optional" ? `${o.long} alone` : `leave ${o.long} out`;
    throw new ParseError(
      `${flagName(o)} is given an empty value: give one (${o.long}=${name}), or ${instead}`,
      false,
    );
  }
  if (o.choices && !o.choices.includes(value)) {
    throw new ParseError(
      `${flagName(o)} '${value}' is invalid: allowed choices are ${o.choices.join(", ")}.`,
      false,
    );
  }
  try {
    values[o.key] = o.parse ? o.parse(value, values[o.key]) : value;
  } catch (e) {
    if (!(e instanceof InvalidValueError)) throw e;
    throw new ParseError(`${flagName(o)} '${value}' is invalid: ${e.message}`, false);
  }
}

/** A negative number is a value or a path, never a flag: short flags are letters. */
function negativeNumber(arg: string): boolean {
  return /^-(\d+|\d*\.\d+)(e[+-]?\d+)?$/.test(arg);
}

/**
 * A path rather than a name: it has a `/` or `\\`, or ends in a script's extension (`.ts`, `.js`,
 * `.mts`, `.tsx`, …). Names (a Lease, a shard group) have neither.
 */
function looksLikePath(arg: string): boolean {
  return /[/\\]|\.[cm]?[jt]sx?$/.test(arg);
}

function looksLikeOption(arg: string): boolean {
  return arg.length > 1 && arg[0] === "-";
}

function isHelp(arg: string): boolean {
  return arg === HELP_OPTION.short || arg === HELP_OPTION.long;
}

/** `-n, --namespace <pattern>` → `-n/--namespace`. */
function flagName(o: OptionSpec): string {
  return o.short ? `${o.short}/${o.long}` : o.long;
}

function unknownOption(flag: string, options: readonly OptionSpec[]): ParseError {
  const near = flag.startsWith("--") ? suggestion(flag, options.map((o) => o.long)) : "";
  return new ParseError(`unknown option '${flag}'${near}`, true);
}
