/**
 * The options types come from the option table (src/core/intents/option_specs.ts): an option's
 * type in `HandlerOptionSpecs` is its type in every registration's options and in the handler
 * records of the kinds that take it, and an option of another kind is refused by the compiler as
 * by registration. The `@ts-expect-error` lines are checked by `deno check` (`deno task check`):
 * one that stops being an error fails it.
 */

import assert from "node:assert/strict";
import type {
  ConverterOptions,
  FieldsOf,
  HandlerOptionSpecs,
  OptionsOf,
  ReconcileOptions,
  SpawningHandler,
  SpawningOptions,
  SubhandlerOptions,
  WebhookHandler,
  WebhookOptions,
} from "../../mod.ts";
import type { ResourceOptions } from "../../on.ts";
import { HANDLER_OPTIONS } from "../../src/core/intents/option_specs.ts";
import { OPTIONS } from "../../src/core/intents/options.ts";

/** True when A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;
function same<T extends true>(): T | undefined {
  return undefined;
}

type Given<O extends keyof HandlerOptionSpecs> = NonNullable<HandlerOptionSpecs[O]["types"]>[0];

Deno.test("option types: a spec's value type is the option's type in the registration's options", () => {
  same<Equal<SpawningOptions["cancellationTimeout"], Given<"cancellationTimeout"> | undefined>>();
  same<Equal<SpawningOptions["cancellationTimeout"], number | undefined>>();
  same<Equal<WebhookOptions["operations"], Given<"operations"> | undefined>>();
  same<Equal<ConverterOptions["from"], string>>(); // required: the spec says so
  const daemon: SpawningOptions = { cancellationTimeout: 5, interval: 60, labels: { app: "x" } };
  // @ts-expect-error -- the spec says seconds: a number.
  const wrong: SpawningOptions = { cancellationTimeout: "5" };
  // @ts-expect-error -- converters must name both versions.
  const half: ConverterOptions = { from: "v1" };
  assert.deepEqual([daemon.cancellationTimeout, wrong.cancellationTimeout, half.from], [
    5,
    "5",
    "v1",
  ]);
});

Deno.test("option types: an option of another kind is refused by the compiler, as by registration", () => {
  // @ts-expect-error -- interval is for timers, not for creation handlers.
  const create: ResourceOptions = { interval: 60 };
  // @ts-expect-error -- admission handlers are not retried.
  const webhook: WebhookOptions = { retries: 3 };
  // @ts-expect-error -- sub-handlers go to their parent, not to a registry.
  const sub: SubhandlerOptions = { registry: undefined };
  // @ts-expect-error -- owns is for reconcilers only.
  const timer: OptionsOf<"timer"> = { owns: ["pods"] };
  const reconcile: ReconcileOptions = { owns: ["pods"], resync: 60 };
  assert.deepEqual([create, webhook, sub, timer, reconcile.resync], [
    { interval: 60 },
    { retries: 3 },
    { registry: undefined },
    { owns: ["pods"] },
    60,
  ]);
});

Deno.test("option types: the handler records keep what the specs say, under the options' names", () => {
  same<Equal<SpawningHandler["cancellationTimeout"], number | undefined>>();
  same<Equal<SpawningHandler["sharp"], boolean>>(); // kept with its default
  same<Equal<WebhookHandler["operations"], Given<"operations"> | undefined>>();
  same<
    Equal<
      keyof FieldsOf<"daemon" | "timer">,
      & keyof OptionsOf<"daemon" | "timer">
      & (
        | "initialDelay"
        | "cancellationBackoff"
        | "cancellationTimeout"
        | "cancellationPolling"
        | "interval"
        | "sharp"
        | "idle"
      )
    >
  >();
  // @ts-expect-error -- `operation` is kept in `operations`, not under its own name.
  const operation: WebhookHandler["operation"] = "CREATE";
  assert.equal(operation, "CREATE");
});

Deno.test("option types: the run-time table has a row per spec, with the spec's kinds, and registry", () => {
  for (const [name, spec] of Object.entries(HANDLER_OPTIONS)) {
    assert.deepEqual(OPTIONS[name]?.kinds, Object.keys(spec.kinds), name);
  }
  assert.deepEqual(
    Object.keys(OPTIONS).filter((k) => !Object.hasOwn(HANDLER_OPTIONS, k)),
    ["registry"],
  );
  assert.ok(!OPTIONS.registry!.kinds.includes("subhandler"));
});
