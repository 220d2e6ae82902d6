/**
 * A JSON answer's bytes from JSON text and runs of bytes spliced in as they are: base64 (a picture, a vector) inside
 * quotes the text supplies. base64 has no character JSON escapes, so JSON.stringify of megabytes of it, and the
 * UTF-8 encoding of the resulting string, are spared: that is ≈ 7–16 ms of the event loop for a picture, ≈ 1.5 ms
 * for 64 vectors of 1,024 dimensions (bench/RESULTS.md); a splice costs one copy. Text parts are written straight
 * into the answer: a Buffer for each of them was ~30 KB of young garbage per answer of 64 vectors.
 */
export function splicedJson(parts: readonly (string | Buffer)[]): Buffer {
  let length = 0;
  for (const part of parts) length += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (const part of parts) at += typeof part === 'string' ? out.write(part, at) : part.copy(out, at);
  return out;
}

/**
 * Bytes encoded per slice by base64Bytes: 48 KiB (a multiple of 3, so no slice but the last is padded) become 64 KiB
 * of text, below V8's large-object size.
 */
const BASE64_SLICE_BYTES = 48 * 1024;

/**
 * Bytes as base64 text in a Buffer, for splicing. Encoded in slices: a picture's base64 in one string is a
 * large object that lives in the old generation until a full collection, and a few a second of them (image answers)
 * bring those collections, with pauses of 10 ms and more, every few seconds; strings of 64 KiB die young.
 */
export function base64Bytes(bytes: Uint8Array): Buffer {
  const source = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = Buffer.allocUnsafe(Math.ceil(source.length / 3) * 4);
  let written = 0;
  for (let from = 0; from < source.length; from += BASE64_SLICE_BYTES) {
    const slice = source.toString('base64', from, Math.min(source.length, from + BASE64_SLICE_BYTES));
    written += text.write(slice, written, 'latin1');
  }
  return text;
}
