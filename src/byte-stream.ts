/*
 * Reading request and response bodies with a size limit, shared by the REST layer, the GraphQL upload limit and
 * upstream adapters: a body is refused the moment it passes its limit, never buffered whole first.
 */

/** How much of a refused body is still read (and thrown away) after the refusal, by default; see discardRest. */
export const DISCARD_LIMIT_BYTES = 64 * 1_048_576;

/**
 * Reads a byte stream to its end. Past `limitBytes` it throws `tooLarge()`; the rest of the stream is then
 * drained in the background up to `discardUpToBytes` (a client still sending can read the refusal and keep its
 * connection), or cancelled at once when that is not given (an upstream's answer: nothing to keep).
 */
export async function readAllLimited(stream: ReadableStream<Uint8Array>, limitBytes: number, tooLarge: () => Error, options: { discardUpToBytes?: number } = {}): Promise<Uint8Array<ArrayBuffer>> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limitBytes) {
      if (options.discardUpToBytes === undefined) await reader.cancel().catch(() => undefined);
      else void discardRest(reader, options.discardUpToBytes);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * Reads and drops what is left of a refused upload, in the background, while the refusal is answered. A client
 * still sending then gets to read the answer (a server that stops reading and closes makes it fail with EPIPE
 * instead), and its keep-alive connection stays usable. Past the bound the body is abandoned.
 */
export async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>, limitBytes = DISCARD_LIMIT_BYTES): Promise<void> {
  let discarded = 0;
  try {
    while (discarded <= limitBytes) {
      const { done, value } = await reader.read();
      if (done) return;
      discarded += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away: nothing left to read.
  }
}
