/**
 * The type level of typed resources, their versions and typed indices: fixtures under
 * tests/fixtures/typed/ that must pass or fail `deno check`. Their runtime side is in
 * typed_resources_test.ts, typed_versions_test.ts and typed_indices_test.ts.
 *
 * Why one file: a check type-checks the module's whole graph (seconds of CPU each time, and a
 * fixture that fails is never in Deno's check cache), so every fixture here is checked in one
 * `deno check` process, once per run; each test reads what its fixtures got. A good fixture
 * passes when no error is in it or in anything it imports but the other fixtures
 * ({@link strayErrors}); a bad one fails with exactly its errors.
 */
import assert from "node:assert/strict";
import { errorsByFile, sharedCheck, strayErrors } from "./_type_check.ts";

/** The fixtures meant to fail, by the test that owns them. */
const BAD = {
  resources: ["typo.ts", "typo_field.ts", "typo_patch.ts"],
  versions: [
    "convert_bad_body.ts",
    "convert_bad_result.ts",
    "convert_bad_version.ts",
    "versions_bad_field.ts",
    "versions_bad_storage.ts",
    "versions_bad_whole.ts",
  ],
  indices: ["indices_bad_key.ts", "indices_bad_value.ts", "indices_typo.ts"],
};
const GOOD = ["ok.ts", "versions_ok.ts", "indices_ok.ts"];
const ALL = [...GOOD, ...Object.values(BAD).flat()];
const check = sharedCheck(...ALL.map((f) => `tests/fixtures/typed/${f}`));

/**
 * The time limit of each test here: whichever runs first waits for the one `deno check` of the
 * whole graph, which took ~57 s on a loaded two-core machine running four test files at once —
 * too close to the default limit.
 */
const CHECK_LIMIT_MS = 300_000;

/** Asserts that `file` type-checks: no error in it, or in what it imports. */
async function passes(file: string): Promise<void> {
  const { output } = await check();
  assert.deepEqual(strayErrors(output, ALL.filter((f) => f !== file)), [], output);
}

/** The check's errors in `files` (each fixture's error lines); fails if it passed. */
async function failures(
  files: string[],
): Promise<{ errors: Map<string, string[]>; output: string }> {
  const { code, output } = await check();
  assert.notEqual(code, 0, output);
  const errors = new Map([...errorsByFile(output)].filter(([f]) => files.includes(f)));
  assert.deepEqual([...errors.keys()].sort(), [...files].sort(), output);
  return { errors, output };
}

Deno.test({
  name: "type level: correct use of a typed resource passes deno check",
  timeout: CHECK_LIMIT_MS,
}, async () => {
  await passes("ok.ts");
});

Deno.test({
  name:
    "type level: a typo of spec.size fails deno check (in spec, in the field option, in patch.status)",
  timeout: CHECK_LIMIT_MS,
}, async () => {
  const { errors, output } = await failures(BAD.resources);
  assert.match(errors.get("typo.ts")!.join("\n"), /Property 'sise' does not exist/);
  assert.match(output, /"spec\.sise"/);
  assert.match(output, /pvcname/);
  assert.match(output, /typo\.ts/);
  assert.match(output, /typo_field\.ts/);
  assert.match(output, /typo_patch\.ts/);
});

Deno.test({
  name:
    "type level: versions are typed resources; converters are typed from one version to another",
  timeout: CHECK_LIMIT_MS,
}, async () => {
  await passes("versions_ok.ts");
});

Deno.test({
  name:
    "type level: a wrong storage, handlers on all versions, a field of another version, a wrong conversion fail deno check",
  timeout: CHECK_LIMIT_MS,
}, async () => {
  const { errors, output } = await failures(BAD.versions);
  assert.deepEqual(errors.get("versions_bad_field.ts"), [
    "TS2339 [ERROR]: Property 'size' does not exist on type '{ storage: { class?: string | undefined; size: string; }; }'.",
  ]);
  assert.deepEqual(errors.get("convert_bad_body.ts"), [
    "TS2339 [ERROR]: Property 'storage' does not exist on type '{ size: string; }'.",
  ]);
  const others = BAD.versions.filter((f) =>
    !["versions_bad_field.ts", "convert_bad_body.ts"].includes(f)
  );
  for (const file of others) {
    assert.deepEqual(errors.get(file), ["TS2769 [ERROR]: No overload matches this call."], file);
  }
  assert.match(output, /Type '"v3"' is not assignable to type '"v[12]" \| "v[12]"'/);
  assert.match(output, /Property 'storage' is missing in type '\{ size: string; \}'/);
});

Deno.test({
  name:
    "type level: index handles are typed by the function's result (dict, Map, other values, async; typed resources)",
  timeout: CHECK_LIMIT_MS,
}, async () => {
  await passes("indices_ok.ts");
});

Deno.test({
  name:
    "type level: a wrong key, a wrong value type, a typo in a typed indexer's spec fail deno check",
  timeout: CHECK_LIMIT_MS,
}, async () => {
  const { errors } = await failures(BAD.indices);
  assert.deepEqual(errors.get("indices_bad_key.ts"), [
    "TS2345 [ERROR]: Argument of type 'number' is not assignable to parameter of type 'string'.",
  ]);
  assert.deepEqual(errors.get("indices_bad_value.ts"), [
    "TS2322 [ERROR]: Type 'string[]' is not assignable to type 'number[]'.",
  ]);
  assert.deepEqual(errors.get("indices_typo.ts"), [
    "TS2339 [ERROR]: Property 'sise' does not exist on type '{ size: string; }'.",
  ]);
});
