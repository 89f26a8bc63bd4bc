/**
 * tools/check_links.ts: a dead relative link or anchor in the docs is found, by page and line;
 * links in code are not links; anchors are GitHub's (punctuation dropped, repeats numbered).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { anchors, deadLinks, docPages, slug } from "../../tools/check_links.ts";

Deno.test("check_links: GitHub's anchors of headings", () => {
  assert.equal(slug("Durability of `--data-dir`"), "durability-of---data-dir");
  assert.equal(slug("A single binary: `deno compile`"), "a-single-binary-deno-compile");
  assert.equal(slug("Authorization (RBAC)"), "authorization-rbac");
  assert.equal(slug("What the handlers use: `kopf.uses`"), "what-the-handlers-use-kopfuses");
  assert.deepEqual([...anchors("# A\n## B\n```\n# not a heading\n```\n## B\n")], ["a", "b", "b-1"]);
});

Deno.test("check_links: a missing page, a missing anchor and a link out of the tree are dead; code is not a link", async () => {
  const base = await Deno.makeTempDir({ prefix: "kopf-links-" });
  try {
    await Deno.mkdir(join(base, "docs"));
    await Deno.writeTextFile(
      join(base, "README.md"),
      "# Top\n\nSee [a](docs/a.md), [a's part](docs/a.md#part), [gone](docs/gone.md),\n" +
        "[a's lost part](docs/a.md#lost), [here](#top), [nowhere](#nowhere), [web](https://x.y/#z),\n" +
        "`[code](docs/not-checked.md)` and [out](../outside.md).\n\n```md\n[fenced](docs/none.md)\n```\n",
    );
    await Deno.writeTextFile(
      join(base, "docs", "a.md"),
      "# A\n\n## Part\n\nBack to [top](../README.md#top).\n",
    );
    assert.deepEqual(await docPages(base), ["README.md", "docs/a.md"]);
    assert.deepEqual(await deadLinks(await docPages(base), base), [
      "README.md:3: docs/gone.md — no such file: docs/gone.md",
      "README.md:4: docs/a.md#lost — no heading with the anchor #lost in docs/a.md",
      "README.md:4: #nowhere — no heading with the anchor #nowhere in README.md",
      "README.md:5: ../outside.md — leads out of the repository",
    ]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
