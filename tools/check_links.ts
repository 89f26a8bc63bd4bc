/**
 * The link check of the documentation: every relative link in `README.md`
 * and `docs/*.md` must lead to a file or folder that exists, and every
 * `#anchor` (on the same page or another page) to a heading that is there —
 * so that a section moved from one page to another leaves no dead link behind.
 *
 * Anchors are GitHub's: the heading's text, lower-cased, without punctuation
 * (letters, digits, `-`, `_` and spaces kept), spaces turned into `-`, and
 * `-1`, `-2`… on repeated headings. Links inside code (fenced blocks and
 * inline code) are not links, and external ones (`http:`, `https:`,
 * `mailto:`) are not followed.
 *
 * Run: `deno run -A tools/check_links.ts` (part of `deno task check`).
 *
 * @module
 */

import { fileURLToPath as fromFileUrl } from "node:url";
import { dirname, join, relative } from "node:path";

const root = fromFileUrl(new URL("..", import.meta.url));

/** A link found in a page. */
export interface Link {
  /** The page, relative to the repository's root. */
  page: string;
  /** The 1-based line of the link. */
  line: number;
  /** The link's target as written. */
  target: string;
}

/**
 * GitHub's anchor of a heading's text.
 *
 * @param heading The heading without its `#`s.
 * @returns The anchor without `#`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { slug } from "./check_links.ts";
 * assert.equal(slug("Durability of `--data-dir`"), "durability-of---data-dir");
 * ```
 */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1") // a link in a heading: its text
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Lines of a page outside fenced code blocks, with their numbers. */
function proseLines(text: string): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  let fence: string | undefined;
  text.split("\n").forEach((line, i) => {
    const m = /^\s*(```+|~~~+)/.exec(line);
    if (m) {
      if (fence === undefined) fence = m[1]!;
      else if (line.trim().startsWith(fence)) fence = undefined;
      return;
    }
    if (fence === undefined) out.push([i + 1, line]);
  });
  return out;
}

/**
 * The anchors of a page's headings.
 *
 * @param text The page.
 * @returns The anchors, without `#`.
 */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, line] of proseLines(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/**
 * The links of a page (outside code).
 *
 * @param page The page's path, relative to the root.
 * @param text The page.
 * @returns The links.
 */
export function links(page: string, text: string): Link[] {
  const out: Link[] = [];
  for (const [line, raw] of proseLines(text)) {
    const prose = raw.replace(/`[^`]*`/g, "``");
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      out.push({ page, line, target: m[1]! });
    }
  }
  return out;
}

/**
 * The dead links among the pages: a missing file or a missing anchor.
 *
 * @param pages The pages' paths, relative to `base`.
 * @param base The repository's root.
 * @returns One message per dead link, `page:line: target — why`.
 */
export async function deadLinks(pages: string[], base: string = root): Promise<string[]> {
  const texts = new Map<string, string>();
  const read = async (path: string): Promise<string | undefined> => {
    if (!texts.has(path)) {
      try {
        texts.set(path, await Deno.readTextFile(join(base, path)));
      } catch {
        return undefined;
      }
    }
    return texts.get(path);
  };
  const problems: string[] = [];
  for (const page of pages) {
    const text = await read(page);
    if (text === undefined) {
      problems.push(`${page}: the page does not exist`);
      continue;
    }
    for (const link of links(page, text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue; // http:, https:, mailto:
      const [pathPart, anchor] = link.target.split("#", 2) as [string, string | undefined];
      const target = pathPart === "" ? page : relative(base, join(base, dirname(page), pathPart));
      const where = `${link.page}:${link.line}: ${link.target}`;
      if (target.startsWith("..")) {
        problems.push(`${where} — leads out of the repository`);
        continue;
      }
      let stat: Deno.FileInfo;
      try {
        stat = await Deno.stat(join(base, target));
      } catch {
        problems.push(`${where} — no such file: ${target}`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!stat.isFile || !target.endsWith(".md")) {
        problems.push(`${where} — an anchor into ${target}, which is not a page`);
        continue;
      }
      const known = anchors((await read(target))!);
      if (!known.has(anchor)) {
        problems.push(`${where} — no heading with the anchor #${anchor} in ${target}`);
      }
    }
  }
  return problems;
}

/**
 * The pages checked: the README and every page under `docs/`.
 *
 * @param base The repository's root.
 * @returns The pages' paths, relative to the root.
 */
export async function docPages(base: string = root): Promise<string[]> {
  const pages = ["README.md"];
  for await (const entry of Deno.readDir(join(base, "docs"))) {
    if (entry.isFile && entry.name.endsWith(".md")) pages.push(`docs/${entry.name}`);
  }
  return pages.sort();
}

if (import.meta.main) {
  const pages = await docPages();
  const problems = await deadLinks(pages);
  if (problems.length) {
    console.error(`check_links: ${problems.length} dead link(s) in the docs:`);
    for (const p of problems) console.error(`  ${p}`);
    Deno.exit(1);
  }
  console.log(
    `check_links: ${pages.length} pages, every relative link and anchor leads somewhere.`,
  );
}
