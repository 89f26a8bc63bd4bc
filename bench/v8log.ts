/**
 * A summary of a V8 tick log (`--prof`: V8's sampling profiler, a `v8.log` file), for what a
 * CPU profile (`--cpu-prof`, `cpuprofile.ts`) does not show: which tier the JavaScript ran in
 * (Ignition's bytecode `~`, Sparkplug's baseline code `^`, Maglev `+`, TurboFan `*`), how much
 * time went to V8's builtins (the ICs, promises, maps…), and the native time — V8's runtime in
 * C++, Deno's Rust, the C library and the system calls it wraps — by the first JavaScript or
 * builtin frame that called into it (a CPU profile folds all of that into `(program)` or into
 * the calling function's self time). The ticks are of the main thread only, taken while V8
 * runs it (the system calls made from JavaScript included, the event loop's waiting not), and
 * not at a steady rate: the sampler falls behind on a busy machine (a quarter to a third of the
 * main thread's CPU was sampled in a trickle here). Compare shares between processes, not
 * counts.
 *
 * Run: `deno run -A bench/v8log.ts V8.LOG [FROM_MS] [TO_MS] [TOP]`: the ticks between FROM and
 * TO (milliseconds since the process started; default all), TOP rows per table (default 25).
 * `trickle_probe.ts` mode `prof` writes such a log and prints its window's summary.
 *
 * @module
 */

/** What {@link summarizeV8Log} finds in a log: tick counts, most first. */
export interface V8LogSummary {
  /** Ticks in the window. */
  ticks: number;
  /** By V8's state at the tick (`JS`, `GC`, `COMPILER`, `EXTERNAL`, `IDLE`, …). */
  states: [string, number][];
  /**
   * By the kind of code the tick was in: `JS ~`/`JS ^`/`JS +`/`JS *` (by tier), `Builtin`,
   * `BytecodeHandler` (Ignition running bytecode), `RegExp`, `native <library>`, `unknown`.
   */
  kinds: [string, number][];
  /** By the code the tick was in (a function with its tier marker, a builtin, a library). */
  code: [string, number][];
  /** The native ticks by library and the first JavaScript or builtin frame of their stack. */
  nativeCallers: [string, number][];
}

/** One piece of generated code, as the log's `code-creation` lines announce it. */
interface Code {
  size: number;
  kind: string;
  name: string;
}

const STATES = [
  "JS",
  "GC",
  "PARSER",
  "BYTECODE_COMPILER",
  "COMPILER",
  "OTHER",
  "EXTERNAL",
  "ATOMICS_WAIT",
  "IDLE",
  "LOGGING",
  "IDLE_EXTERNAL",
];

/**
 * Summarises a V8 tick log's ticks between two times.
 *
 * @param text The log (`--prof`, with `--logfile=FILE --no-logfile-per-isolate` for one file).
 * @param from The window's start, in microseconds since the process started (the log's clock).
 * @param to The window's end (default: the log's end).
 * @returns The ticks counted by state, kind, code, and native caller.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summarizeV8Log } from "./v8log.ts";
 * const log = [
 *   "shared-library,/bin/deno,0x1000,0x9000,0",
 *   'code-creation,JS,0,10,0xa000,0x100,"handle file:///op.ts:1:1",0xb000,+',
 *   "code-creation,Builtin,2,11,0xc000,0x80,LoadIC_Megamorphic",
 *   "tick,0xa010,100,0,0x0,0",
 *   "tick,0xc004,200,0,0x0,0,0xa020",
 *   "tick,0x2000,300,0,0x0,1,0xc010,0xa030",
 * ].join("\n");
 * const s = summarizeV8Log(log, 150);
 * assert.deepEqual(s.ticks, 2);
 * assert.deepEqual(s.kinds, [["Builtin", 1], ["native deno", 1]]);
 * assert.deepEqual(s.nativeCallers, [["deno <- Builtin LoadIC_Megamorphic", 1]]);
 * ```
 */
export function summarizeV8Log(text: string, from = 0, to = Infinity): V8LogSummary {
  const codes = new Map<number, Code>();
  let starts: number[] = [];
  let sorted = true;
  const libraries: { start: number; end: number; name: string }[] = [];
  const count = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);
  const states = new Map<string, number>();
  const kinds = new Map<string, number>();
  const code = new Map<string, number>();
  const nativeCallers = new Map<string, number>();
  let ticks = 0;

  /** The generated code or library an address is in, as [kind, name]. */
  const find = (address: number): [string, string] => {
    if (!sorted) {
      starts = [...codes.keys()].sort((a, b) => a - b);
      sorted = true;
    }
    let lo = 0;
    let hi = starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]! <= address) lo = mid + 1;
      else hi = mid - 1;
    }
    const start = starts[hi];
    const found = start === undefined ? undefined : codes.get(start);
    if (found && address < start! + found.size) return [found.kind, found.name];
    const library = libraries.find((l) => l.start <= address && address < l.end);
    return library ? ["native", library.name] : ["unknown", "unknown"];
  };

  for (const line of text.split("\n")) {
    const fields = splitFields(line);
    switch (fields[0]) {
      case "shared-library": {
        const name = fields[1]!.split("/").pop()!;
        libraries.push({ start: Number(fields[2]), end: Number(fields[3]), name });
        break;
      }
      case "code-creation": {
        // code-creation,<type>,<kind>,<time>,<address>,<size>,<name>[,<function info>,<tier>]
        if (fields.length < 7 || !isFinite(Number(fields[4])) || !isFinite(Number(fields[5]))) {
          break; // a line cut short (a log still being written): not a piece of code
        }
        const type = fields[1]!;
        const tier = fields[8] === undefined ? "" : ` ${fields[8].replace("'", "")}`;
        const name = type === "JS" ? fields[6]!.replace(/ file:\/\/\/\S*\//, " ") : fields[6]!;
        codes.set(Number(fields[4]), { size: Number(fields[5]), kind: type + tier, name });
        sorted = false;
        break;
      }
      case "code-move": {
        const moved = codes.get(Number(fields[1]));
        if (!moved) break;
        codes.delete(Number(fields[1]));
        codes.set(Number(fields[2]), moved);
        sorted = false;
        break;
      }
      case "code-delete":
        if (codes.delete(Number(fields[1]))) sorted = false;
        break;
      case "tick": {
        // tick,<pc>,<time>,<is external callback>,<tos or callback>,<state>,<stack…>
        const time = Number(fields[2]);
        if (fields.length < 6 || !(time >= from && time <= to) || !isFinite(Number(fields[1]))) {
          break; // out of the window, or a line cut short
        }
        ticks++;
        count(states, STATES[Number(fields[5])] ?? `state ${fields[5]}`);
        const [kind, name] = find(Number(fields[1]));
        count(kinds, kind === "native" ? `native ${name}` : kind);
        count(code, kind === "native" ? `native ${name}` : `${kind} ${name}`);
        if (kind !== "native") break;
        let caller = "(none)";
        for (const frame of fields.slice(6)) {
          const [k, n] = find(Number(frame));
          if (k !== "native" && k !== "unknown") {
            caller = `${k} ${n}`;
            break;
          }
        }
        count(nativeCallers, `${name} <- ${caller}`);
        break;
      }
    }
  }
  const most = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return {
    ticks,
    states: most(states),
    kinds: most(kinds),
    code: most(code),
    nativeCallers: most(nativeCallers),
  };
}

/** The comma-separated fields of a log line; a quoted field keeps its commas (not its quotes). */
function splitFields(line: string): string[] {
  if (!line.includes('"')) return line.split(",");
  const fields: string[] = [];
  let field = "";
  let quoted = false;
  for (const char of line) {
    if (char === '"') quoted = !quoted;
    else if (char === "," && !quoted) {
      fields.push(field);
      field = "";
    } else field += char;
  }
  fields.push(field);
  return fields;
}

if (import.meta.main) {
  const [path, from, to, top = "25"] = Deno.args;
  if (!path) {
    console.error("usage: deno run -A bench/v8log.ts V8.LOG [FROM_MS] [TO_MS] [TOP]");
    Deno.exit(2);
  }
  const s = summarizeV8Log(
    await Deno.readTextFile(path),
    from ? Number(from) * 1000 : 0,
    to ? Number(to) * 1000 : Infinity,
  );
  printV8LogSummary(s, Number(top));
}

/**
 * Prints a summary: the ticks by state and kind, the code with the most, the native callers.
 *
 * @param s The summary.
 * @param top Rows per table.
 * @param per Divide the counts by this (e.g. the objects of a window); 1 prints ticks.
 */
export function printV8LogSummary(s: V8LogSummary, top = 25, per = 1): void {
  const n = (v: number) => per === 1 ? String(v) : (v / per).toFixed(3);
  const share = (v: number) => `${((100 * v) / Math.max(1, s.ticks)).toFixed(1)}%`;
  const line = (rows: [string, number][]) => rows.map(([k, v]) => `${k} ${share(v)}`).join(", ");
  const table = (rows: [string, number][]) =>
    rows.slice(0, top).map(([k, v]) => `    ${n(v).padStart(8)} ${share(v).padStart(6)}  ${k}`)
      .join("\n");
  console.log(`  ticks: ${n(s.ticks)}${per === 1 ? "" : " per object"}`);
  console.log(`  by V8's state: ${line(s.states)}`);
  console.log(`  by kind of code: ${line(s.kinds)}`);
  console.log(`  by code:\n${table(s.code)}`);
  console.log(
    `  native ticks by the first JavaScript or builtin frame:\n${table(s.nativeCallers)}`,
  );
}
