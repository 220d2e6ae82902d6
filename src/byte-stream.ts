import type { Readable } from 'node:stream';
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
export async function readAllLimited(
  stream: ReadableStream<Uint8Array>,
  limitBytes: number,
  tooLarge: () => Error,
  options: { discardUpToBytes?: number } = {},
): Promise<Uint8Array<ArrayBuffer>> {
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
export async function discardRest(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  limitBytes = DISCARD_LIMIT_BYTES,
): Promise<void> {
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

/**
 * readAllLimited for a Node stream (an incoming request served without the Fetch API): the same limit and the same
 * background discard of a refused body, read with events (no promise per chunk).
 */
export function readNodeStreamLimited(
  stream: Readable,
  limitBytes: number,
  tooLarge: () => Error,
  discardUpToBytes: number,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total <= limitBytes) {
        chunks.push(chunk);
        return;
      }
      stop();
      // Read and drop the rest in the background, up to the bound, so a client still sending reads the refusal.
      let discarded = total;
      stream.on('data', (more: Buffer) => {
        discarded += more.byteLength;
        if (discarded > discardUpToBytes) stream.destroy();
      });
      stream.on('error', () => undefined);
      reject(tooLarge());
    };
    const onEnd = () => {
      stop();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    const onClose = () => onError(new Error('The client closed the connection before the body ended'));
    const stop = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}
