/**
 * The file URL of a handlers file named on the command line, as `node:path`'s `resolve()` and
 * `node:url`'s `pathToFileURL()` make it — without them on POSIX systems, where it is a few lines:
 * importing those two modules cost every `kopf run` ≈2.5 MiB of memory for as long as it runs
 * (they bring the Node compatibility layer's path and URL modules with them; measured alone over a
 * process that imports only `node:async_hooks`, medians of four runs). On Windows (drive letters,
 * backslashes, UNC paths) Node's functions are imported and used, as before.
 *
 * @module
 */

/** How a path given on the command line becomes a module URL. */
export interface FileUrls {
  /**
   * Whether a path is absolute, as `isAbsolute()`.
   *
   * @param path The path.
   */
  isAbsolute(path: string): boolean;
  /**
   * The absolute, normalised path (`..`, `.` and repeated separators resolved), as `resolve()`.
   *
   * @param cwd The working directory (absolute).
   * @param path The path, absolute or relative to `cwd`.
   */
  resolve(cwd: string, path: string): string;
  /**
   * The `file:` URL of an absolute path, as `pathToFileURL(path).href` (normalised as by
   * `resolve()`, a trailing separator kept).
   *
   * @param path The absolute path.
   */
  fileUrl(path: string): string;
}

/** The characters that Node's `pathToFileURL()` escapes and a URL's path keeps (on POSIX). */
const NODE_ESCAPES = /[\t\n\r%\\[\]^|~]/g;

/**
 * POSIX `resolve(cwd, path)` and `pathToFileURL(path).href`, as Node's (`path.posix`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { posixFileUrls } from "./_file_urls.ts";
 * assert.equal(posixFileUrls.resolve("/srv/app", "../op/./handlers.ts"), "/srv/op/handlers.ts");
 * assert.equal(posixFileUrls.fileUrl("/srv/my op/#1%.ts"), "file:///srv/my%20op/%231%25.ts");
 * ```
 */
export const posixFileUrls: FileUrls = {
  isAbsolute: (path) => path.startsWith("/"),
  resolve(cwd, path) {
    const parts: string[] = [];
    for (const part of (path.startsWith("/") ? path : `${cwd}/${path}`).split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") parts.pop();
      else parts.push(part);
    }
    return `/${parts.join("/")}`;
  },
  fileUrl(path) {
    let resolved = posixFileUrls.resolve("/", path);
    if (path.endsWith("/") && !resolved.endsWith("/")) resolved += "/";
    // What the URL's path setter leaves as it is and Node's pathToFileURL() escapes.
    const url = new URL("file://");
    url.pathname = resolved.replace(
      NODE_ESCAPES,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`,
    );
    return url.href;
  },
};

/**
 * The file URLs of this system: {@link posixFileUrls}, or on Windows Node's `resolve()` and
 * `pathToFileURL()`, imported now.
 *
 * @returns The functions.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fileUrls, posixFileUrls } from "./_file_urls.ts";
 * if (Deno.build.os !== "windows") assert.equal(await fileUrls(), posixFileUrls);
 * ```
 */
export async function fileUrls(): Promise<FileUrls> {
  if (Deno.build.os !== "windows") return posixFileUrls;
  const [{ isAbsolute, resolve }, { pathToFileURL }] = await Promise.all([
    import("node:path"),
    import("node:url"),
  ]);
  return { isAbsolute, resolve, fileUrl: (path) => pathToFileURL(path).href };
}
