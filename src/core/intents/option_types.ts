/**
 * The types derived from the option table (`option_specs.ts`): which options a kind of handler
 * takes ({@link TakenByAny}, {@link TakenOnlyBy}, …), the options of a registration call
 * ({@link OptionsOf}) and the fields of a handler's record ({@link FieldsOf}). Nothing here names
 * an option: they all come from {@link HandlerOptionSpecs}.
 *
 * @module
 */

import type { HandlerKind, HandlerOptionSpecs } from "./option_specs.ts";

/** The name of a handler option (`"timeout"`, `"interval"`…), `registry` aside. */
export type OptionName = keyof HandlerOptionSpecs;

/** The parts of an option's spec, by name: `[given, stored, required]`. */
export type OptionTypes<O extends OptionName> = NonNullable<HandlerOptionSpecs[O]["types"]>;

/** The kinds that take an option. */
export type KindsOf<O extends OptionName> = keyof HandlerOptionSpecs[O]["kinds"];

/** The options that any of the kinds `K` takes. */
export type TakenByAny<K extends HandlerKind> = {
  [O in OptionName]: [K & KindsOf<O>] extends [never] ? never : O;
}[OptionName];

/** The options that all the kinds `K` take (and maybe others). */
export type TakenByAll<K extends HandlerKind> = {
  [O in OptionName]: [Exclude<K, KindsOf<O>>] extends [never] ? O : never;
}[OptionName];

/** The options that only the kinds `K` take (none other does). */
export type TakenOnlyBy<K extends HandlerKind> = {
  [O in OptionName]: [Exclude<KindsOf<O>, K>] extends [never] ? O : never;
}[OptionName];

/** The options that exactly the kinds `K` take (all of them, none other). */
export type TakenByExactly<K extends HandlerKind> = {
  [O in OptionName]: [Exclude<KindsOf<O>, K>] extends [never]
    ? [Exclude<K, KindsOf<O>>] extends [never] ? O : never
    : never;
}[OptionName];

/** Options as a call gives them: the required ones (`from`, `to`) required, the others not. */
export type GivenOptions<N extends OptionName> =
  & { [O in N as OptionTypes<O>[2] extends true ? never : O]?: OptionTypes<O>[0] }
  & { [O in N as OptionTypes<O>[2] extends true ? O : never]: OptionTypes<O>[0] };

/** Options as a handler's record keeps them (those it keeps under their names). */
export type StoredOptions<N extends OptionName> = {
  [O in N as [OptionTypes<O>[1]] extends [never] ? never : O]: OptionTypes<O>[1];
};

/**
 * The options of a registration of the kinds `K` (`registry` aside).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { OptionsOf } from "@kopf/kopf";
 * const options: OptionsOf<"timer"> = { interval: 60, sharp: true };
 * assert.equal(options.interval, 60);
 * ```
 */
export type OptionsOf<K extends HandlerKind> = GivenOptions<TakenByAny<K>>;

/** The fields that the records of the kinds `K` keep of the options that only they take. */
export type FieldsOf<K extends HandlerKind> = StoredOptions<TakenOnlyBy<K>>;
