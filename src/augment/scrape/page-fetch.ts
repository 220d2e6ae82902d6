import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { agentOnFirstUse, undici } from '../../undici.ts';
import { literalAddress, type AddressPolicy } from './address-policy.ts';

export interface PageFetchLimits {
  /** The whole fetch, redirects and body included. */
  readonly timeoutMs: number;
  /** Bytes of body read at most; a longer body is cut there (`truncated`). */
  readonly maxBytes: number;
  readonly maxRedirects: number;
}

export interface FetchedPage {
  /** The URL the body came from, after redirects. */
  readonly url: string;
  /** The media type, lower-case, without parameters ('' when the server sent none). */
  readonly mediaType: string;
  readonly charset: string | undefined;
  readonly bytes: Uint8Array;
  readonly truncated: boolean;
  /** Last-Modified as an ISO date, when the server sent a valid one. */
  readonly lastModified: string | undefined;
}

/** Why a page was not fetched; `reason` is short and safe to log (never the page content). */
export class PageFetchError extends Error {
  /** `refused`: the caller asked for something never fetched (a private address, another scheme); `failed`: the site. */
  constructor(
    readonly reason: string,
    readonly kind: 'refused' | 'failed' = 'failed',
  ) {
    super(reason);
    this.name = 'PageFetchError';
  }
}

const USER_AGENT = 'Mozilla/5.0 (compatible; LagoonBot/0.1; +chat web scraping)';
const ACCEPT = 'text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.5';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * HTTP(S) GET of pages named by users, which must not reach private networks. Every connection's DNS answer is
 * checked by the address policy inside the socket's own lookup, so the address judged is the address connected to
 * (no window for DNS rebinding); IP-literal hosts, which skip the lookup, are judged before each request. Redirects
 * are followed by hand, each hop judged the same way.
 */
export class PageFetcher {
  private readonly agent = agentOnFirstUse(() => ({
    connect: { lookup: this.guardedLookup, timeout: Math.min(this.limits.timeoutMs, 10_000) },
    keepAliveTimeout: 4_000,
    // Redirects are ours to judge, hop by hop.
    maxRedirections: 0,
  }));

  constructor(
    private readonly policy: AddressPolicy,
    private readonly limits: PageFetchLimits,
  ) {}

  async fetch(url: string, signal?: AbortSignal): Promise<FetchedPage> {
    const deadline = AbortSignal.timeout(this.limits.timeoutMs);
    const abort = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      return await this.follow(url, abort);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (deadline.aborted) throw new PageFetchError(`no answer within ${this.limits.timeoutMs} ms`);
      if (error instanceof PageFetchError) throw error;
      const blocked = findBlocked(error);
      throw (
        blocked ??
        new PageFetchError(
          error instanceof Error
            ? `${(error as NodeJS.ErrnoException).code ?? error.name}: ${error.message}`
            : String(error),
        )
      );
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async follow(start: string, signal: AbortSignal): Promise<FetchedPage> {
    let url = new URL(start);
    for (let hop = 0; ; hop += 1) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw new PageFetchError(`not an http(s) URL: ${url.protocol}`, 'refused');
      const literal = literalAddress(url.hostname);
      if (literal !== undefined && !this.policy.allows(literal)) throw blockedAddress(literal);
      url.hash = '';
      const response = await undici().request(url, {
        method: 'GET',
        dispatcher: this.agent.get(),
        signal,
        headers: { 'user-agent': USER_AGENT, accept: ACCEPT, 'accept-encoding': 'identity' },
        headersTimeout: this.limits.timeoutMs,
        bodyTimeout: this.limits.timeoutMs,
      });
      const location = header(response.headers, 'location');
      if (response.statusCode >= 300 && response.statusCode < 400 && location !== undefined) {
        discard(response.body);
        if (hop >= this.limits.maxRedirects)
          throw new PageFetchError(`more than ${this.limits.maxRedirects} redirects`);
        url = new URL(location, url);
        continue;
      }
      if (response.statusCode < 200 || response.statusCode >= 300) {
        discard(response.body);
        throw new PageFetchError(`HTTP ${response.statusCode}`);
      }
      const [mediaType = '', ...parameters] = (header(response.headers, 'content-type') ?? '')
        .split(';')
        .map((part) => part.trim());
      const charset = parameters
        .find((part) => /^charset=/i.test(part))
        ?.slice('charset='.length)
        .replace(/"/g, '');
      const { bytes, truncated } = await readCapped(response.body, this.limits.maxBytes);
      const modified = Date.parse(header(response.headers, 'last-modified') ?? '');
      return {
        url: url.href,
        mediaType: mediaType.toLowerCase(),
        charset,
        bytes,
        truncated,
        lastModified: Number.isNaN(modified) ? undefined : new Date(modified).toISOString(),
      };
    }
  }

  /** dns.lookup, refusing the whole answer when any address in it is not allowed. */
  private readonly guardedLookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.find((entry) => !this.policy.allows(entry.address));
      if (refused) return callback(blockedAddress(refused.address, hostname), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

function blockedAddress(address: string, hostname?: string): PageFetchError {
  return new PageFetchError(
    `${hostname ? `${hostname} resolves to ` : ''}${address}, which is not a public address`,
    'refused',
  );
}

/** The policy's refusal, wherever undici wrapped it. */
function findBlocked(error: unknown): PageFetchError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    if (cause instanceof PageFetchError) return cause;
  }
  return undefined;
}

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

type Body = AsyncIterable<Buffer> & { destroy(): unknown; on(event: 'error', listener: () => void): unknown };

/** Nothing more is wanted from this body: close it (undici reports that as an error event, expected here). */
function discard(body: Body): void {
  body.on('error', () => undefined);
  body.destroy();
}

async function readCapped(body: Body, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of body) {
    const room = maxBytes - size;
    if (part.byteLength > room) {
      parts.push(part.subarray(0, room));
      discard(body);
      return { bytes: Buffer.concat(parts, maxBytes), truncated: true };
    }
    parts.push(part);
    size += part.byteLength;
  }
  return { bytes: Buffer.concat(parts, size), truncated: false };
}
