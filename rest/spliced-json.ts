/**
 * A JSON answer's bytes from JSON text and runs of bytes spliced in as they are: base64 (a picture, a vector) inside
 * quotes the text supplies. base64 has no character JSON escapes, so JSON.stringify of megabytes of it, and the
 * UTF-8 encoding of the resulting string, are spared: that is ≈ 7–16 ms of the event loop for a picture, ≈ 1.5 ms
 * for 64 vectors of 1,024 dimensions (bench/RESULTS.md); a splice costs one copy.
 */
export function splicedJson(parts: readonly (string | Buffer)[]): Buffer {
  return Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
}
