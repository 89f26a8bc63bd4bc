/**
 * `kopf run`'s handler files become the same module URLs as with `node:path` and `node:url`
 * (`src/cli/_file_urls.ts`, which replaces them on POSIX systems): the same absolute paths and
 * the same `file:` URLs for awkward names, `..`, `.`, repeated and trailing separators, and for
 * random names of the characters that URLs escape; and `kopf run` of a file whose name has them
 * loads it.
 */

import assert from "node:assert/strict";
import { isAbsolute, posix } from "node:path";
import { pathToFileURL } from "node:url";
import { fileUrls, posixFileUrls } from "../../src/cli/_file_urls.ts";

const POSIX = Deno.build.os !== "windows";
const ignore = !POSIX;

const PATHS = [
  "handlers.ts",
  "./handlers.ts",
  "../op/./handlers.ts",
  "a//b///c.ts",
  "a/b/../../../../c.ts",
  "/abs/./x/../y.ts",
  "/",
  "",
  ".",
  "..",
  "dir/",
  "/dir//",
  "my op/#1 ?q=%41&x.ts",
  "tab\there/new\nline/cr\r.ts",
  "back\\slash\\x.ts",
  "ünï/cödé/日本.ts",
  "quote\"'`<>{}|^[]@!$&()*+,;=~.ts",
  "%zz%/%25.ts",
];
const CWDS = ["/srv/app", "/", "/with space/and#hash"];

Deno.test({
  name:
    "resolve() and fileUrl() give what node:path's resolve() and node:url's pathToFileURL() give",
  ignore,
  fn() {
    for (const cwd of CWDS) {
      for (const path of PATHS) {
        const node = posix.resolve(cwd, path);
        assert.equal(posixFileUrls.resolve(cwd, path), node, `resolve(${cwd}, ${path})`);
        assert.equal(posixFileUrls.isAbsolute(path), isAbsolute(path), `isAbsolute(${path})`);
        assert.equal(posixFileUrls.fileUrl(node), pathToFileURL(node).href, `fileUrl(${node})`);
        const absolute = `/${path}`;
        assert.equal(posixFileUrls.fileUrl(absolute), pathToFileURL(absolute).href, absolute);
      }
    }
  },
});

Deno.test({
  name: "fileUrl() equals pathToFileURL() on 3,000 random names of escaped characters",
  ignore,
  fn() {
    const alphabet = [..."ab/./..%#?\\\n\r\t \"<>`{}|^[]~@!$&'()*+,;=:é日\u0000\u007f"];
    let seed = 28;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 3000; i++) {
      const length = Math.floor(random() * 16);
      let path = "/";
      for (let j = 0; j < length; j++) path += alphabet[Math.floor(random() * alphabet.length)];
      assert.equal(posixFileUrls.fileUrl(path), pathToFileURL(path).href, JSON.stringify(path));
      assert.equal(
        posixFileUrls.resolve("/cwd", path.slice(1)),
        posix.resolve("/cwd", path.slice(1)),
      );
    }
  },
});

Deno.test({
  name: "fileUrl() equals pathToFileURL() for every character of the Basic Multilingual Plane",
  ignore,
  fn() {
    for (let code = 0; code < 0x10000; code++) {
      const path = `/a${String.fromCharCode(code)}b`;
      assert.equal(posixFileUrls.fileUrl(path), pathToFileURL(path).href, `U+${code.toString(16)}`);
    }
  },
});

Deno.test({
  name: "fileUrls() is ours on POSIX systems",
  ignore,
  async fn() {
    assert.equal(await fileUrls(), posixFileUrls);
  },
});

Deno.test({
  name: "kopf run loads a handlers file whose name and directory need escaping, by a relative path",
  ignore,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "kopf file urls #1 %41 " });
    try {
      await Deno.mkdir(`${dir}/sub dir`);
      const mod = new URL("../../mod.ts", import.meta.url).href;
      await Deno.writeTextFile(
        `${dir}/sub dir/hand lers#%.ts`,
        `import * as kopf from ${JSON.stringify(mod)};\n` +
          `kopf.on.startup(function started() {});\n`,
      );
      // In a process of its own, started in that directory: the working directory is the whole
      // process's, and a test that changed its own would change it under the tests running beside
      // it (a child process they spawn meanwhile finds its directory gone).
      const run = new URL("../../src/cli/run.ts", import.meta.url).href;
      const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
        args: [
          "eval",
          `const { loadHandlers } = await import(${JSON.stringify(run)});\n` +
          `const registry = await loadHandlers(["../sub dir/./hand lers#%.ts"], []);\n` +
          `console.log(JSON.stringify(registry.activityHandlers("startup").map((h) => h.id)));`,
        ],
        cwd: `${dir}/sub dir`,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const decode = (b: Uint8Array) => new TextDecoder().decode(b);
      assert.equal(code, 0, decode(stderr));
      assert.deepEqual(JSON.parse(decode(stdout)), ["started"]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
