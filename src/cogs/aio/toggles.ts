/**
 * Toggles: on/off switches grouped into a set that is "on" while any of them
 * is on — Kopf's `aiotoggles.ToggleSet(any)`, the operator's pause gate.
 *
 * Why a set of named toggles and not one boolean: several independent reasons
 * can hold an operator paused at once — a higher-priority peer in one
 * namespace's peering, another namespace's peering not found yet, later a
 * leader-election lease not held or a shard not owned. Each reason owns its
 * toggle and turns only that one on and off; the operator resumes when the
 * last one goes off, whoever turned the others. A toggle that is no longer
 * needed (its namespace is gone) is dropped and counts no more.
 *
 * Waiters and listeners see the set's state, not the toggles': a listener is
 * called on every change of the whole (off → on, on → off), never for a
 * toggle that turns on while another already holds the set.
 *
 * @module
 */

/** One switch of a {@link ToggleSet}: a reason that holds the set while it is on. */
export class Toggle {
  /** What this toggle stands for, e.g. `"default@ns1"` (for logs and diagnostics). */
  readonly name: string;
  #on: boolean;
  #owner: Owner | undefined;

  /**
   * Made by {@link ToggleSet.make}.
   *
   * @param owner The set's hooks.
   * @param name What it stands for.
   * @param on Its initial state.
   */
  constructor(owner: Owner, name: string, on: boolean) {
    this.#owner = owner;
    this.name = name;
    this.#on = on;
  }

  /** Whether this toggle is on (a dropped toggle keeps its last state but holds nothing). */
  get on(): boolean {
    return this.#on;
  }

  /** Whether it was dropped from its set. */
  get dropped(): boolean {
    return this.#owner === undefined;
  }

  /**
   * Turns the toggle on or off; the set's listeners hear of it if the whole set changes.
   *
   * @param on The new state.
   */
  turnTo(on: boolean): void {
    if (this.#on === on) return;
    const owner = this.#owner;
    const before = owner?.on();
    this.#on = on;
    if (owner) owner.changed(before!);
  }

  /** Removes the toggle from its set (it holds the set no more); idempotent. */
  drop(): void {
    const owner = this.#owner;
    if (!owner) return;
    const before = owner.on();
    this.#owner = undefined;
    owner.drop(this, before);
  }
}

/** What a toggle needs of its set. */
interface Owner {
  on(): boolean;
  changed(before: boolean): void;
  drop(toggle: Toggle, before: boolean): void;
}

/**
 * A set of toggles that is on while any of its toggles is on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ToggleSet } from "./toggles.ts";
 * const paused = new ToggleSet();
 * const seen: boolean[] = [];
 * paused.subscribe((on) => seen.push(on));
 * const peering = paused.make("peering default@*");
 * const lease = paused.make("leader election", true);
 * peering.turnTo(true); // already on: no change of the whole
 * lease.turnTo(false);
 * assert.deepEqual([paused.on, paused.reasons], [true, ["peering default@*"]]);
 * peering.drop();
 * assert.deepEqual([paused.on, seen], [false, [true, false]]);
 * await paused.waitFor(false); // at once
 * ```
 */
export class ToggleSet {
  readonly #toggles = new Set<Toggle>();
  readonly #listeners = new Set<(on: boolean) => void>();
  #waiters: Array<{ on: boolean; resolve: (reached: boolean) => void }> = [];
  readonly #owner: Owner = {
    on: () => this.on,
    changed: (before) => this.#changed(before),
    drop: (toggle, before) => {
      this.#toggles.delete(toggle);
      this.#changed(before);
    },
  };

  /**
   * Adds a toggle.
   *
   * @param name What it stands for.
   * @param on Its initial state (default off); an initially-on toggle turns the set on at once.
   * @returns The toggle.
   */
  make(name: string, on = false): Toggle {
    const before = this.on;
    const toggle = new Toggle(this.#owner, name, on);
    this.#toggles.add(toggle);
    if (on) this.#changed(before);
    return toggle;
  }

  /** Whether any toggle is on. */
  get on(): boolean {
    for (const t of this.#toggles) if (t.on) return true;
    return false;
  }

  /** The names of the toggles that are on, in the order they were made. */
  get reasons(): string[] {
    return [...this.#toggles].filter((t) => t.on).map((t) => t.name);
  }

  /** How many toggles the set has (on or off). */
  get size(): number {
    return this.#toggles.size;
  }

  /**
   * Calls `listener` on every change of the whole set (synchronously, in order of subscription).
   *
   * @param listener Gets the new state.
   * @returns A function that unsubscribes.
   */
  subscribe(listener: (on: boolean) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Waits until the set is on (or off).
   *
   * @param on The awaited state.
   * @param signal Cuts the wait short.
   * @returns True when the state is reached, false if the signal aborted first.
   */
  waitFor(on: boolean, signal?: AbortSignal): Promise<boolean> {
    if (this.on === on) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = {
        on,
        resolve: (reached: boolean) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(reached);
        },
      };
      const onAbort = () => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        waiter.resolve(false);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** A toggle changed; `before` is the set's state before that. */
  #changed(before: boolean): void {
    const now = this.on;
    if (now === before) return;
    const due = this.#waiters.filter((w) => w.on === now);
    this.#waiters = this.#waiters.filter((w) => w.on !== now);
    for (const w of due) w.resolve(true);
    for (const listener of [...this.#listeners]) listener(now);
  }
}
