import type { Pool } from 'undici';
import { undici } from '../../undici.ts';
import { followAbort } from '../../abort.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import {
  UpstreamFailure,
  type JsonRpcHttpAnswer,
  type JsonRpcEngine,
  type JsonRpcUpstreamSettings,
} from './json-rpc-engine.ts';

/** A node's settings when its provider config (or its network) does not set them. */
export const JSON_RPC_DEFAULTS = { timeoutMs: 30_000, maxResponseBytes: 64 * 1024 * 1024, connections: 64 } as const;

/** A json-rpc provider: its baseUrl, timeout and headers; an apiKey is sent as a Bearer token unless headers set Authorization. */
export function jsonRpcSettingsOf(config: ProviderConfig): JsonRpcUpstreamSettings {
  const headers: Record<string, string> = {
    ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
    ...config.headers,
  };
  const options = config.options ?? {};
  const connections =
    typeof options.connections === 'number' && options.connections > 0
      ? Math.floor(options.connections)
      : JSON_RPC_DEFAULTS.connections;
  const maxResponseBytes =
    typeof options.maxResponseBytes === 'number' && options.maxResponseBytes > 0
      ? Math.floor(options.maxResponseBytes)
      : JSON_RPC_DEFAULTS.maxResponseBytes;
  return {
    url: config.baseUrl ?? '',
    timeoutMs: config.timeoutMs ?? JSON_RPC_DEFAULTS.timeoutMs,
    headers,
    maxResponseBytes,
    connections,
  };
}

/**
 * A JSON-RPC node over HTTP(S) through an undici Pool: kept-alive, pooled connections (a fresh TCP/TLS handshake
 * per call would cost more than the proxy's whole budget). Credentials in the URL (`https://user:pass@host/…`)
 * become a Basic Authorization header; the URL itself never reaches a log or an error message.
 */
export class HttpJsonRpcEngine implements JsonRpcEngine {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;

  constructor(
    readonly id: string,
    private readonly settings: JsonRpcUpstreamSettings,
  ) {
    const url = new URL(settings.url);
    this.path = `${url.pathname || '/'}${url.search}`;
    this.headers = { 'content-type': 'application/json', accept: 'application/json' };
    if (url.username)
      this.headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    Object.assign(this.headers, lowerCaseKeys(settings.headers));
    this.pool = new (undici().Pool)(url.origin, {
      connections: settings.connections,
      pipelining: 1,
      keepAliveTimeout: 4_000,
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  async post(body: string, options: { signal?: AbortSignal | undefined } = {}): Promise<JsonRpcHttpAnswer> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.settings.timeoutMs);
    const callerSignal = options.signal;
    const stopFollowing = followAbort(callerSignal, controller);
    try {
      const response = await this.pool.request({
        path: this.path,
        method: 'POST',
        headers: this.headers,
        body,
        signal: controller.signal,
      });
      const chunks: Buffer[] = [];
      let total = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        total += chunk.byteLength;
        if (total > this.settings.maxResponseBytes) {
          response.body.destroy();
          throw new UpstreamFailure('too-large', `the node's answer exceeds ${this.settings.maxResponseBytes} bytes`);
        }
        chunks.push(chunk);
      }
      return { status: response.statusCode, body: Buffer.concat(chunks, total) };
    } catch (error) {
      if (error instanceof UpstreamFailure) throw error;
      if (timedOut) throw new UpstreamFailure('timeout', `no answer within ${this.settings.timeoutMs} ms`);
      if (callerSignal?.aborted) throw new UpstreamFailure('aborted', 'the caller went away');
      throw classify(error);
    } finally {
      clearTimeout(timer);
      stopFollowing();
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function classify(error: unknown): UpstreamFailure {
  const code = (error as { code?: unknown }).code;
  // A kept-alive socket the node closed between two requests: the request may never have reached it.
  if (
    error instanceof undici().errors.SocketError ||
    code === 'ECONNRESET' ||
    code === 'UND_ERR_SOCKET' ||
    code === 'EPIPE'
  ) {
    return new UpstreamFailure('reset', 'the connection to the node was closed');
  }
  return new UpstreamFailure(
    'connection',
    typeof code === 'string' ? `the node could not be reached (${code})` : 'the node could not be reached',
  );
}

function lowerCaseKeys(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
