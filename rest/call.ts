import type { Readable } from 'node:stream';
import type { AuthContext } from '../src/auth/auth-context.ts';
import { readNodeStreamLimited } from '../src/byte-stream.ts';
import type { Config } from '../src/config.ts';
import { PayloadTooLargeError } from '../src/errors.ts';
import { requestOrigin } from '../src/media/media-links.ts';
import type { Operations } from '../src/services.ts';
import type { HttpRequest } from './exchange.ts';
import { parseJsonBytes, requireJsonType } from './http.ts';
import type { RouteContext } from './router.ts';

/** JSON bodies are small: past this much of a refused one, the connection is not worth keeping. */
export const JSON_DISCARD_LIMIT_BYTES = 8 * 1_048_576;

/** A handler's view of its request (router.ts RouteContext); made once per call, with nothing made eagerly. */
export class RouteCall implements RouteContext {
  private parsedUrl: URL | undefined;

  constructor(
    private readonly req: HttpRequest,
    readonly params: Readonly<Record<string, string>>,
    readonly auth: AuthContext,
    readonly services: Operations,
    readonly config: Config,
    readonly requestId: string,
    readonly signal: AbortSignal,
    private readonly limitBytes: number,
  ) {}

  get headers() {
    return this.req.headers;
  }

  get body(): Readable {
    return this.req;
  }

  get url(): URL {
    this.parsedUrl ??= new URL(this.req.url ?? '/', 'http://localhost');
    return this.parsedUrl;
  }

  header(name: string): string | undefined {
    const value = this.req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  }

  get origin(): string | undefined {
    return requestOrigin({ host: this.header('host'), forwardedProto: this.header('x-forwarded-proto') });
  }

  async json(): Promise<Record<string, unknown>> {
    return parseJsonBytes(await this.bytes());
  }

  /** 415 for another declared type; 413 past the limit, refused before reading when Content-Length says so. */
  bytes(): Promise<Uint8Array> {
    requireJsonType(this.req.headers['content-type']);
    const limit = this.limitBytes;
    const tooLarge = () => new PayloadTooLargeError(limit);
    const declared = Number(this.req.headers['content-length'] ?? Number.NaN);
    if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge());
    return readNodeStreamLimited(this.req, limit, tooLarge, JSON_DISCARD_LIMIT_BYTES);
  }
}
