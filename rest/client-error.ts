import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorCode } from '../src/errors.ts';

/*
 * A request Node's HTTP parser refuses never reaches a route: without a 'clientError' listener Node answers it
 * itself with an empty body (431 for headers over the limit, 400 otherwise). This answers in the error body
 * every other error has.
 */

const REFUSALS: Record<string, { status: number; code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
    message: `Request headers exceed the limit of ${maxHeaderSize} bytes`,
  },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'REQUEST_TIMEOUT', message: 'The request was not received in time' },
};
const MALFORMED = { status: 400, code: 'INVALID_REQUEST', message: 'Malformed HTTP request' } as const;

/** The server's 'clientError' listener. */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // Nothing to answer on a connection the client already dropped, or in the middle of an answer already begun.
  const answering =
    (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === 'ECONNRESET' || !socket.writable || answering) {
    socket.destroy();
    return;
  }
  const { status, code, message } = REFUSALS[error.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify({ error: message, code });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
