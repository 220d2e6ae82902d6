import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ServerOverloadedError } from '../src/errors.ts';
import type { HttpRequest, HttpResponse } from './exchange.ts';
import { errorPayload } from './http.ts';

/*
 * Graceful under overload: past `limit` requests in flight in this process, a request is answered 503 with
 * Retry-After at once instead of waiting in a queue until every caller times out. A request counts from its
 * arrival until its answer is written out or its client leaves, so an open stream (SSE, a chat stream, a
 * WebSocket) counts for as long as it is open. The operational endpoints are never refused: a probe or a scrape
 * must see the process that is shedding load. 0 = no limit.
 */

/** Answered whatever the load (the health checks and the Prometheus scrape). */
const ALWAYS_ADMITTED = new Set(['/healthz', '/readyz', '/metrics']);

export interface InFlightLimit {
  /** Requests (and WebSockets) in flight now. */
  readonly current: () => number;
  /**
   * Counts `req` in until `res` closes, or answers the error to send instead when the process is full (undefined:
   * admitted).
   */
  admit(req: HttpRequest, res: HttpResponse): ServerOverloadedError | undefined;
  /** The `upgrade` listener behind the limit: a WebSocket counts while open; past the limit, a 503 on the socket. */
  guardUpgrade(
    listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
  ): (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

export function inFlightLimit(limit: number): InFlightLimit {
  let inFlight = 0;
  /** One more in flight until `closer` emits close (once, however often it emits it). */
  const hold = (closer: { once(event: 'close', listener: () => void): unknown }) => {
    inFlight += 1;
    closer.once('close', () => (inFlight -= 1));
  };
  const full = () => limit > 0 && inFlight >= limit;
  return {
    current: () => inFlight,
    admit(req, res) {
      if (ALWAYS_ADMITTED.has((req.url ?? '/').split('?')[0] ?? '/')) return undefined;
      if (full()) return new ServerOverloadedError(limit);
      hold(res);
      return undefined;
    },
    guardUpgrade: (listener) => (req, socket, head) => {
      if (!full()) {
        hold(socket);
        return listener(req, socket, head);
      }
      const { status, body, headers } = errorPayload(new ServerOverloadedError(limit), '');
      const lines = Object.entries({
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      });
      socket.end(
        `HTTP/1.1 ${status} Service Unavailable\r\nconnection: close\r\n${lines.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${body}`,
      );
    },
  };
}
