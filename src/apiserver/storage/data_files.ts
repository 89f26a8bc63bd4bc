/**
 * The file handling of the data directory (`persistence.ts`): files read line
 * by line in chunks (a log may be far larger than V8's largest string),
 * owner-only modes, directory fsyncs, and errors shortened to their first line.
 *
 * @module
 */

export const NL = 10;

/**
 * Calls `each` for every `\n`-terminated line of a file, reading it in chunks.
 * Returns the file's size and the length of its complete lines (an
 * unterminated tail is not passed to `each`).
 */
export function readLines(
  path: string,
  each: (line: Uint8Array, lineNo: number, offset: number) => void,
): { size: number; complete: number } {
  const file = Deno.openSync(path, { read: true });
  try {
    const chunk = new Uint8Array(1 << 20);
    let pieces: Uint8Array[] = [];
    let pieceBytes = 0;
    let offset = 0; // of the line being gathered
    let size = 0;
    let lineNo = 0;
    for (;;) {
      const n = file.readSync(chunk);
      if (n === null || n === 0) break;
      size += n;
      const view = chunk.subarray(0, n);
      let from = 0;
      while (from < n) {
        const nl = view.indexOf(NL, from);
        if (nl < 0) {
          pieces.push(chunk.slice(from, n));
          pieceBytes += n - from;
          break;
        }
        let line = chunk.subarray(from, nl);
        if (pieces.length) {
          pieces.push(line);
          const joined = new Uint8Array(pieceBytes + line.length);
          let at = 0;
          for (const p of pieces) joined.set(p, at), at += p.length;
          line = joined;
          pieces = [];
          pieceBytes = 0;
        }
        lineNo++;
        each(line, lineNo, offset);
        offset += line.length + 1;
        from = nl + 1;
      }
    }
    return { size, complete: offset };
  } finally {
    file.close();
  }
}

export const decoder = new TextDecoder();

export function parseLine(bytes: Uint8Array): unknown {
  try {
    const value = JSON.parse(decoder.decode(bytes));
    return value && typeof value === "object" ? value : undefined;
  } catch {
    return undefined;
  }
}

export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

export function removeIfExists(path: string): boolean {
  try {
    Deno.removeSync(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** Our files hold Secrets: owner-only, whatever an earlier version left. */
export function tighten(path: string): void {
  try {
    if ((Deno.statSync(path).mode ?? 0) & 0o077) Deno.chmodSync(path, 0o600);
  } catch {
    // Not ours to change (another owner): left as it is.
  }
}

export function syncDir(path: string): void {
  const dir = Deno.openSync(path, { read: true });
  try {
    dir.syncSync();
  } finally {
    dir.close();
  }
}

export function firstLine(e: unknown): string {
  return String(e instanceof Error ? e.message : e).split("\n")[0]!;
}
