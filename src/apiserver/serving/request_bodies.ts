/**
 * What a write request says besides its URL, read as kube-apiserver reads it:
 * the write options of its query (`dryRun`, `fieldManager`, `fieldValidation`,
 * `force`), its body decoded (JSON, YAML or protobuf, with the body limit, the
 * nesting limit, Go's wording of syntax errors and the duplicate fields that
 * `fieldValidation` reports), the patch type of its Content-Type, and
 * DeleteOptions from the body or the query.
 *
 * @module
 */

import { ApiError } from "../shared/errors.ts";
import { goJsonSyntaxError, summarizeBody } from "../wire/go_json_error.ts";
import { countKeys, depthAndMembers, findDuplicates } from "../wire/json_duplicates.ts";
import { parseYamlLenient, yamlDuplicates } from "../wire/yaml_duplicates.ts";
import type {
  DeleteOptions,
  FieldValidation,
  PatchType,
  WriteOptions,
} from "../objects/write_types.ts";
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from "../wire/protobuf.ts";
import {
  checkDeleteOptions,
  checkWriteOptions,
  type Decoded,
  decodeQuery,
} from "../wire/query_params.ts";
import {
  checkDecoded,
  MAX_JSON_DEPTH,
  parseJsonBody,
  readBodyLimited,
  tooDeep,
} from "../wire/request_limits.ts";

/** The options of a write from its query, decoded and checked as kube-apiserver does (422). */
export function writeOptions(
  q: URLSearchParams,
  verb: "create" | "update" | "patch",
  apply = false,
): WriteOptions {
  // No query: nothing to decode or refuse (an apply, which needs a field manager, is refused below).
  if (q.size === 0 && !apply) return {};
  const checked = checkWriteOptions(verb, decodeQuery("patch", q) as Decoded<"patch">, apply);
  if (verb !== "patch") delete checked.force;
  const options: WriteOptions = {};
  if (checked.dryRun) options.dryRun = true;
  if (checked.fieldManager) options.fieldManager = checked.fieldManager;
  if (checked.fieldValidation) options.fieldValidation = checked.fieldValidation as FieldValidation;
  if (checked.force !== undefined) options.force = checked.force;
  return options;
}

/**
 * Server-side apply's keys sent twice: kube decodes the apply patch leniently, applies it, then
 * decodes it strictly with go-yaml — a 400 under `fieldValidation=Strict`, one warning per key
 * otherwise. (Here the 400 comes before the apply's own errors, not after.)
 */
export function applyDuplicates(options: WriteOptions): string[] {
  const yaml = options.duplicates?.yaml;
  delete options.duplicates;
  if (!yaml?.length) return [];
  if (options.fieldValidation === "Strict") {
    throw ApiError.badRequest(
      `error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  ${
        yaml.join("\n  ")
      }`,
    );
  }
  return yaml;
}

/** Where a write's body reports its duplicate fields: nowhere under `fieldValidation=Ignore`. */
export function strictDecoding(options: WriteOptions): { duplicates?: WriteOptions } {
  return options.fieldValidation === "Ignore" ? {} : { duplicates: options };
}

export async function deleteOptions(
  req: Request,
  q: URLSearchParams,
  limit: number,
  deleting: "delete" | "deletecollection",
): Promise<DeleteOptions> {
  const bytes = await readBodyLimited(req, limit);
  // kube-apiserver negotiates the decoder of a delete's body only when there is one.
  if (bytes.length && !readableType(req.headers.get("content-type") ?? "")) {
    throw unsupportedBody();
  }
  const text = UTF8.decode(bytes);
  let body: Record<string, unknown> = {};
  if (text.trim()) {
    const parsed = parseJsonBody(text);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw ApiError.badRequest(
        `the body of a delete must be a DeleteOptions JSON object, not ${jsonKind(parsed)}`,
      );
    }
    body = parsed as Record<string, unknown>;
  }
  // kube-apiserver reads the options from the body when there is one, else from the query.
  let given: { propagationPolicy?: string; orphanDependents?: boolean; dryRun?: string[] };
  let grace: unknown;
  if (text.trim()) {
    const policy = body.propagationPolicy;
    if (policy !== undefined && policy !== null && typeof policy !== "string") {
      throw ApiError.badRequest(
        `propagationPolicy must be a string (Background, Foreground or Orphan), not ${
          JSON.stringify(policy)
        }`,
      );
    }
    const orphan = body.orphanDependents;
    if (orphan !== undefined && orphan !== null && typeof orphan !== "boolean") {
      throw ApiError.badRequest(
        `orphanDependents must be a boolean, not ${JSON.stringify(orphan)}`,
      );
    }
    const dry = body.dryRun ?? undefined;
    if (dry !== undefined && (!Array.isArray(dry) || !dry.every((d) => typeof d === "string"))) {
      throw ApiError.badRequest(
        `dryRun must be a list of strings, e.g. ["All"], not ${JSON.stringify(dry)}`,
      );
    }
    given = {
      ...(typeof policy === "string" ? { propagationPolicy: policy } : {}),
      ...(typeof orphan === "boolean" ? { orphanDependents: orphan } : {}),
      ...(dry !== undefined ? { dryRun: dry as string[] } : {}),
    };
    grace = body.gracePeriodSeconds ?? undefined;
  } else {
    const p = decodeQuery(deleting, q);
    given = {
      ...(p.propagationPolicy !== undefined ? { propagationPolicy: p.propagationPolicy } : {}),
      ...(p.orphanDependents !== undefined ? { orphanDependents: p.orphanDependents } : {}),
      ...(p.dryRun !== undefined ? { dryRun: p.dryRun } : {}),
    };
    grace = p.gracePeriodSeconds;
  }
  if (grace !== undefined && (typeof grace !== "number" || !Number.isInteger(grace))) {
    throw ApiError.badRequest(
      `gracePeriodSeconds must be an integer number of seconds, not ${JSON.stringify(grace)}`,
    );
  }
  const checked = checkDeleteOptions(given);
  const options: DeleteOptions = {};
  if (checked.propagationPolicy) options.propagationPolicy = checked.propagationPolicy;
  if (checked.dryRun) options.dryRun = true;
  if (text.trim() && body.preconditions !== undefined && body.preconditions !== null) {
    const pre = body.preconditions;
    const ok = typeof pre === "object" && !Array.isArray(pre) &&
      Object.values(pre).every((v) => v === null || typeof v === "string");
    if (!ok) {
      throw ApiError.badRequest(
        `preconditions must be an object of strings {"uid": ..., "resourceVersion": ...}, not ${
          JSON.stringify(pre)
        }`,
      );
    }
    options.preconditions = pre as DeleteOptions["preconditions"] & object;
  }
  return options;
}

function jsonKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

export function patchTypeOf(contentType: string | null): PatchType {
  const type = (contentType ?? "").split(";")[0]!.trim();
  switch (type) {
    case "application/merge-patch+json":
      return "merge";
    case "application/json-patch+json":
      return "json";
    case "application/strategic-merge-patch+json":
      return "strategic";
    case "application/apply-patch+yaml":
    case "application/apply-patch+cbor":
      return "apply";
  }
  throw new ApiError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
  );
}

const UTF8 = new TextDecoder();

/** A media type's `type/subtype` and a parameter, as Go's `mime.ParseMediaType` accepts them. */
const MEDIA_TYPE = /^[!#$%&'*+\-.^_`|~0-9a-z]+\/[!#$%&'*+\-.^_`|~0-9a-z]+$/i;
const MEDIA_PARAM =
  /^\s*[!#$%&'*+\-.^_`|~0-9a-z]+\s*=\s*("(?:[^"\\]|\\.)*"|[!#$%&'*+\-.^_`|~0-9a-z]+)\s*$/i;

/**
 * Whether a body's Content-Type is one the server decodes, as kube-apiserver's negotiation
 * judges it: none at all means the first type it serves (JSON; `kubectl create ns` sends
 * none); otherwise the type, parsed as Go's `mime.ParseMediaType` parses it (parameters
 * dropped, case ignored, a malformed one refused), must be JSON, YAML or protobuf exactly —
 * `text/plain` (fetch's default for a string), `*\/*` and `+json` types are 415.
 */
function readableType(contentType: string): boolean {
  if (contentType === "" || contentType === "application/json") return true;
  const [type, ...params] = contentType.split(";");
  const media = type!.trim().toLowerCase();
  if (!MEDIA_TYPE.test(media) || !params.every((p) => MEDIA_PARAM.test(p))) return false;
  return media === "application/json" || media === "application/yaml" ||
    media === PROTOBUF_CONTENT_TYPE;
}

/** kube-apiserver's 415 for a body in a media type it does not decode. */
function unsupportedBody(): ApiError {
  return new ApiError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ` +
      `application/json, application/yaml, application/vnd.kubernetes.protobuf`,
  );
}

/** How a body that is not JSON is refused: Go's error for it and the body, to kube's 400. */
export type SyntaxWording = (goError: string, bytes: Uint8Array) => ApiError;

/**
 * The 400 of a create or update whose body is not JSON: kube-apiserver's decoder cannot read
 * the kind, and names the kind it wanted and the start of the body.
 */
export function unrecognized(kind: string): SyntaxWording {
  return (goError, bytes) =>
    ApiError.badRequest(
      `the object provided is unrecognized (must be of type ${kind}): couldn't get ` +
        `version/kind; json parse error: ${goError} (${summarizeBody(bytes)})`,
    );
}

/**
 * The 400 of a patch whose body is not JSON, in the words of the decoder kube-apiserver uses
 * for that patch type and field validation (`Warn` when none is asked for).
 */
export function patchWording(
  type: PatchType,
  validation: FieldValidation | undefined,
): SyntaxWording {
  const strict = validation !== "Ignore";
  return (goError) => {
    if (type === "strategic") return ApiError.badRequest(goError);
    if (strict) return ApiError.badRequest(`error decoding patch: ${goError}`);
    return ApiError.badRequest(type === "merge" ? "Invalid JSON Patch" : goError);
  };
}

/** A YAML body's keys sent twice, by line (`yaml_duplicates.ts`), kept where the write reads them. */
function yamlDuplicatesOf(options: WriteOptions, text: string): void {
  const yaml = yamlDuplicates(text);
  if (yaml.length) options.duplicates = { found: [], order: new Map(), yaml };
}

/**
 * Reads and decodes a write's body: at most the size limit, JSON held to the nesting limit
 * before it is parsed, YAML (server-side apply) and protobuf checked once decoded. A body that
 * is not JSON is worded by `syntax` from Go's error for it (found only then: a valid body costs
 * nothing more).
 */
export async function readBody(
  req: Request,
  limit: number,
  { yaml = false, patch = false, syntax, duplicates }: {
    yaml?: boolean;
    /** A patch: its Content-Type, the patch type, is judged already. */
    patch?: boolean;
    syntax?: SyntaxWording;
    /** Given the fields a JSON body sends twice (asked only when fields are validated). */
    duplicates?: WriteOptions;
  } = {},
): Promise<unknown> {
  const type = req.headers.get("content-type") ?? "";
  const bytes = await readBodyLimited(req, limit);
  if (!patch && !readableType(type)) throw unsupportedBody();
  const json = type === "application/json"; // the usual type, and no other to look for
  if (!json && type.toLowerCase().startsWith(PROTOBUF_CONTENT_TYPE)) {
    return checkDecoded(decodeProtobufObject(bytes), bytes.length);
  }
  const text = UTF8.decode(bytes);
  const yamlBody = yaml || (!json && /yaml/i.test(type));
  if ((yamlBody || !syntax) && !text.trim()) {
    throw ApiError.badRequest("the request has no body: send the object as JSON");
  }
  const { depth, members } = depthAndMembers(text, MAX_JSON_DEPTH);
  if (depth > MAX_JSON_DEPTH) throw tooDeep();
  try {
    const value = JSON.parse(text);
    // More members in the text than keys in the value: some key came twice (rare; only then
    // is the text walked to name them).
    if (duplicates && members > 0 && members > countKeys(value)) {
      // A YAML body (JSON is YAML) is decoded by go-yaml, which words its duplicates by line.
      if (yamlBody) yamlDuplicatesOf(duplicates, text);
      else duplicates.duplicates = findDuplicates(text);
    }
    return value;
  } catch (e) {
    if (yamlBody) {
      let parsed: unknown;
      try {
        parsed = parseYamlLenient(text);
      } catch (ye) {
        throw ApiError.badRequest(
          `the body is neither JSON nor YAML: ${(ye as Error).message.split("\n")[0]}`,
        );
      }
      if (duplicates) yamlDuplicatesOf(duplicates, text);
      return checkDecoded(parsed, text.length);
    }
    const goError = syntax && goJsonSyntaxError(bytes);
    if (goError) throw syntax!(goError, bytes);
    throw ApiError.badRequest(`the body is not valid JSON: ${(e as Error).message}`);
  }
}
