/**
 * Structural OpenAPI v3 schemas of CustomResourceDefinitions
 * (`spec.versions[].schema.openAPIV3Schema`), applied to custom resources the
 * way kube-apiserver applies them on every create, update and patch:
 *
 * 1. {@linkcode pruneUnknownFields} drops fields the schema does not declare
 *    (the paths feed `fieldValidation=Strict|Warn`);
 * 2. {@linkcode applyDefaults} fills in `default`s (and drops non-nullable
 *    nulls that have no default);
 * 3. {@linkcode validateAgainstSchema} reports what is still wrong, as
 *    `StatusCause`s worded like kube-apiserver's, so that clients and tests
 *    written against a real cluster see the same 422 answers here.
 *
 * It exists because operators are tested against this embedded server: a
 * resource that a real cluster would reject, prune or default must behave the
 * same here. The functions are pure and copy-on-write: when nothing changes
 * they return the input itself, and when something changes only the objects on
 * the path to the change are copied (unchanged subtrees are shared).
 *
 * @module
 */

export type { FieldCause } from "./schema_common.ts";
export { applyDefaults } from "./schema_defaults.ts";
export { pruneUnknownFields } from "./schema_pruning.ts";
export { validateAgainstSchema } from "./schema_validation.ts";
