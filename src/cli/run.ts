/**
 * `kopf run`: loads handler files and modules, then runs the operator with
 * Kopf's flags until SIGINT/SIGTERM. Loading and running failures are one
 * line on stderr and a non-zero exit code.
 *
 * Files are imported into a fresh registry: each `kopf run` (and each test
 * runner) gets exactly the handlers of the files it names.
 *
 * @module
 */

import type { Clock } from "../cogs/aio/clock.ts";
import { permissionError, permissionHint } from "../cogs/clients/_permissions.ts";
import { OperatorSettings } from "../cogs/configs/settings.ts";
import type { Level, LogFormat, LogSink } from "../core/actions/loggers.ts";
import { getDefaultRegistry, setDefaultRegistry } from "../core/intents/registration.ts";
import { OperatorRegistry } from "../core/intents/registry.ts";
import { operator } from "../core/reactor/running.ts";
import type { RunValues } from "./_commands.ts";
import { fileUrls } from "./_file_urls.ts";
import { bundleKey } from "./bundle.ts";
import { beginLoading } from "./_loading.ts";

/**
 * The flags of `kopf run`: the values of its options, derived from their specs (`_commands.ts`),
 * so an option added there is here too. Each is optional for a caller in code (one with a default
 * gets it where it is used); `-m` and `-n` are lists under plural names, with the files.
 */
export interface RunFlags extends Partial<Omit<RunValues, "module" | "namespace">> {
  /** Handler files. */
  paths: string[];
  /** `-m, --module`: handler modules. */
  modules: string[];
  /** `-n, --namespace`: the patterns of the served namespaces. */
  namespaces: string[];
}

/** What an embedding caller (the test runner, `kopf.main()`) controls. */
export interface RunControls {
  /** Use this registry instead of loading into a fresh one (`kopf.main()`, tests). */
  registry?: OperatorRegistry;
  /** Use these settings instead of fresh defaults (the CLI's peering flags are written into them). */
  settings?: OperatorSettings;
  /** Stops the operator. */
  signal?: AbortSignal;
  /** Where log lines go (default stderr). */
  write?: (line: string) => void;
  /**
   * Where the command line's own one-line errors go (`kopf: …`: bad usage, a failure), without
   * their newline (default stderr).
   */
  writeError?: (line: string) => void;
  /** A sink for records instead of lines. */
  sink?: LogSink;
  /** Called once the operator is ready. */
  onReady?: () => void;
  /** Log in with this kubeconfig file instead of the default login. */
  kubeconfig?: string;
  /** The operator's clock instead of the real one (tests on a `FakeClock`). */
  clock?: Clock;
  /** Throw fatal errors to the caller instead of printing them (test runners). */
  throwErrors?: boolean;
  /**
   * The handler files built into this program, by path (`kopf bundle` writes this): a file
   * named on the command line is loaded by its function here, not imported from the disk (which
   * would load a second kopf beside the bundled one); a file not here is refused; with no files
   * named, all of these are loaded.
   */
  bundled?: Record<string, () => Promise<unknown>>;
}

/** A handler file or module could not be loaded. */
export class LoadingError extends Error {
  override name = "LoadingError";
}

let loads = 0;
let loading: Promise<unknown> = Promise.resolve();

/**
 * Imports handler files and modules into a new registry.
 *
 * @param paths File paths (relative to the working directory).
 * @param modules Module specifiers (`-m`): URLs, `npm:`/`jsr:` names, or paths.
 * @param bundled The files built into this program ({@link RunControls.bundled}), if it is a bundle.
 * @returns The registry with their handlers.
 * @throws {LoadingError} For a missing or broken file, with one line naming it.
 */
export async function loadHandlers(
  paths: string[],
  modules: string[],
  bundled?: Record<string, () => Promise<unknown>>,
): Promise<OperatorRegistry> {
  // Imports are serialised: the default registry is process-wide while a file registers into it.
  const previous = loading;
  let release!: () => void;
  loading = new Promise<void>((r) => (release = r));
  await previous;
  const registry = new OperatorRegistry();
  const saved = getDefaultRegistry();
  setDefaultRegistry(registry);
  const loaded = beginLoading();
  try {
    if (bundled) {
      await loadBundled(paths, modules, bundled);
      return registry;
    }
    const n = ++loads;
    const { isAbsolute, resolve, fileUrl } = await fileUrls();
    for (const path of paths) {
      const full = isAbsolute(path) ? path : resolve(Deno.cwd(), path);
      try {
        const info = await Deno.stat(full);
        if (!info.isFile) {
          throw new LoadingError(`cannot load handlers from ${path}: it is not a file`);
        }
      } catch (e) {
        if (e instanceof LoadingError) throw e;
        if (e instanceof Deno.errors.NotFound) {
          throw new LoadingError(
            `cannot load handlers from ${path}: no such file (check the path)`,
          );
        }
        const denied = permissionError(e);
        throw new LoadingError(
          `cannot load handlers from ${path}: ${
            denied ? permissionHint(denied) : (e as Error).message.split("\n")[0]
          }`,
        );
      }
      // A query makes each load a fresh module instance, so handlers register again.
      await importOne(`${fileUrl(full)}?kopf-load=${n}`, path);
    }
    for (const module of modules) {
      const spec = /^[a-z][a-z0-9+.-]*:/i.test(module)
        ? module
        : fileUrl(resolve(Deno.cwd(), module));
      await importOne(spec, module);
    }
  } finally {
    loaded();
    setDefaultRegistry(saved);
    release();
  }
  return registry;
}

/** Loads the bundled files named (all of them if none is): see {@link RunControls.bundled}. */
async function loadBundled(
  paths: string[],
  modules: string[],
  bundled: Record<string, () => Promise<unknown>>,
): Promise<void> {
  const held = Object.keys(bundled);
  if (modules.length) {
    throw new LoadingError(
      `cannot load handlers from ${modules[0]}: this program is a bundle (of ${
        held.join(", ")
      }), ` +
        `and a module from outside it would load a second kopf: bundle its file in (kopf bundle)`,
    );
  }
  for (const path of paths.length ? paths : held) {
    const load = Object.hasOwn(bundled, bundleKey(path)) ? bundled[bundleKey(path)] : undefined;
    if (!load) {
      throw new LoadingError(
        `cannot load handlers from ${path}: this program is a bundle of ${held.join(", ")}, ` +
          `and a file from the disk would load a second kopf: bundle it in (kopf bundle)`,
      );
    }
    await importOne(load, path);
  }
}

async function importOne(
  specifier: string | (() => Promise<unknown>),
  shown: string,
): Promise<void> {
  try {
    // The user's handler file or module, named on the command line: unknown until run time, so
    // this import cannot be analysed (or rewritten) at publish time — by design, as `kopf run`.
    await (typeof specifier === "string" ? import(specifier) : specifier());
  } catch (e) {
    const message = e instanceof Error ? e.message.split("\n")[0]! : String(e);
    // A module that the file imports and may not be read comes as a TypeError with Deno's words.
    const denied = permissionError(e) ??
      (e instanceof Error && /^(TypeError: )?Requires \w+ access to /.test(message)
        ? e
        : undefined);
    if (denied) {
      throw new LoadingError(`cannot load handlers from ${shown}: ${permissionHint(denied)}`);
    }
    // Deno reports a module's syntax error as a TypeError whose message starts with
    // "SyntaxError:" and whose location is on a later line (with colours): show it plainly.
    // deno-lint-ignore no-control-regex
    const lines = e instanceof Error ? e.message.replace(/\x1b\[[0-9;]*m/g, "").split("\n") : [];
    const at = lines.slice(1).find((l) => /^\s*at \S+:\d+:\d+$/.test(l))?.trim()
      .replace(/\?kopf-load=\d+/, "");
    const name = e instanceof Error && !/^[A-Z]\w*Error: /.test(message) ? `${e.name}: ` : "";
    throw new LoadingError(
      `cannot load handlers from ${shown}: ${name}${message}${at ? ` (${at})` : ""}`,
    );
  }
}

/** The flags of `kopf run` that go into the settings (`kopf rbac` and `kopf manifests` too). */
export type SettingsFlags = Pick<
  RunFlags,
  | "priority"
  | "dev"
  | "peering"
  | "standalone"
  | "leaderElection"
  | "leaderElectionNamespace"
  | "shards"
  | "shardsNamespace"
  | "debug"
>;

/**
 * Writes the flags of `kopf run` into the settings, before the startup handlers (which may
 * change them again), as `kopf run` does.
 *
 * @param flags The flags.
 * @param settings The settings to change.
 * @returns The same settings.
 */
export function applyRunFlags(flags: SettingsFlags, settings: OperatorSettings): OperatorSettings {
  // Kopf's: --dev is the priority 666 (not standalone); --peering NAME makes the peering mandatory.
  if (flags.priority !== undefined) settings.peering.priority = flags.priority;
  if (flags.dev) settings.peering.priority = 666;
  if (flags.peering) {
    settings.peering.name = flags.peering;
    settings.peering.mandatory = true;
  }
  if (flags.standalone) settings.peering.standalone = true;
  if (flags.leaderElection) settings.leaderElection.enabled = true;
  if (typeof flags.leaderElection === "string") settings.leaderElection.name = flags.leaderElection;
  if (flags.leaderElectionNamespace) {
    settings.leaderElection.namespace = flags.leaderElectionNamespace;
  }
  if (flags.shards) settings.sharding.enabled = true;
  if (typeof flags.shards === "string") settings.sharding.group = flags.shards;
  if (flags.shardsNamespace) settings.sharding.namespace = flags.shardsNamespace;
  // Kopf's --debug: "log all the asyncio internals too, so as the API traffic".
  if (flags.debug) settings.networking.logTraffic = true;
  return settings;
}

/**
 * Runs the operator as `kopf run` does.
 *
 * @param flags The parsed flags.
 * @param controls Registry, settings, signal, log output, readiness callback.
 * @returns The exit code: 0 after a clean stop.
 * @throws {LoadingError} For handler files that cannot be loaded.
 * @throws {Error} For fatal operator errors (the CLI turns them into one line).
 */
export async function runOperator(flags: RunFlags, controls: RunControls = {}): Promise<number> {
  const registry = controls.registry ??
    (flags.paths.length || flags.modules.length || controls.bundled
      ? await loadHandlers(flags.paths, flags.modules, controls.bundled)
      : getDefaultRegistry());
  const level: Level = flags.debug || flags.verbose ? "debug" : flags.quiet ? "warning" : "info";
  const logging: {
    level: Level;
    format?: LogFormat | undefined;
    prefix?: boolean;
    refkey?: string;
    write?: (l: string) => void;
  } = {
    level,
    format: flags.logFormat,
  };
  if (flags.logPrefix !== undefined) logging.prefix = flags.logPrefix;
  if (flags.logRefkey) logging.refkey = flags.logRefkey;
  if (controls.write) logging.write = controls.write;
  const settings = applyRunFlags(flags, controls.settings ?? new OperatorSettings());
  await operator({
    registry,
    settings,
    namespaces: flags.namespaces,
    clusterwide: flags.allNamespaces,
    ...(flags.liveness ? { liveness: flags.liveness } : {}),
    ...(controls.signal ? { signal: controls.signal } : {}),
    ...(controls.onReady ? { onReady: controls.onReady } : {}),
    ...(controls.kubeconfig ? { kubeconfig: controls.kubeconfig } : {}),
    ...(controls.clock ? { clock: controls.clock } : {}),
    ...(controls.sink ? { sink: controls.sink } : { logging }),
  });
  return 0;
}
