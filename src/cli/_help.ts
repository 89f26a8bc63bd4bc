/**
 * The help of the `kopf` command line (`kopf --help`, `kopf run --help`, `kopf help run`): the
 * usage line, the description, the paths, the options with their choices and defaults, and the
 * commands — laid out as the help has always been (two columns; the descriptions wrapped to the
 * terminal's width, or 80 columns when the output is not a terminal).
 *
 * @module
 */

import {
  type CommandSpec,
  HELP_COMMAND,
  HELP_OPTION,
  type OptionSpec,
  type ProgramSpec,
  VERSION_OPTION,
} from "./_parser.ts";

/** Below this many columns for the descriptions, they are not wrapped. */
const MIN_WRAP = 40;

/**
 * The help text of the program (without a command) or of one of its commands.
 *
 * @param program The program.
 * @param command The command, or undefined for the program's help.
 * @param width The columns to wrap the descriptions to.
 * @returns The text, ending with a newline.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { helpText } from "./_help.ts";
 * import { option } from "./_parser.ts";
 * const run = { name: "run", description: "run it", options: [option("-v, --verbose", "more")] };
 * const text = helpText({ name: "demo", description: "a demo", commands: [run] }, run);
 * assert.equal(
 *   text,
 *   "Usage: demo run [options]\n\nrun it\n\nOptions:\n" +
 *     "  -v, --verbose  more\n  -h, --help     display help for command\n",
 * );
 * ```
 */
export function helpText(
  program: ProgramSpec,
  command: CommandSpec | undefined,
  width = 80,
): string {
  const usage = command
    ? `${program.name} ${command.name} [options]${command.paths !== undefined ? " [paths...]" : ""}`
    : `${program.name} [options] [command]`;
  const options = command ? [...command.options, HELP_OPTION] : [VERSION_OPTION, HELP_OPTION];
  const args: Array<[string, string]> = command?.paths ? [["paths", command.paths]] : [];
  const opts = options.map((o): [string, string] => [o.flags, optionDescription(o)]);
  const commands = command ? [] : [
    ...program.commands.map((c): [string, string] => [
      `${c.name}${c.options.length ? " [options]" : ""}${
        c.paths !== undefined ? " [paths...]" : ""
      }`,
      c.description,
    ]),
    [`${HELP_COMMAND} [command]`, "display help for command"] as [string, string],
  ];
  const termWidth = Math.max(...[...args, ...opts, ...commands].map(([term]) => term.length));
  const section = (title: string, items: Array<[string, string]>) =>
    items.length ? [title, ...items.map(([t, d]) => item(t, d, termWidth, width)), ""] : [];
  const description = command?.description ?? program.description;
  return [
    `Usage: ${usage}`,
    "",
    ...(description ? [wrap(description, width), ""] : []),
    ...section("Arguments:", args),
    ...section("Options:", opts),
    ...section("Commands:", commands),
  ].join("\n");
}

/** The description, then what the option allows and its default: `(choices: "a", default: "a")`. */
function optionDescription(o: OptionSpec): string {
  const extra: string[] = [];
  if (o.choices) extra.push(`choices: ${o.choices.map((c) => JSON.stringify(c)).join(", ")}`);
  if (o.default !== undefined && o.arity !== "none") {
    extra.push(`default: ${JSON.stringify(o.default)}`);
  }
  return extra.length ? `${o.description} (${extra.join(", ")})` : o.description;
}

/** One row: the term padded to the column, the description wrapped and indented under itself. */
function item(term: string, description: string, termWidth: number, width: number): string {
  const columns = width - termWidth - 4;
  const text = columns < MIN_WRAP
    ? description
    : wrap(description, columns).replaceAll("\n", `\n${" ".repeat(termWidth + 2)}`);
  return `  ${term.padEnd(termWidth)}  ${text.replaceAll("\n", "\n  ")}`;
}

/** Wraps at spaces so that no line is longer than `width` (unless one word is). */
function wrap(text: string, width: number): string {
  if (width < MIN_WRAP) return text;
  return text.split("\n").map((line) => {
    const words = line.match(/\s*\S+/g);
    if (!words) return "";
    const lines: string[] = [];
    let current = words[0]!;
    for (const word of words.slice(1)) {
      if (current.length + word.length <= width) {
        current += word;
      } else {
        lines.push(current);
        current = word.trimStart();
      }
    }
    lines.push(current);
    return lines.join("\n");
  }).join("\n");
}
