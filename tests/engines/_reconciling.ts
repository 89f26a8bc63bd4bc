/**
 * A rig for reconcilers on a fake clock: the engine (`Reconcilers`) with a
 * `FakeClock`, one parent (a KopfExample) behind a fake `ObjectApi` that
 * records the patches, children (pods) fed as the watch loop feeds them, and
 * the log lines — no API server, no sockets, no wall clock. Tests register
 * with `{ registry: rig.registry }`, call `rig.start()` (the watchers start and
 * list), `rig.observe()` as the reactor does on every parent event,
 * `rig.child(...)` for child events, and move time with `rig.clock.advance()`.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { FakeClock } from "../../src/cogs/aio/fake_clock.ts";
import { ToggleSet } from "../../src/cogs/aio/toggles.ts";
import { applyMergePatch } from "../../src/cogs/structs/merge_patch.ts";
import type { ObjectApi } from "../../src/core/actions/application.ts";
import type { LogRecord } from "../../src/core/actions/loggers.ts";
import { Reconcilers } from "../../src/core/engines/reconciling.ts";
import type { AnyObject } from "../../src/core/intents/handlers.ts";

/** The parents' resource. */
export const PARENTS = new kopf.Resource({
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
  namespaced: true,
});

/** The children's resource. */
export const PODS = new kopf.Resource({
  group: "",
  version: "v1",
  plural: "pods",
  kind: "Pod",
  namespaced: true,
});

/** The watchers' keys, as the orchestrator makes them. */
export const STREAMS = { parents: "kopfexamples.v1.kopf.dev@*#1", pods: "pods.v1@*#2" };

/** One parent and its children, on a fake clock. */
export class Rig {
  /** The time: moves only with `advance()`. */
  readonly clock: FakeClock = new FakeClock();
  /** Where the tests register their reconcilers. */
  readonly registry: kopf.OperatorRegistry = new kopf.OperatorRegistry();
  /** The operator's settings (posting off). */
  readonly settings: kopf.OperatorSettings = new kopf.OperatorSettings();
  /** Every log record, in order. */
  readonly records: LogRecord[] = [];
  /** The operator's pause gate. */
  readonly paused: ToggleSet = new ToggleSet();
  /** Every merge patch sent to the parent, with the fake time it was sent at. */
  readonly patches: Array<{ at: number; patch: AnyObject }> = [];
  /** The parent as the fake API server holds it. */
  body: AnyObject = {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "kex", namespace: "default", uid: "p1", resourceVersion: "1" },
    spec: { size: 1 },
  };
  /** The children as the fake API server holds them, by name. */
  readonly pods = new Map<string, AnyObject>();
  #engine: Reconcilers | undefined;
  #version = 100;

  /** The engine, made on first use (so that tests may change the settings before). */
  get engine(): Reconcilers {
    return this.#engine ??= new Reconcilers({
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

  /** The fake API: a merge patch applied to the parent, which gets a new resourceVersion. */
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
   * The watchers start (parents' and children's), as the orchestrator starts them.
   *
   * @param listed Whether their initial listings complete at once (default true).
   */
  start(listed = true): void {
    this.engine.watching(PARENTS, STREAMS.parents);
    this.engine.watching(PODS, STREAMS.pods);
    if (listed) this.list();
  }

  /** The watchers' initial listings complete. */
  list(): void {
    this.engine.listed(STREAMS.parents);
    this.engine.listed(STREAMS.pods);
  }

  /**
   * A parent event, as the reactor reports it after the parent's cycle: after a change, if one
   * is given (a merge patch: a new resourceVersion).
   *
   * @param change A merge patch to apply first.
   */
  observe(change?: AnyObject): void {
    if (change) this.body = this.#bump(applyMergePatch(this.body, change) as AnyObject);
    this.engine.observe(PARENTS, this.api, this.body, false, { memo: {} });
  }

  /** The parent is deleted (or marked for deletion). */
  delete(): void {
    this.engine.observe(PARENTS, this.api, this.body, true, { memo: {} });
  }

  /**
   * A child event: a pod owned by `owner` (default: the parent) is added, changed or deleted.
   *
   * @param name The pod's name.
   * @param change Its new spec (for ADDED/MODIFIED).
   * @param type The event type.
   * @param owner The owner reference (default: the parent's).
   */
  child(
    name: string,
    change: AnyObject = {},
    type: "ADDED" | "MODIFIED" | "DELETED" | null = "MODIFIED",
    owner: AnyObject = { apiVersion: "kopf.dev/v1", kind: "KopfExample", name: "kex", uid: "p1" },
  ): void {
    const old = this.pods.get(name);
    const pod = type === "DELETED" && old ? old : this.#bump({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name,
        namespace: "default",
        uid: old?.metadata.uid ?? `uid-${name}`,
        ownerReferences: [owner],
      },
      spec: { ...old?.spec, ...change },
    });
    if (type === "DELETED") this.pods.delete(name);
    else this.pods.set(name, pod);
    this.engine.observeChild(PODS, STREAMS.pods, {
      type: old || type !== "MODIFIED" ? type : "ADDED",
      object: pod,
    });
  }

  /** Stops whatever still runs (the test's end), on the fake clock. */
  async close(): Promise<void> {
    let closed = false;
    const closing = this.engine.close().then(() => (closed = true));
    assert.ok(
      await this.clock.advanceUntil(() => closed, 60),
      "the engine closed within 60 fake s",
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
