import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseKind } from '../helpers/db.ts';
import { serverStorage, startServer, type ServerProcess } from '../helpers/server-process.ts';

/*
 * Requests Node's HTTP parser refuses before any route sees them (headers over its 16 KiB limit, a malformed
 * request line) are answered in the error body too, by the server process as `npm start` runs it: Node's own answer
 * is an empty 431 or 400.
 */

/** Sends raw bytes and reads the whole answer (the server closes the connection after a refusal). */
function raw(url: string, text: string): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head.toLowerCase(), body });
    });
  });
}

describe(`Requests refused by the HTTP parser (${testDatabaseKind})`, () => {
  let server: ServerProcess;
  let removeStorage: () => Promise<void>;

  beforeAll(async () => {
    const storage = await serverStorage('lagoon-client-error-');
    removeStorage = storage.remove;
    server = await startServer(storage.env);
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) await server.stop();
    await removeStorage?.();
  });

  it('should answer headers over the limit with 431 in the error body', async () => {
    const response = await fetch(`${server.url}/api/v1/models`, { headers: { 'x-padding': 'p'.repeat(20_000) } });
    expect(response.status).toBe(431);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      error: expect.stringContaining('16384'),
      code: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
    });

    const many = await raw(
      server.url,
      `GET /healthz HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 400 }, (_, i) => `x-h${i}: ${'v'.repeat(60)}\r\n`).join('')}\r\n`,
    );
    expect(many.status).toBe(431);
    expect(JSON.parse(many.body)).toMatchObject({ code: 'REQUEST_HEADER_FIELDS_TOO_LARGE' });
  });

  it('should answer a malformed request with 400 in the error body, and keep serving', async () => {
    const malformed = await raw(server.url, 'NOT HTTP AT ALL\r\n\r\n');
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body)).toEqual({ error: expect.any(String), code: 'INVALID_REQUEST' });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
