/**
 * Off means free: without `OTEL_DENO` (as the tests run), the tracing module decides at load
 * that tracing is off, and every helper returns at once without making anything; the pure
 * attribute builders are tested by their examples (`src/cogs/tracing/attributes.ts`).
 */
import assert from "node:assert/strict";
import {
  activeSpan,
  extractTraceContext,
  inSpan,
  iterationBoundary,
  logTraceFields,
  otelWanted,
  spanAttribute,
  startSpan,
  TRACING,
} from "../../src/cogs/tracing/tracing.ts";
import { traceHandler } from "../../src/core/actions/handler_tracing.ts";
import { formatRecord, OperatorLogger } from "../../src/core/actions/loggers.ts";

Deno.test("tracing off: no span, no context, no ids in log lines; functions run as they are", () => {
  assert.equal(Deno.env.get("OTEL_DENO"), undefined, "the tests run without OTEL_DENO");
  assert.equal(TRACING, false);
  assert.equal(startSpan("kopf.cycle x", { a: 1 }, { root: true }), undefined);
  assert.equal(activeSpan(), undefined);
  assert.equal(logTraceFields(), undefined);
  assert.equal(iterationBoundary(), undefined);
  assert.equal(
    extractTraceContext(() => "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
    undefined,
  );
  spanAttribute("kopf.cause", "create"); // nothing to set, nothing thrown
  assert.equal(inSpan(undefined, (a: number, b: number) => a + b, 2, 3), 5);
  const line = JSON.parse(formatRecord(
    { level: "info", message: "Hi.", time: new Date(0), logger: "kopf" },
    { format: "json" },
  ));
  assert.deepEqual(Object.keys(line).sort(), ["message", "severity", "timestamp"]);
});

Deno.test("tracing off: the handler hooks are not made (execution.ts tests TRACING first); when called, index handlers have none", () => {
  assert.equal(traceHandler("idx", "index", 0, new OperatorLogger(() => {})), undefined);
});

Deno.test("otelWanted(): OTEL_DENO=true or 1 turns tracing on, anything else leaves it off", () => {
  for (const v of ["true", "TRUE", "1", " true "]) assert.equal(otelWanted(v), true, v);
  for (const v of [undefined, "", "false", "0", "yes"]) {
    assert.equal(otelWanted(v), false, String(v));
  }
});
