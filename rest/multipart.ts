import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import busboy from 'busboy';
import { InvalidContentTypeError, PayloadTooLargeError, ValidationError } from '../src/errors.ts';
import { discardRest } from '../src/byte-stream.ts';

export interface UploadedFile {
  readonly bytes: Uint8Array;
  readonly filename: string | undefined;
  readonly contentType: string | undefined;
}

export interface MultipartUpload {
  readonly file: UploadedFile;
  /** Text fields (first value of each name). */
  readonly fields: Readonly<Record<string, string>>;
}

export interface MultipartLimits {
  /** The file field's limit; one byte more and the upload is refused (413) while it streams. */
  readonly maxFileBytes: number;
  /** Room for the other fields and the multipart framing. */
  readonly overheadBytes?: number;
}

const MULTIPART = /^multipart\/form-data\b/i;

/**
 * Reads a multipart/form-data upload with one file field, streaming: a declared Content-Length over the limit is
 * refused before reading, and an undeclared (chunked) body is counted as it arrives and abandoned the moment the
 * file passes its limit, so an oversized upload is never held in memory.
 */
export async function readMultipartUpload(
  headers: IncomingHttpHeaders,
  body: Readable,
  fileField: string,
  limits: MultipartLimits,
): Promise<MultipartUpload> {
  const type = headers['content-type'] ?? '';
  if (!MULTIPART.test(type)) {
    throw new InvalidContentTypeError(
      `Content-Type must be multipart/form-data with a "${fileField}" field, got ${type ? `"${type.split(';')[0]}"` : 'none'}`,
    );
  }
  const overhead = limits.overheadBytes ?? 1_048_576;
  const maxBody = limits.maxFileBytes + overhead;
  const declared = Number(headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBody) throw new PayloadTooLargeError(limits.maxFileBytes);

  const parser = createParser(type, limits.maxFileBytes);

  const fields: Record<string, string> = {};
  let file: UploadedFile | undefined;
  let fileAsText = false;
  let failure: Error | undefined;
  const finished = new Promise<void>((resolve, reject) => {
    const fail = (error: Error) => {
      failure ??= error;
      reject(failure);
    };
    parser.on('file', (name, stream, info) => {
      // Destroying the parser after a refusal ends an unfinished file stream with an error nobody needs.
      stream.on('error', () => undefined);
      if (name !== fileField || file) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => fail(new PayloadTooLargeError(limits.maxFileBytes)));
      stream.on('end', () => {
        if (!stream.truncated)
          file = { bytes: new Uint8Array(Buffer.concat(chunks)), filename: info.filename, contentType: info.mimeType };
      });
    });
    parser.on('field', (name, value) => {
      if (name === fileField) fileAsText = true;
      else if (!(name in fields)) fields[name] = value;
    });
    parser.on('error', (error: Error) =>
      fail(new ValidationError(`Malformed multipart/form-data body: ${error.message}`)),
    );
    parser.on('close', () => resolve());
  });
  finished.catch(() => undefined);

  await pump(
    body,
    parser,
    { maxBody, tooLarge: () => new PayloadTooLargeError(limits.maxFileBytes) },
    () => failure,
    (error) => {
      failure ??= error;
    },
  );
  if (failure) throw failure;
  await finished;
  if (!file) {
    const message = fileAsText
      ? `Field "${fileField}" must be a file upload, not a text field (curl: -F ${fileField}=@document.pdf)`
      : `Missing required file field "${fileField}" (curl: -F ${fileField}=@document.pdf)`;
    throw new ValidationError(message, [{ path: [fileField], message: fileAsText ? 'Must be a file' : 'Required' }]);
  }
  return { file, fields };
}

/** A busboy parser for one upload; a malformed Content-Type header is the caller's 400. */
function createParser(type: string, maxFileBytes: number): busboy.Busboy {
  try {
    return busboy({
      headers: { 'content-type': type },
      // busboy reports the limit when a file reaches fileSize bytes; one more than the maximum means "over it".
      limits: {
        fileSize: maxFileBytes + 1,
        files: 4,
        fields: 20,
        fieldSize: 65_536,
        parts: 24,
        headerPairs: 64,
      },
    });
  } catch (error) {
    throw new ValidationError(
      `Malformed multipart/form-data request: ${error instanceof Error ? error.message : 'bad header'}`,
    );
  }
}

/** Feeds the body to the parser chunk by chunk; stops reading (and cancels the body) at the first failure. */
async function pump(
  body: Readable,
  parser: busboy.Busboy,
  limit: { maxBody: number; tooLarge: () => Error },
  failed: () => Error | undefined,
  fail: (error: Error) => void,
): Promise<void> {
  // Read as a web stream: a refused upload's rest is then drained in the background (discardRest).
  const reader = (Readable.toWeb(body) as ReadableStream<Uint8Array>).getReader();
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit.maxBody) fail(limit.tooLarge());
      if (failed()) break;
      if (!parser.write(value)) await drained(parser);
      if (failed()) break;
    }
  } catch {
    fail(new ValidationError('The upload was interrupted before it was complete.'));
  }
  if (failed()) {
    parser.destroy();
    void discardRest(reader);
    return;
  }
  parser.end();
}

function drained(parser: busboy.Busboy): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      parser.off('drain', done);
      parser.off('close', done);
      parser.off('error', done);
      resolve();
    };
    parser.on('drain', done);
    parser.on('close', done);
    parser.on('error', done);
  });
}

/**
 * Reads a multipart/form-data upload whose file parts all count (e.g. `images` repeated, or `images[]`), streaming
 * as readMultipartUpload does: each file is refused (413) the moment it passes `maxFileBytes`, the whole body past
 * `maxFiles` files' worth plus the overhead. Files come in the order sent; text fields as in readMultipartUpload.
 */
export async function readMultipartFiles(
  headers: IncomingHttpHeaders,
  body: Readable,
  fileField: string,
  limits: MultipartLimits & { readonly maxFiles: number },
): Promise<{ files: UploadedFile[]; fields: Readonly<Record<string, string>> }> {
  const type = headers['content-type'] ?? '';
  if (!MULTIPART.test(type))
    throw new InvalidContentTypeError(`Content-Type must be multipart/form-data with "${fileField}" file parts`);
  const maxBody = limits.maxFileBytes * limits.maxFiles + (limits.overheadBytes ?? 1_048_576);
  const declared = Number(headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBody) throw new PayloadTooLargeError(limits.maxFileBytes);
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': type },
      limits: { fileSize: limits.maxFileBytes + 1, files: limits.maxFiles + 1, fields: 20, fieldSize: 65_536 },
    });
  } catch (error) {
    throw new ValidationError(
      `Malformed multipart/form-data request: ${error instanceof Error ? error.message : 'bad header'}`,
    );
  }
  const fields: Record<string, string> = {};
  const files: UploadedFile[] = [];
  let failure: Error | undefined;
  const finished = new Promise<void>((resolve, reject) => {
    const fail = (error: Error) => {
      failure ??= error;
      reject(failure);
    };
    parser.on('file', (name, stream, info) => {
      stream.on('error', () => undefined);
      if (name !== fileField && name !== `${fileField}[]`) {
        stream.resume();
        return;
      }
      const index = files.length;
      files.push({ bytes: new Uint8Array(), filename: info.filename, contentType: info.mimeType });
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => fail(new PayloadTooLargeError(limits.maxFileBytes)));
      stream.on('end', () => {
        if (!stream.truncated) files[index] = { ...files[index]!, bytes: new Uint8Array(Buffer.concat(chunks)) };
      });
    });
    parser.on('field', (name, value) => {
      if (!(name in fields)) fields[name] = value;
    });
    parser.on('filesLimit', () =>
      fail(
        new ValidationError(`At most ${limits.maxFiles} "${fileField}" files`, [
          { path: [fileField], message: `At most ${limits.maxFiles} files` },
        ]),
      ),
    );
    parser.on('error', (error: Error) =>
      fail(new ValidationError(`Malformed multipart/form-data body: ${error.message}`)),
    );
    parser.on('close', () => resolve());
  });
  finished.catch(() => undefined);
  await pump(
    body,
    parser,
    { maxBody, tooLarge: () => new PayloadTooLargeError(limits.maxFileBytes) },
    () => failure,
    (error) => {
      failure ??= error;
    },
  );
  if (failure) throw failure;
  await finished;
  if (files.length === 0)
    throw new ValidationError(`Missing required file field "${fileField}"`, [
      { path: [fileField], message: 'Required' },
    ]);
  return { files, fields };
}
