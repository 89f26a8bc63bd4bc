/**
 * A rig for daemons and timers on a fake clock: the engine (`Daemons`) with a
 * `FakeClock`, an in-memory object behind a fake `ObjectApi` that records
 * the patches, and the log lines — no API server, no sockets, no wall clock.
 * Tests register handlers with `{ registry: rig.registry }`, call
 * `rig.observe()` as the reactor would on every event, and move time with
 * `rig.clock.advance(seconds)`.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { FakeClock } from "../../src/cogs/aio/fake_clock.ts";
import { ToggleSet } from "../../src/cogs/aio/toggles.ts";
import { applyMergePatch } from "../../src/cogs/structs/merge_patch.ts";
import type { ObjectApi } from "../../src/core/actions/application.ts";
import type { LogRecord } from "../../src/core/actions/loggers.ts";
import { Daemons, type SpawnedObject } from "../../src/core/engines/daemons.ts";
import type { AnyObject, DaemonStoppingReason } from "../../src/core/intents/handlers.ts";

/** The resource of the rig's object. */
export const RESOURCE = new kopf.Resource({
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
  namespaced: true,
});

/** One object, its daemons and timers, on a fake clock. */
export class Rig {
  /** The time: moves only with `advance()`. */
  readonly clock: FakeClock = new FakeClock();
  /** Where the tests register their daemons and timers. */
  readonly registry: kopf.OperatorRegistry = new kopf.OperatorRegistry();
  /** The operator's settings (posting off). */
  readonly settings: kopf.OperatorSettings = new kopf.OperatorSettings();
  /** Every log record, in order. */
  readonly records: LogRecord[] = [];
  /** The operator's pause gate (peering): tests hold it with toggles of their own. */
  readonly paused: ToggleSet = new ToggleSet();
  /** Every merge patch the engine sent, in order, with the fake time it was sent at. */
  readonly patches: Array<{ at: number; patch: AnyObject }> = [];
  /** The object as the fake API server holds it. */
  body: AnyObject = {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "kex", namespace: "default", uid: "uid-1", resourceVersion: "1" },
    spec: {},
  };
  /** The engine's record of the object (after the first `observe()`). */
  state: SpawnedObject | undefined;
  #daemons: Daemons | undefined;
  #version = 1;

  /** The engine, made on first use (so that tests may change the settings before). */
  get daemons(): Daemons {
    return this.#daemons ??= new Daemons({
      registry: this.registry,
      settings: this.settings,
      memo: {},
      indices: {},
      sink: (record) => void this.records.push(record),
      post: () => {},
      clock: this.clock,
      paused: this.paused,
    });
  }

  /** The fake API: a merge patch applied to the one object, which gets a new resourceVersion. */
  readonly api: ObjectApi = {
    patch: (_name, _namespace, patch) => {
      this.patches.push({ at: this.now(), patch: patch as AnyObject });
      this.body = this.#bump(applyMergePatch(this.body, patch) as AnyObject);
      return Promise.resolve(this.body);
    },
    get: () => Promise.resolve(this.body),
  };

  constructor() {
    this.settings.posting.enabled = false;
  }

  /** The fake time in seconds. */
  now(): number {
    return this.clock.now() / 1000;
  }

  /** The messages logged so far (without the object prefix). */
  get lines(): string[] {
    return this.records.map((r) => r.message);
  }

  /**
   * Tells the engine about the object, as the reactor does on every event: after a change,
   * if one is given (a merge patch: a new resourceVersion, so a change for `idle`).
   *
   * @param change A merge patch to apply first.
   */
  observe(change?: AnyObject): void {
    if (change) this.body = this.#bump(applyMergePatch(this.body, change) as AnyObject);
    this.state = this.daemons.observe(this.state, RESOURCE, this.api, this.body, { memo: {} });
  }

  /**
   * Asks everything of the object to stop, as on its deletion.
   *
   * @param reason Why (default: resource deleted).
   */
  stop(reason: DaemonStoppingReason = "resource deleted"): void {
    this.daemons.stopObject(this.state!, reason);
  }

  /** How many daemons and timers of the object run (or exit). */
  get running(): number {
    return this.state?.running.size ?? 0;
  }

  /** Stops whatever still runs (the test's end), on the fake clock. */
  async close(): Promise<void> {
    let closed = false;
    const closing = this.daemons.close().then(() => (closed = true));
    assert.ok(
      await this.clock.advanceUntil(() => closed, 60),
      "the daemons closed within 60 fake s",
    );
    await closing;
  }

  #bump(body: AnyObject): AnyObject {
    return { ...body, metadata: { ...body.metadata, resourceVersion: String(++this.#version) } };
  }
}

/** A promise with its resolver: for handlers that wait until the test lets them go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
