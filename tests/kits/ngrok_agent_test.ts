/**
 * The ngrok agent's output, read line by line as it comes (in chunks that split lines and
 * characters), with a cap on the line length.
 */
import assert from "node:assert/strict";
import { MAX_LINE, readLines } from "../../src/kits/_ngrok_agent.ts";

function streamOf(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return ReadableStream.from(chunks.map((c) => typeof c === "string" ? encoder.encode(c) : c));
}

Deno.test("readLines(): lines split across chunks, several in one chunk, CRLF, a last line without a break", async () => {
  const lines: string[] = [];
  const euro = new TextEncoder().encode("€"); // one character in three bytes, split below
  await readLines(
    streamOf([
      '{"msg":"a"}\n{"ms',
      'g":"b"}\r\n\n',
      euro.slice(0, 1),
      euro.slice(1),
      "\nlast",
    ]),
    (l) => lines.push(l),
  );
  assert.deepEqual(lines, ['{"msg":"a"}', '{"msg":"b"}', "", "€", "last"]);
});

Deno.test("readLines(): a line longer than the cap is cut, not buffered, and the next line is whole", async () => {
  const lines: string[] = [];
  const long = "x".repeat(MAX_LINE);
  await readLines(streamOf([long, long, "tail\nnext\n"]), (l) => lines.push(l));
  assert.equal(lines.length, 2);
  assert.equal(lines[0]!.length, MAX_LINE);
  assert.equal(lines[1], "next");
});
