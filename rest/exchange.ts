import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';

/*
 * The pipeline (pipeline.ts) serves Node's request and response objects: the HTTP server's fast path, with no
 * Request, Headers, Response or web stream per call. These are the parts of them it uses, and an adapter that
 * serves a Fetch-style Request through the same pipeline (the in-process handler the tests call).
 */

/** Node's IncomingMessage as the pipeline reads it; `fetchRequest` is set when it came from a Fetch Request. */
export interface HttpRequest extends Readable {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly fetchRequest?: Request;
}

/** Node's ServerResponse as the pipeline writes it. */
export interface HttpResponse {
  readonly headersSent: boolean;
  readonly destroyed: boolean;
  readonly writableFinished: boolean;
  readonly writableCorked: number;
  /** Bytes written and not yet taken by the connection (or the reader). */
  readonly writableLength: number;
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string | Uint8Array): boolean;
  end(chunk?: string | Uint8Array): unknown;
  destroy(error?: Error): unknown;
  cork(): void;
  uncork(): void;
  flushHeaders(): void;
  once(event: 'close', listener: () => void): unknown;
  on(event: 'close' | 'drain', listener: () => void): unknown;
  off(event: 'close' | 'drain', listener: () => void): unknown;
}

/** A Fetch Request as an HttpRequest: its body as a Node stream, its headers as Node holds them (lower case). */
export function requestFromFetch(request: Request): HttpRequest {
  const url = new URL(request.url);
  return Object.assign(new FetchBody(request), {
    method: request.method,
    url: url.pathname + url.search,
    // Fetch never carries Host (it is in the URL); an HTTP request always does, so the handlers see one either way.
    headers: { host: url.host, ...Object.fromEntries(request.headers) } as IncomingHttpHeaders,
    fetchRequest: request,
  });
}

/** A Request's body as a Node stream, locked only once read (GraphQL hands the Request itself on to Yoga). */
class FetchBody extends Readable {
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;

  constructor(private readonly request: Request) {
    super();
  }

  override _read(): void {
    if (!this.request.body) {
      this.push(null);
      return;
    }
    this.reader ??= this.request.body.getReader();
    this.reader.read().then(
      ({ done, value }) => this.push(done ? null : value),
      (error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    void this.reader?.cancel().catch(() => undefined);
    callback(error);
  }
}

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * An HttpResponse whose answer becomes a Fetch Response, resolved when the head is written. Its body is pulled:
 * a write reports back-pressure until the reader asks for more, so a stream advances as the client reads, and a
 * reader that cancels closes the "connection" (the pipeline then aborts the call).
 */
export class FetchResponder extends EventEmitter implements HttpResponse {
  headersSent = false;
  destroyed = false;
  writableFinished = false;
  readonly writableCorked = 0;
  /** Bytes enqueued since the reader last asked for more. */
  writableLength = 0;
  readonly response: Promise<Response>;
  private resolve!: (response: Response) => void;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;

  constructor(private readonly head: boolean) {
    super();
    this.response = new Promise((resolve) => (this.resolve = resolve));
  }

  writeHead(status: number, headers: Record<string, string>): this {
    if (this.headersSent) return this;
    this.headersSent = true;
    const hasBody = !NULL_BODY.has(status) && !this.head;
    const body = hasBody
      ? new ReadableStream<Uint8Array>(
          {
            start: (controller) => {
              this.controller = controller;
            },
            pull: () => {
              this.writableLength = 0;
              this.emit('drain');
            },
            cancel: () => this.close(),
          },
          { highWaterMark: 0 },
        )
      : null;
    this.resolve(new Response(body, { status, headers }));
    return this;
  }

  write(chunk: string | Uint8Array): boolean {
    if (!this.headersSent) this.writeHead(200, {});
    if (this.destroyed || this.writableFinished || !this.controller) return true;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.writableLength += bytes.byteLength;
    this.controller.enqueue(bytes);
    return (this.controller.desiredSize ?? 0) > 0;
  }

  end(chunk?: string | Uint8Array): this {
    if (this.writableFinished || this.destroyed) return this;
    if (chunk !== undefined && (typeof chunk === 'string' ? chunk.length : chunk.byteLength) > 0) this.write(chunk);
    if (!this.headersSent) this.writeHead(200, {});
    this.writableFinished = true;
    this.controller?.close();
    this.emit('finish');
    this.emit('close');
    return this;
  }

  destroy(error?: Error): this {
    if (!this.headersSent) this.writeHead(500, {});
    if (!this.writableFinished && !this.destroyed) this.controller?.error(error ?? new Error('aborted'));
    this.close();
    return this;
  }

  /** The reader went away (or the request was aborted): like a dropped connection. */
  close(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('close');
  }

  cork(): void {}
  uncork(): void {}
  flushHeaders(): void {}
}
