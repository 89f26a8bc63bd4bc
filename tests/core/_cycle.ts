/**
 * What the tests of one processing cycle (processEvent over a fake object API, no API server)
 * share: the resource and an operator's context.
 *
 * @module
 */

import * as kopf from "../../mod.ts";
import { getDefaultLifecycle } from "../../src/core/actions/lifecycles.ts";
import type { OperatorContext } from "../../src/core/reactor/processing.ts";

/** The examples' resource, `kopfexamples.v1.kopf.dev`. */
export const KEX: kopf.Resource = new kopf.Resource({
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
});

/**
 * An operator's context for cycles run by hand: default settings, no posting.
 *
 * @param registry The handlers.
 * @param lines Where the log lines' messages go (at debug level and above), if given.
 * @returns The context.
 */
export function operatorContext(
  registry: kopf.OperatorRegistry,
  lines?: string[],
): OperatorContext {
  return {
    registry,
    settings: new kopf.OperatorSettings(),
    memo: {},
    indices: {},
    sink: lines
      ? Object.assign((r: kopf.LogRecord) => void lines.push(r.message), {
        level: "debug" as const,
      })
      : () => {},
    post: () => {},
    lifecycle: getDefaultLifecycle(),
  };
}
