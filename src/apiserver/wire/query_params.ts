/**
 * The query parameters of every verb, read as kube-apiserver reads them: one
 * table per verb (the fields of its `*Options` kind), decoded by the rules of
 * apimachinery's query conversion, then checked as its `Validate*Options` do.
 *
 * Why one table: a client's query must mean the same on every verb. Python's
 * official client sends `watch=True` and `force=True`; kube-apiserver takes any
 * boolean value but `0` and `false` (any case) as true — the empty string
 * included — so a server that only knew `true` answered a watch with a List.
 *
 * The rules (apimachinery `runtime/conversion.go`, `meta/v1/validation`):
 * - a parameter's first value counts; an absent one is unset;
 * - booleans: `"0"` or `"false"` (any case) false, any other value true;
 * - integers: Go's `strconv.ParseInt(v, 10, 64)` — a sign, decimal digits, no
 *   blanks; else 400 with Go's own words (`strconv.ParseInt: parsing "x":
 *   invalid syntax` / `value out of range`);
 * - `dryRun` is a list (every value must be `All`), the rest are strings;
 * - `pretty` is not part of the options: any verb; Go's `strconv.ParseBool`
 *   (`1 t T TRUE true True` / `0 f F FALSE false False`, else false) when
 *   given and not empty, else true for the User-Agents `curl…`, `Wget…` and
 *   `Mozilla/5.0…` (kube-apiserver's "human" clients) — pretty JSON is Go's
 *   `MarshalIndent`: two spaces, no trailing newline.
 *
 * Options checked after decoding answer 422 on the options kind
 * (`CreateOptions.meta.k8s.io "" is invalid: …`), as kube-apiserver does.
 *
 * @module
 */

import { ApiError, type StatusCause } from "../shared/errors.ts";

/** How a parameter's text is read. */
export type ParamType = "bool" | "int64" | "string" | "strings";

/** The verbs whose parameters are read here. */
export type Verb =
  | "get"
  | "list"
  | "watch"
  | "create"
  | "update"
  | "patch"
  | "delete"
  | "deletecollection";

/** `ListOptions`, in kube's field order (the first bad one is the one reported). */
const LIST_OPTIONS = {
  labelSelector: "string",
  fieldSelector: "string",
  watch: "bool",
  allowWatchBookmarks: "bool",
  resourceVersion: "string",
  resourceVersionMatch: "string",
  timeoutSeconds: "int64",
  limit: "int64",
  continue: "string",
  sendInitialEvents: "bool",
} as const;

/** `TableOptions` (read when a Table is asked for). */
const TABLE_OPTIONS = { includeObject: "string" } as const;

/** `CreateOptions` and `UpdateOptions`. */
const WRITE_OPTIONS = {
  dryRun: "strings",
  fieldManager: "string",
  fieldValidation: "string",
} as const;

/** `DeleteOptions` from the query (only when the request has no body). */
const DELETE_OPTIONS = {
  gracePeriodSeconds: "int64",
  orphanDependents: "bool",
  propagationPolicy: "string",
  dryRun: "strings",
} as const;

/**
 * The parameters of each verb and how each is read (`pretty` is every verb's; see the module).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { QUERY_PARAMETERS } from "./query_params.ts";
 * assert.deepEqual(QUERY_PARAMETERS.patch.force, "bool");
 * ```
 */
export const QUERY_PARAMETERS = {
  get: { resourceVersion: "string", ...TABLE_OPTIONS },
  list: { ...LIST_OPTIONS, ...TABLE_OPTIONS },
  watch: { ...LIST_OPTIONS, ...TABLE_OPTIONS },
  create: WRITE_OPTIONS,
  update: WRITE_OPTIONS,
  patch: { dryRun: "strings", force: "bool", fieldManager: "string", fieldValidation: "string" },
  delete: DELETE_OPTIONS,
  deletecollection: { ...LIST_OPTIONS, ...DELETE_OPTIONS },
} as const satisfies Record<Verb, Record<string, ParamType>>;

type ValueOf<T extends ParamType> = T extends "bool" ? boolean
  : T extends "int64" ? number
  : T extends "strings" ? string[]
  : string;

/** The decoded parameters of a verb: each present one, typed by the table. */
export type Decoded<V extends Verb> = {
  -readonly [K in keyof (typeof QUERY_PARAMETERS)[V]]?: (typeof QUERY_PARAMETERS)[V][K] extends
    ParamType ? ValueOf<(typeof QUERY_PARAMETERS)[V][K]>
    : never;
};

/**
 * A boolean parameter as kube-apiserver reads it: `"0"` and `"false"` (any case) are false,
 * anything else — the empty string too — is true.
 *
 * @param value The parameter's (first) value.
 * @returns The boolean.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { queryBool } from "./query_params.ts";
 * assert.deepEqual(["True", "", "no", "FALSE", "0"].map(queryBool), [true, true, true, false, false]);
 * ```
 */
export function queryBool(value: string): boolean {
  return !(value === "0" || value.toLowerCase() === "false");
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * An integer parameter as Go's `strconv.ParseInt(value, 10, 64)` reads it.
 *
 * @param value The parameter's (first) value.
 * @returns The number.
 * @throws {ApiError} 400 BadRequest in Go's words.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { queryInt64 } from "./query_params.ts";
 * assert.deepEqual(queryInt64("+030"), 30);
 * assert.throws(() => queryInt64("1.5"), /strconv.ParseInt: parsing "1.5": invalid syntax/);
 * ```
 */
export function queryInt64(value: string): number {
  if (!/^[+-]?[0-9]+$/.test(value)) {
    throw ApiError.badRequest(`strconv.ParseInt: parsing ${goQuote(value)}: invalid syntax`);
  }
  const big = BigInt(value);
  if (big < INT64_MIN || big > INT64_MAX) {
    throw ApiError.badRequest(`strconv.ParseInt: parsing ${goQuote(value)}: value out of range`);
  }
  return Number(big);
}

/**
 * Decodes the query of a verb by its table: present parameters only, each by its type.
 *
 * @param verb The verb.
 * @param q The query.
 * @returns The decoded parameters.
 * @throws {ApiError} 400 for an integer that does not parse (the first in the table's order).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeQuery } from "./query_params.ts";
 * const q = new URLSearchParams("watch=True&timeoutSeconds=5&dryRun=All&x=1");
 * assert.deepEqual(decodeQuery("watch", q), { watch: true, timeoutSeconds: 5 });
 * ```
 */
export function decodeQuery<V extends Verb>(verb: V, q: URLSearchParams): Decoded<V> {
  const out: Record<string, unknown> = {};
  if (q.size === 0) return out as Decoded<V>;
  const table = QUERY_PARAMETERS[verb] as Record<string, ParamType>;
  for (const name in table) {
    const type = table[name]!;
    if (type === "strings") {
      const all = q.getAll(name);
      if (all.length) out[name] = all;
      continue;
    }
    const value = q.get(name);
    if (value === null) continue;
    out[name] = type === "bool" ? queryBool(value) : type === "int64" ? queryInt64(value) : value;
  }
  return out as Decoded<V>;
}

/**
 * Whether a request's answer is pretty-printed, as kube-apiserver decides it.
 *
 * @param q The query.
 * @param userAgent The `User-Agent` header.
 * @returns Whether to indent the JSON.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isPretty } from "./query_params.ts";
 * assert.deepEqual(isPretty(new URLSearchParams(""), "curl/8.5.0"), true);
 * assert.deepEqual(isPretty(new URLSearchParams("pretty=yes"), "curl/8.5.0"), false);
 * ```
 */
export function isPretty(q: URLSearchParams, userAgent: string | null): boolean {
  const pp = q.size ? q.get("pretty") : null;
  if (pp) return GO_TRUE.has(pp);
  if (!userAgent) return false;
  return userAgent.startsWith("curl") || userAgent.startsWith("Wget") ||
    userAgent.startsWith("Mozilla/5.0");
}

const GO_TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);

/** Options of a create, an update or a patch, checked. */
export interface WriteParams {
  dryRun: boolean;
  fieldManager?: string;
  fieldValidation?: "Strict" | "Warn" | "Ignore";
  /** `force` (patch only; apply only). */
  force?: boolean;
}

/**
 * Checks the options of a write as `ValidateCreateOptions` / `ValidateUpdateOptions` /
 * `ValidatePatchOptions` do.
 *
 * @param verb `create`, `update` or `patch`.
 * @param p The decoded parameters.
 * @param apply Whether the patch is a server-side apply.
 * @returns The options.
 * @throws {ApiError} 422 Invalid on the options kind.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkWriteOptions } from "./query_params.ts";
 * assert.throws(
 *   () => checkWriteOptions("patch", { force: false }, false),
 *   /PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch/,
 * );
 * ```
 */
export function checkWriteOptions(
  verb: "create" | "update" | "patch",
  p: Decoded<"patch">,
  apply: boolean,
): WriteParams {
  const causes: StatusCause[] = [];
  if (verb === "patch") {
    if (!apply && p.force !== undefined) {
      causes.push(forbidden("force", "may not be specified for non-apply patch"));
    }
    if (apply && !p.fieldManager) {
      causes.push({
        reason: "FieldValueRequired",
        message: "Required value: is required for apply patch",
        field: "fieldManager",
      });
    }
  }
  const manager = p.fieldManager ?? "";
  if (manager.length > 128) {
    causes.push({
      reason: "FieldValueTooLong",
      message: "Too long: may not be more than 128 bytes",
      field: "fieldManager",
    });
  }
  for (const [i, ch] of [...manager].entries()) {
    if (/[\p{C}\p{Z}]/u.test(ch) && ch !== " ") {
      causes.push({
        reason: "FieldValueInvalid",
        message: `Invalid value: ${goQuote(manager)}: invalid character ${
          goRune(ch)
        } (at position ${byteOffset(manager, i)})`,
        field: "fieldManager",
      });
    }
  }
  causes.push(...dryRunCauses(p.dryRun));
  const validation = p.fieldValidation ?? "";
  if (!["", "Ignore", "Strict", "Warn"].includes(validation)) {
    causes.push({
      reason: "FieldValueNotSupported",
      message: `Unsupported value: ${
        goQuote(validation)
      }: supported values: "", "Ignore", "Strict", "Warn"`,
      field: "fieldValidation",
    });
  }
  const kind = verb === "create"
    ? "CreateOptions"
    : verb === "update"
    ? "UpdateOptions"
    : "PatchOptions";
  if (causes.length) throw ApiError.invalid(kind, "meta.k8s.io", "", causes);
  const out: WriteParams = { dryRun: (p.dryRun ?? []).length > 0 };
  if (manager) out.fieldManager = manager;
  if (validation) out.fieldValidation = validation as WriteParams["fieldValidation"];
  if (apply) out.force = p.force ?? false;
  return out;
}

/** Options of a delete, checked. */
export interface DeleteParams {
  propagationPolicy?: "Background" | "Foreground" | "Orphan";
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  dryRun: boolean;
}

/**
 * Checks the options of a delete (from its body, or else from its query) as
 * `ValidateDeleteOptions` does.
 *
 * @param o The options: `propagationPolicy`, `orphanDependents`, `gracePeriodSeconds`, `dryRun`.
 * @returns The options.
 * @throws {ApiError} 422 Invalid on `DeleteOptions.meta.k8s.io`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkDeleteOptions } from "./query_params.ts";
 * assert.throws(
 *   () => checkDeleteOptions({ propagationPolicy: "Later" }),
 *   /propagationPolicy: Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan", "nil"/,
 * );
 * ```
 */
export function checkDeleteOptions(
  o: { propagationPolicy?: string; orphanDependents?: boolean; dryRun?: string[] },
): { propagationPolicy?: DeleteParams["propagationPolicy"]; dryRun: boolean } {
  const causes: StatusCause[] = [];
  const policy = o.propagationPolicy;
  if (o.orphanDependents !== undefined && policy !== undefined) {
    causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid value: ${
        goQuote(policy)
      }: orphanDependents and deletionPropagation cannot be both set`,
      field: "propagationPolicy",
    });
  }
  if (
    policy !== undefined && policy !== "Foreground" && policy !== "Background" &&
    policy !== "Orphan"
  ) {
    causes.push({
      reason: "FieldValueNotSupported",
      message: `Unsupported value: ${
        goQuote(policy)
      }: supported values: "Foreground", "Background", "Orphan", "nil"`,
      field: "propagationPolicy",
    });
  }
  causes.push(...dryRunCauses(o.dryRun));
  if (causes.length) throw ApiError.invalid("DeleteOptions", "meta.k8s.io", "", causes);
  const out: { propagationPolicy?: DeleteParams["propagationPolicy"]; dryRun: boolean } = {
    dryRun: (o.dryRun ?? []).length > 0,
  };
  if (policy !== undefined) out.propagationPolicy = policy as DeleteParams["propagationPolicy"];
  else if (o.orphanDependents === true) out.propagationPolicy = "Orphan";
  return out;
}

/** `dryRun` must hold only `All` (kube: `Unsupported value: []string{"x"}: supported values: "All"`). */
function dryRunCauses(values: string[] | undefined): StatusCause[] {
  if (!values || values.every((v) => v === "All")) return [];
  return [{
    reason: "FieldValueNotSupported",
    message: `Unsupported value: []string{${
      values.map(goQuote).join(", ")
    }}: supported values: "All"`,
    field: "dryRun",
  }];
}

function forbidden(field: string, detail: string): StatusCause {
  return { reason: "FieldValueForbidden", message: `Forbidden: ${detail}`, field };
}

/** Go's `%q` of a string, close enough for parameter values (JSON's escapes). */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** Go's `%#U` of a rune: `U+0009`. */
function goRune(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** The byte offset (UTF-8) of the `index`th code point, as Go's range over a string counts. */
function byteOffset(s: string, index: number): number {
  return new TextEncoder().encode([...s].slice(0, index).join("")).length;
}
