import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip } from 'node:zlib';

/*
 * `Accept-Encoding: gzip, br` for JSON responses (chat completions and, later, image generation).
 * Brotli at a low quality: most of its gain at a fraction of the default's CPU time.
 */

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);
const BROTLI_OPTIONS = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };

export type ContentCoding = 'br' | 'gzip';

/** The coding to use for an `Accept-Encoding` value: br, else gzip, ignoring codings refused with `q=0`. */
export function chooseCoding(acceptEncoding: string | null): ContentCoding | undefined {
  if (!acceptEncoding) return undefined;
  const accepted = new Set<string>();
  for (const entry of acceptEncoding.toLowerCase().split(',')) {
    const [coding = '', ...params] = entry.split(';').map((part) => part.trim());
    const q = params.find((param) => param.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) accepted.add(coding);
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip') || accepted.has('x-gzip')) return 'gzip';
  return undefined;
}

/** A JSON body and its headers, compressed when the client accepts gzip or br. */
export async function compressJson(
  json: string | Buffer,
  acceptEncoding: string | null | undefined,
  headers: Record<string, string> = {},
): Promise<{ body: string | Buffer; headers: Record<string, string> }> {
  const coding = chooseCoding(acceptEncoding ?? null);
  const base = { 'content-type': 'application/json; charset=utf-8', vary: 'accept-encoding', ...headers };
  if (!coding) return { body: json, headers: base };
  const raw = typeof json === 'string' ? Buffer.from(json, 'utf8') : json;
  const compressed = coding === 'br' ? await brotli(raw, BROTLI_OPTIONS) : await gzipAsync(raw);
  return { body: compressed, headers: { ...base, 'content-encoding': coding } };
}

/**
 * A streamed body compressed as it goes. A source that fails, or a client that goes away, ends both: the error
 * reaches the reader (which then cuts the connection), and the source is stopped.
 */
export function compressStream(source: AsyncIterable<Uint8Array>, coding: ContentCoding): AsyncIterable<Buffer> {
  const compressor = coding === 'br' ? createBrotliCompress(BROTLI_OPTIONS) : createGzip();
  // The pipeline's own failure reaches the reader through the compressor, which it destroys.
  pipeline(Readable.from(source), compressor).catch(() => undefined);
  return compressor;
}
