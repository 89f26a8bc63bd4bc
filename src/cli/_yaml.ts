/**
 * YAML as the command line prints it (`kopf crd`, `kopf rbac`, `kopf manifests`): what
 * `kubectl apply -f -` takes, and a reader can review. Strings that YAML 1.1 would read as
 * something else (`yes`, `on`, `1.0`) are quoted, since kubectl's parser is YAML 1.1's; long
 * strings are never folded; objects met twice are written twice, never as `&anchor`/`*alias`.
 *
 * @module
 */

import { COLLECTION_STYLE, type Document, dump, type MappingNode } from "npm:js-yaml@^5";

/** How a document is printed: comments above it, and which lists go on one line. */
export interface YamlOptions {
  /** Comment lines above the document, each with its `#`. */
  comments?: string[] | undefined;
  /**
   * Comments above the items of a top-level list: `{ rules: [" why 1", " why 2"] }` puts
   * `# why 1` above the first rule.
   */
  itemComments?: Record<string, string[]> | undefined;
  /** Keys of a top-level list's mapping items whose lists are printed in flow style, `[a, b]`. */
  flowKeys?: Record<string, string[]> | undefined;
}

/**
 * One object as a YAML document.
 *
 * @param object The object (plain JSON values).
 * @param options Comments and flow-style lists.
 * @returns The document's text, ending with a newline.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { yamlDocument } from "./_yaml.ts";
 * const rules = [{ apiGroups: [""], verbs: ["get", "list"] }];
 * assert.equal(
 *   yamlDocument({ kind: "Role", rules }, {
 *     itemComments: { rules: [" reading pods"] },
 *     flowKeys: { rules: ["apiGroups", "verbs"] },
 *   }),
 *   'kind: Role\nrules:\n  # reading pods\n  - apiGroups: [""]\n    verbs: [get, list]\n',
 * );
 * ```
 */
export function yamlDocument(object: unknown, options: YamlOptions = {}): string {
  const { comments = [], itemComments = {}, flowKeys = {} } = options;
  const text = dump(object, {
    lineWidth: -1,
    quoteStyle: "double",
    noRefs: true,
    transform: (docs) => docs.forEach((doc) => flowLists(doc, flowKeys)),
  });
  const lines = text.split("\n");
  for (const [key, notes] of Object.entries(itemComments)) {
    let at = lines.indexOf(`${key}:`);
    if (at < 0) continue;
    for (let j = 0; j < notes.length; at++) {
      const line = lines[at + 1];
      if (line === undefined || !line.startsWith("  ")) break;
      if (line.startsWith("  - ")) lines.splice(++at, 0, `  #${notes[j++]}`);
    }
  }
  return [...comments, lines.join("\n")].join("\n");
}

/** Puts the `keys` lists of a top-level list's mapping items in flow style. */
function flowLists(doc: Document, flowKeys: Record<string, string[]>): void {
  const root = doc.contents;
  if (root?.kind !== "mapping") return;
  for (const { key, value } of root.items) {
    const keys = key.kind === "scalar" ? flowKeys[key.value] : undefined;
    if (!keys || value.kind !== "sequence") continue;
    for (const item of value.items) {
      if (item.kind !== "mapping") continue;
      for (const pair of (item as MappingNode).items) {
        if (pair.key.kind === "scalar" && keys.includes(pair.key.value)) {
          if (pair.value.kind === "sequence") pair.value.style = COLLECTION_STYLE.FLOW;
        }
      }
    }
  }
}
