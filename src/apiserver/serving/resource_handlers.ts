/**
 * The handlers of requests on resources (`server.ts` routes, authenticates and
 * authorizes them first): reads (get, list in pages from one snapshot, watch)
 * and writes (create, update, patch, delete, deletecollection) through the
 * admission webhooks and CRD conversion, answered as JSON, as a Table for
 * kubectl, or as partial metadata, as kube-apiserver answers them.
 *
 * @module
 */

import {
  type FieldRequirement,
  matchesFields,
  parseFieldSelector,
} from "../../cogs/structs/field_selector.ts";
import {
  type LabelSelector,
  matchesLabels,
  parseLabelSelector,
} from "../../cogs/structs/label_selector.ts";
import { SelectorError } from "../../cogs/structs/selector_error.ts";
import type { AdmissionRequestInfo } from "../webhooks/admission_types.ts";
import type { UserInfo } from "../auth/authentication.ts";
import { ApiError } from "../shared/errors.ts";
import { fieldGetter } from "../storage/fields.ts";
import { jsonLine, jsonText } from "../shared/json_body.ts";
import { parseListOptions, parseResourceVersion } from "../storage/list_options.ts";
import { PROTOBUF_CONTENT_TYPE } from "../wire/protobuf.ts";
import { decodeQuery } from "../wire/query_params.ts";
import { refuseSystemPriorityClassDelete } from "../builtins/priority_classes.ts";
import { apiVersionOf, type ResourceDef, storageKey } from "../shared/resources.ts";
import type { KObject } from "../shared/types.ts";
import { renderTable, TABLE_CONTENT_TYPE, wantsTable } from "../wire/table.ts";
import {
  asPartialObjectMetadata,
  asPartialObjectMetadataList,
  type PartialTarget,
  wantsPartialMetadata,
} from "../wire/partial_metadata.ts";
import {
  applyDuplicates,
  deleteOptions,
  patchTypeOf,
  patchWording,
  readBody,
  strictDecoding,
  unrecognized,
  writeOptions,
} from "./request_bodies.ts";
import type { WatchHub } from "../storage/watch.ts";
import type { Admission } from "../webhooks/admission.ts";
import type { Conversion } from "../webhooks/conversion.ts";
import type { ListSnapshots } from "../storage/listing.ts";
import type { Objects } from "../objects/objects.ts";
import type { Store } from "../storage/store.ts";

/** The headers of a JSON answer. */
export const JSON_HEADERS = { "content-type": "application/json" };
/** The headers of a Table answer. */
const TABLE_HEADERS = { "content-type": TABLE_CONTENT_TYPE };

/** What the resource handlers work with: one API server's parts. */
export interface ResourceServing {
  /** The store. */
  store: Store;
  /** The write path. */
  objects: Objects;
  /** The watch streams. */
  watches: WatchHub;
  /** The admission webhooks. */
  admission: Admission;
  /** The CRD conversion. */
  conversion: Conversion;
  /** The snapshots of paged lists. */
  snapshots: ListSnapshots;
  /** The largest request body read, in bytes. */
  bodyLimit: number;
  /** Whether streamed lists (`sendInitialEvents`) are served. */
  watchList: () => boolean;
}

/**
 * Serves a request on a resource or one object: get, list, watch, create,
 * update, patch, delete and deletecollection, through admission and
 * conversion, answered as JSON, a Table or partial metadata.
 */
export async function serveResource(
  s: ResourceServing,
  req: Request,
  url: URL,
  def: ResourceDef,
  namespace: string | undefined,
  name: string | undefined,
  subresource: string | undefined,
  verb: string,
  user: UserInfo,
): Promise<Response> {
  const q = url.searchParams;
  const admitting = (objName = name ?? ""): AdmissionRequestInfo => ({
    def,
    namespace: ns ?? "",
    name: objName,
    ...(subresource ? { subresource } : {}),
    userInfo: {
      username: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      groups: user.groups,
    },
  });
  const ns = def.namespaced ? namespace : undefined;
  refuseUnacceptable(req.headers.get("accept"));
  const partial = wantsPartialMetadata(req.headers.get("accept"));
  const table = !partial && wantsTable(req.headers.get("accept"));
  const out = (obj: KObject, status = 200, warnings: string[] = []) => {
    const body = partial
      ? asPartialObjectMetadata(def, obj, partial)
      : table && req.method === "GET"
      ? renderTable(def, [obj], obj.metadata.resourceVersion ?? "", {
        includeObject: q.get("includeObject") ?? undefined,
      })
      : withVersion(obj, def);
    // Headers given as one shared object: a Response reads a fresh object literal's at twice
    // the cost (the answer's own copy is made either way).
    const headers = table && req.method === "GET" ? TABLE_HEADERS : JSON_HEADERS;
    // The object just stored is answered in the JSON the store encoded it in.
    const encoded = body === obj ? s.store.encodingOf(obj) : undefined;
    const res = new Response(encoded === undefined ? jsonText(body) : jsonLine(encoded), {
      status,
      headers,
    });
    for (const w of warnings) res.headers.append("warning", `299 - ${JSON.stringify(w)}`);
    return res;
  };
  switch (verb) {
    case "get": {
      const rv = decodeQuery("get", q).resourceVersion;
      if (rv) parseResourceVersion(rv);
      const obj = s.store.get(storageKey(def), ns ?? "", name!);
      if (!obj) throw ApiError.notFound(def.plural, def.group, name!);
      return out((await s.conversion.toVersion(def, [obj]))[0]!);
    }
    case "list":
      return await listResource(s, q, def, ns, table, partial);
    case "watch": {
      const p = decodeQuery("watch", q);
      const listOptions = parseListOptions(p, {
        watch: true,
        watchList: s.watchList(),
      });
      const { labels, fields, fieldOf } = selectors(def, q);
      // kube-apiserver: a watch ends after timeoutSeconds; 0 or none, its own limit; a
      // negative one, at once.
      const timeout = p.timeoutSeconds;
      const rv = p.resourceVersion;
      if (rv) parseResourceVersion(rv);
      const convert = s.conversion.watchConverter(def);
      return s.watches.open({
        def,
        namespace: ns,
        resourceVersion: p.resourceVersion,
        sendInitialEvents: listOptions.sendInitialEvents,
        labels,
        fields,
        fieldOf,
        bookmarks: p.allowWatchBookmarks === true,
        timeoutSeconds: timeout === undefined || timeout === 0
          ? undefined
          : Math.max(timeout, 0.001),
        table,
        ...(partial ? { partial: partial.apiVersion } : {}),
        ...(convert ? { convert } : {}),
      });
    }
    case "create": {
      const options = writeOptions(q, "create");
      const body = await readBody(req, s.bodyLimit, {
        syntax: unrecognized(def.kind),
        ...strictDecoding(options),
      });
      const result = await s.conversion.write(
        def,
        ns ?? "",
        "",
        options,
        (o) =>
          s.admission.write(
            admitting(),
            o,
            (o) => s.objects.create(def, ns ?? "", body, o),
          ),
      );
      return out(result.object, 201, result.warnings);
    }
    case "update": {
      const options = writeOptions(q, "update");
      const body = await readBody(req, s.bodyLimit, {
        syntax: unrecognized(def.kind),
        ...strictDecoding(options),
      });
      if (subresource === "finalize") {
        const current = s.store.get("namespaces", "", name!);
        if (!current) throw ApiError.notFound("namespaces", "", name!);
        const spec = (body as { spec?: { finalizers?: string[] } })?.spec;
        const result = await s.admission.write(
          admitting(),
          writeOptions(q, verb as "create" | "update"),
          (o) =>
            s.objects.update(def, "", name!, {
              ...current,
              spec: { ...(current.spec as object), finalizers: spec?.finalizers ?? [] },
            }, o),
        );
        return out(result.object, 200, result.warnings);
      }
      const result = await s.conversion.write(
        def,
        ns ?? "",
        name!,
        options,
        (o) =>
          s.admission.write(
            admitting(),
            o,
            (o) => s.objects.update(def, ns ?? "", name!, body, o, subresource),
          ),
      );
      return out(result.object, 200, result.warnings);
    }
    case "patch": {
      const type = patchTypeOf(req.headers.get("content-type"));
      const options = writeOptions(q, "patch", type === "apply");
      const body = await readBody(req, s.bodyLimit, {
        yaml: type === "apply",
        patch: true,
        syntax: patchWording(type, options.fieldValidation),
        // A JSON patch's duplicates (in its operations) are not looked for.
        ...(type === "json" ? {} : strictDecoding(options)),
      });
      const applyWarnings = type === "apply" ? applyDuplicates(options) : [];
      const result = await s.conversion.write(
        def,
        ns ?? "",
        name!,
        options,
        (o) =>
          s.admission.write(
            admitting(),
            o,
            (o) => s.objects.patch(def, ns ?? "", name!, type, body, o, subresource),
          ),
      );
      return out(result.object, result.created ? 201 : 200, [
        ...result.warnings,
        ...applyWarnings,
      ]);
    }
    case "delete": {
      refuseSystemPriorityClassDelete(def.plural, def.group, name!);
      const options = await deleteOptions(req, q, s.bodyLimit, "delete");
      const { object, warnings } = await s.admission.delete(
        admitting(),
        options,
        () => s.objects.delete(def, ns ?? "", name!, options),
      );
      return out((await s.conversion.toVersion(def, [object]))[0]!, 200, warnings);
    }
    case "deletecollection": {
      decodeQuery("deletecollection", q);
      const options = await deleteOptions(req, q, s.bodyLimit, "deletecollection");
      const { labels, fields, fieldOf } = selectors(def, q);
      const items: KObject[] = [];
      for (const obj of [...s.store.list(storageKey(def), ns)]) {
        if (!matches(obj, labels, fields, fieldOf)) continue;
        const { object } = await s.admission.delete(
          admitting(obj.metadata.name!),
          options,
          () => s.objects.delete(def, obj.metadata.namespace ?? "", obj.metadata.name!, options),
        );
        items.push(object);
      }
      const converted = await s.conversion.toVersion(def, items, true);
      const listMeta = { resourceVersion: String(s.store.resourceVersion) };
      if (partial) return json(asPartialObjectMetadataList(def, converted, listMeta, partial));
      return json({
        kind: `${def.kind}List`,
        apiVersion: apiVersionOf(def),
        metadata: listMeta,
        items: converted.map((o) => withVersion(o, def)),
      });
    }
  }
  throw ApiError.methodNotAllowed();
}

async function listResource(
  s: ResourceServing,
  q: URLSearchParams,
  def: ResourceDef,
  ns: string | undefined,
  table: boolean,
  partial?: PartialTarget,
): Promise<Response> {
  const options = parseListOptions(decodeQuery("list", q), {
    watch: false,
    watchList: s.watchList(),
  });
  const { labels, fields, fieldOf } = selectors(def, q);
  const page = await s.snapshots.page(
    storageKey(def),
    ns,
    def.namespaced,
    options,
    (o) => matches(o, labels, fields, fieldOf),
    labels.length > 0 || fields.length > 0,
  );
  const rv = page.resourceVersion;
  const metadata: Record<string, unknown> = { resourceVersion: rv };
  if (page.continueToken !== undefined) metadata.continue = page.continueToken;
  if (page.remainingItemCount !== undefined) {
    metadata.remainingItemCount = page.remainingItemCount;
  }
  let items = page.items;
  items = await s.conversion.toVersion(def, items, true);
  if (partial) return json(asPartialObjectMetadataList(def, items, metadata, partial));
  if (table) {
    const t = renderTable(def, items, rv, {
      includeObject: q.get("includeObject") ?? undefined,
      continueToken: metadata.continue as string | undefined,
    });
    return new Response(jsonText(t), { headers: { "content-type": TABLE_CONTENT_TYPE } });
  }
  const version = apiVersionOf(def);
  const body = {
    kind: `${def.kind}List`,
    apiVersion: version,
    metadata,
    items: items.map((o) => withVersion(o, def)),
  };
  return json(body);
}

function selectors(def: ResourceDef, q: URLSearchParams): {
  labels: LabelSelector;
  fields: FieldRequirement[];
  fieldOf: (o: KObject, f: string) => string | undefined;
} {
  try {
    const labels = parseLabelSelector(q.get("labelSelector") ?? "");
    const fields = parseFieldSelector(q.get("fieldSelector") ?? "");
    return { labels, fields, fieldOf: fieldGetter(def, fields) };
  } catch (e) {
    if (e instanceof SelectorError) throw ApiError.badRequest(e.message);
    throw e;
  }
}

function matches(
  obj: KObject,
  labels: LabelSelector,
  fields: FieldRequirement[],
  fieldOf: (o: KObject, f: string) => string | undefined,
): boolean {
  if (labels.length && !matchesLabels(labels, obj.metadata.labels)) return false;
  if (fields.length && !matchesFields(fields, (f) => fieldOf(obj, f))) return false;
  return true;
}

/** The media types a resource's answer can be negotiated to, as kube-apiserver lists them. */
const ACCEPTABLE = new Set([
  "*/*",
  "application/*",
  "application/json",
  "application/yaml",
  PROTOBUF_CONTENT_TYPE,
]);

/**
 * Refuses a resource request whose Accept header names no media type the server answers in,
 * as kube-apiserver's negotiation does before it reads or writes anything (406, no details).
 * No header at all means JSON; parameters (`as=Table`, `stream=watch`) are judged elsewhere.
 *
 * @throws {ApiError} 406 NotAcceptable.
 */
function refuseUnacceptable(accept: string | null): void {
  if (accept === null || accept.trim() === "") return;
  for (const range of accept.split(",")) {
    if (ACCEPTABLE.has(range.split(";")[0]!.trim().toLowerCase())) return;
  }
  throw new ApiError(
    406,
    "NotAcceptable",
    `only the following media types are accepted: ` +
      `application/json, application/yaml, ${PROTOBUF_CONTENT_TYPE}`,
  );
}

function withVersion(obj: KObject, def: ResourceDef): KObject {
  const apiVersion = apiVersionOf(def);
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}

export function json(body: unknown, status = 200): Response {
  return new Response(jsonText(body), { status, headers: JSON_HEADERS });
}
