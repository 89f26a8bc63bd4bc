/**
 * The {@link Vault}: the operator's store of valid credentials, by the id of
 * the login handler that produced them — selected by priority, invalidated on a
 * 401, refilled by the authenticator's re-login (the why: `credentials.ts`).
 *
 * @module
 */

import { ConnectionInfo } from "./connection_info.ts";
import { LoginError } from "./login_errors.ts";

/** The id of the login handler that produced the credentials. */
export type VaultKey = string;

/** Credentials as login handlers give them; `null`/`undefined` entries mean "nothing". */
export type VaultSource =
  | Record<VaultKey, ConnectionInfo | null | undefined>
  | Iterable<readonly [VaultKey, ConnectionInfo | null | undefined]>;

/** Options of {@link Vault}. */
export interface VaultOptions {
  /** The clock, in epoch milliseconds (for tests). */
  now?: () => number;
  /** A random source in [0, 1) to choose among equal priorities (for tests). */
  random?: () => number;
}

/** What {@link Vault.select} gives: the credentials and the key to report them under. */
export interface VaultEntry {
  /** The login handler's id. */
  key: VaultKey;
  /** The credentials. */
  info: ConnectionInfo;
}

const OUT_OF_CREDENTIALS = "Ran out of valid credentials: add a login handler (kopf.on.login) " +
  "or fix the kubeconfig / service account; see the Authentication docs";

/**
 * The store of currently valid credentials (see the module doc).
 *
 * Life cycle: an empty vault is "not ready"; the authenticator sees that via
 * {@link Vault.whenEmpty}, runs the login handlers and calls
 * {@link Vault.populate}, which makes it ready (even with nothing in it).
 * Consumers call {@link Vault.select} (it waits for readiness, drops expired
 * credentials, and throws {@link LoginError} when nothing is left), and on a
 * 401 call {@link Vault.invalidate}, which — if that was the last valid
 * credentials — marks the vault not ready and waits for the re-login. A vault
 * that no authenticator watches (none ever asked {@link Vault.whenEmpty}: a
 * vault of one's own for `KubeClient.fromVault`) has no re-login to wait for:
 * there, that invalidation fails at once with the {@link LoginError}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConnectionInfo, Vault } from "@kopf/kopf";
 *
 * using vault = new Vault();
 * assert.equal(vault.ready, false); // an empty vault asks for a login
 * vault.populate({ "login_fn": new ConnectionInfo({ server: "http://127.0.0.1:1", token: "t" }) });
 * const { key, info } = await vault.select();
 * assert.equal(key, "login_fn");
 * assert.equal(info.token, "t");
 * ```
 */
export class Vault implements AsyncIterable<VaultEntry>, Disposable {
  #current = new Map<VaultKey, ConnectionInfo>();
  #invalid = new Map<VaultKey, ConnectionInfo[]>();
  #caches = new Map<ConnectionInfo, Map<string, unknown>>();
  #waiters = new Set<() => void>();
  #ready: boolean;
  /** Whether an authenticator watches the vault (it has asked {@link Vault.whenEmpty}). */
  #watched = false;
  #lastError: unknown = undefined;
  #now: () => number;
  #random: () => number;
  /** The entry {@link Vault.select} returns while there is one set of credentials. */
  #single: VaultEntry | undefined;
  /**
   * Before this time (of `#now`) no current credentials expire: {@link Vault.expire} has
   * nothing to look at. -Infinity when unknown (the credentials changed).
   */
  #expiresAt = -Infinity;

  /**
   * Creates a vault, optionally pre-populated (then it is ready at once).
   *
   * @param src Initial credentials by key.
   * @param options Clock and randomness, for tests.
   */
  constructor(src?: VaultSource, options: VaultOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    if (src !== undefined) this.#update(src);
    this.#ready = !this.isEmpty();
  }

  /** Whether the credentials are ready to use (no re-login is pending). */
  get ready(): boolean {
    return this.#ready;
  }

  /**
   * Whether there are no unexpired credentials.
   *
   * @returns True if empty.
   */
  isEmpty(): boolean {
    const now = this.#now();
    for (const info of this.#current.values()) if (!info.isExpired(now)) return false;
    return true;
  }

  /**
   * Adds the credentials that login handlers returned and marks the vault
   * ready — also when nothing usable was given, so that waiting consumers
   * wake up and fail with a {@link LoginError}. Credentials that the same key
   * gave before and that were invalidated are ignored.
   *
   * @param src Credentials by key (login handler id).
   * @param options `error`: why the login failed, if it did (becomes the
   *   `cause` of the consumers' LoginError).
   */
  populate(src: VaultSource, options: { error?: unknown } = {}): void {
    this.#update(src);
    this.#lastError = options.error;
    this.#ready = true;
    this.#notify();
  }

  /**
   * The best credentials: the highest priority, random among equals. Waits
   * while a re-login is pending; discards expired credentials (and asks for a
   * re-login if that empties the vault).
   *
   * @param options `signal` stops the waiting.
   * @returns The key and the credentials.
   * @throws {LoginError} If the vault is ready but has no valid credentials.
   * @throws The signal's reason, if it aborts.
   */
  async select(options: { signal?: AbortSignal | undefined } = {}): Promise<VaultEntry> {
    for (;;) {
      if (!this.#ready) await this.whenReady(options.signal);
      this.expire();
      if (!this.#ready) continue;
      if (this.#current.size === 0) {
        throw new LoginError(
          OUT_OF_CREDENTIALS,
          this.#lastError === undefined ? undefined : { cause: this.#lastError },
        );
      }
      return this.#pick();
    }
  }

  /**
   * The credentials {@link Vault.select} would give now, if it would give them without
   * waiting; callers call `select()` when this gives nothing.
   *
   * @returns The key and the credentials; undefined while a re-login is pending or when
   *   no valid credentials are left (`select()` then waits or throws).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ConnectionInfo, Vault } from "@kopf/kopf";
   *
   * using vault = new Vault();
   * assert.equal(vault.selectNow(), undefined); // not ready: select() would wait
   * vault.populate({ login_fn: new ConnectionInfo({ server: "http://127.0.0.1:1" }) });
   * const entry = vault.selectNow() ?? await vault.select();
   * assert.equal(entry.key, "login_fn");
   * ```
   */
  selectNow(): VaultEntry | undefined {
    if (!this.#ready) return undefined;
    this.expire();
    if (!this.#ready || this.#current.size === 0) return undefined;
    return this.#pick();
  }

  /** The best of the current credentials (there are some): see {@link Vault.select}. */
  #pick(): VaultEntry {
    if (this.#current.size === 1) {
      // One set of credentials (the usual case): the same entry object every time.
      const single = this.#single;
      if (single !== undefined && this.#current.get(single.key) === single.info) return single;
      const [key, info] = this.#current.entries().next().value!;
      return this.#single = { key, info };
    }
    let top = -Infinity;
    let best: VaultEntry[] = [];
    for (const [key, info] of this.#current) {
      if (info.priority > top) [top, best] = [info.priority, []];
      if (info.priority === top) best.push({ key, info });
    }
    return best[Math.floor(this.#random() * best.length)] ?? best[0]!;
  }

  /**
   * Yields credentials to try until one is not invalidated while the
   * consumer holds it (Kopf's iteration protocol): `for await (const {key,
   * info} of vault) { try { return await call(info) } catch (e) { if (is401(e))
   * await vault.invalidate(key, info, { error: e }); else throw e; } }`.
   *
   * @returns The async iterator.
   */
  async *[Symbol.asyncIterator](): AsyncIterator<VaultEntry> {
    for (;;) {
      const entry = await this.select();
      yield entry;
      if (this.#current.get(entry.key) === entry.info) return;
    }
  }

  /**
   * Reports credentials as rejected (HTTP 401). They are removed and
   * remembered as invalid for their key. If nothing valid is left, the vault
   * becomes not ready (the authenticator re-runs the login handlers) and
   * this call waits for the new credentials. Concurrent calls for the same
   * credentials cause one re-login. `info` must be the object that
   * {@link Vault.select} gave: if the key holds other credentials by now
   * (someone else already re-logged in), nothing is removed.
   *
   * @param key The key from {@link Vault.select}.
   * @param info The credentials from {@link Vault.select}.
   * @param options `error`: the 401, as the cause of a LoginError; `signal`
   *   stops the waiting.
   * @throws {LoginError} If the re-login brought no valid credentials — or at once, if no
   *   authenticator watches the vault (none has asked {@link Vault.whenEmpty}).
   * @throws The signal's reason, if it aborts.
   */
  async invalidate(
    key: VaultKey,
    info: ConnectionInfo,
    options: { error?: unknown; signal?: AbortSignal | undefined } = {},
  ): Promise<void> {
    if (this.#current.get(key) === info) {
      const history = this.#invalid.get(key) ?? [];
      this.#invalid.set(key, [...history.slice(-2), info]);
      this.#current.delete(key);
      this.#expiresAt = -Infinity;
      this.#flush(info);
    }
    if (this.#current.size === 0) {
      // No authenticator: no re-login will ever come. The vault stays ready and empty (what
      // select() says then is this same LoginError), rather than a wait that never ends.
      if (!this.#watched) {
        this.#lastError = options.error ?? this.#lastError;
        throw new LoginError(
          OUT_OF_CREDENTIALS,
          this.#lastError === undefined ? undefined : { cause: this.#lastError },
        );
      }
      if (this.#ready) {
        this.#ready = false;
        this.#notify();
      }
      await this.whenReady(options.signal);
      if (this.#current.size === 0) {
        throw new LoginError(OUT_OF_CREDENTIALS, { cause: options.error ?? this.#lastError });
      }
    }
  }

  /**
   * Discards expired credentials (they may come back from a re-login, unlike
   * invalidated ones); marks the vault not ready if that empties it.
   */
  expire(): void {
    const now = this.#now();
    if (now < this.#expiresAt) return; // the usual case: nothing expires yet
    let expired = false;
    // No copy of the map per request: deleting the current entry while iterating is safe.
    this.#current.forEach((info, key) => {
      if (info.isExpired(now)) {
        this.#current.delete(key);
        this.#flush(info);
        expired = true;
      }
    });
    let earliest = Infinity;
    for (const info of this.#current.values()) {
      const at = info.expiration?.getTime();
      if (at !== undefined && at < earliest) earliest = at;
    }
    this.#expiresAt = earliest;
    if (expired && this.#current.size === 0 && this.#ready) {
      this.#ready = false;
      this.#notify();
    }
  }

  /**
   * Resolves when the vault is ready (no re-login pending).
   *
   * @param signal Stops the waiting.
   * @returns When ready.
   * @throws The signal's reason, if it aborts.
   */
  whenReady(signal?: AbortSignal): Promise<void> {
    return this.#waitFor(() => this.#ready, signal);
  }

  /**
   * Resolves when the vault needs a (re-)login: initially when empty, later
   * when all credentials were invalidated or expired. The authenticator's
   * loop: `for (;;) { await vault.whenEmpty(signal); vault.populate(await login()); }`.
   * Asking it makes the vault watched: from then on an invalidation that empties it waits
   * for the re-login (without one, it fails at once).
   *
   * @param signal Stops the waiting.
   * @returns When a login is needed.
   * @throws The signal's reason, if it aborts.
   */
  whenEmpty(signal?: AbortSignal): Promise<void> {
    this.#watched = true;
    return this.#waitFor(() => !this.#ready, signal);
  }

  /**
   * An object cached for these credentials (e.g. an HTTP client), made by
   * `factory` once per credentials and purpose. When the credentials leave
   * the vault, cached objects with a `close()` method are closed.
   *
   * @param info The credentials.
   * @param purpose A name for what is cached.
   * @param factory Makes the object.
   * @returns The cached object.
   */
  cached<T>(info: ConnectionInfo, purpose: string, factory: (info: ConnectionInfo) => T): T {
    let cache = this.#caches.get(info);
    if (!cache) this.#caches.set(info, cache = new Map());
    if (!cache.has(purpose)) cache.set(purpose, factory(info));
    return cache.get(purpose) as T;
  }

  /** Closes every cached object (at the operator's exit). The credentials stay. */
  close(): void {
    for (const info of [...this.#caches.keys()]) this.#flush(info);
  }

  /** Same as {@link Vault.close}, for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }

  #update(src: VaultSource): void {
    const entries = Symbol.iterator in src
      ? [...(src as Iterable<readonly [VaultKey, ConnectionInfo | null | undefined]>)]
      : Object.entries(src);
    for (const [key, info] of entries) {
      if (info === null || info === undefined) continue;
      if (!(info instanceof ConnectionInfo)) {
        throw new TypeError(`Login handler "${key}" returned something else than a ConnectionInfo`);
      }
      if ((this.#invalid.get(key) ?? []).some((bad) => bad.equals(info))) continue;
      const old = this.#current.get(key);
      this.#current.set(key, info);
      this.#expiresAt = -Infinity;
      if (old && old !== info) this.#flush(old);
    }
  }

  #flush(info: ConnectionInfo): void {
    const cache = this.#caches.get(info);
    this.#caches.delete(info);
    for (const obj of cache?.values() ?? []) {
      const close = (obj as { close?: unknown } | null)?.close;
      if (typeof close === "function") {
        try {
          close.call(obj);
        } catch {
          // Closing is best effort: a client already closed must not break the vault.
        }
      }
    }
  }

  #notify(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }

  async #waitFor(condition: () => boolean, signal?: AbortSignal): Promise<void> {
    while (!condition()) {
      signal?.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          this.#waiters.delete(wake);
          reject(signal!.reason);
        };
        const wake = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        this.#waiters.add(wake);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
  }
}
