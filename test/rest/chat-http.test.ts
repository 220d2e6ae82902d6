import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { chatAccount, readSse, startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';

/*
 * The HTTP server answers POST /api/v1/chat/completions on Node's own request and response objects, not through the
 * Fetch API layer every other route takes. What that layer did for the route must still hold over the wire: auth,
 * content type, body limits (with a kept-alive connection still usable after a refusal), request ids, CORS,
 * compression, and the same answers as the in-process fetch handler.
 */

const LIMIT = 64 * 1024;
const body = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    model: 'lagoon-sim-chat',
    messages: [{ role: 'user', content: 'Tell me about otters.' }],
    seed: 7,
    max_tokens: 40,
    ...extra,
  });

describe(`REST chat completions over HTTP, served on Node's objects (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  const post = (init: { body?: string | undefined; headers?: Record<string, string> }) =>
    fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json', ...init.headers },
      body: init.body ?? body(),
    });

  beforeAll(async () => {
    server = await startChatServer({ LAGOON_MAX_CHAT_BODY_BYTES: String(LIMIT), CORS_ORIGINS: 'https://app.example' });
    account = await chatAccount(server, '1');
  });
  afterAll(async () => server.close());

  it('should answer 401 without a key and with a bad key, in the contract error body', async () => {
    const none = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(),
    });
    // No credentials: the x402 discovery body (a wallet may call chat); a bad key is still 401.
    expect(none.status).toBe(402);
    expect(await none.json()).toMatchObject({ x402Version: 2, error: 'Payment required' });
    const bad = await post({ headers: { authorization: 'Bearer not-a-key' } });
    expect(bad.status).toBe(401);
  });

  it('should answer 415 for a body declared as another type, and 400 for an empty body or bad JSON', async () => {
    const xml = await post({ headers: { 'content-type': 'application/xml' }, body: '<a/>' });
    expect(xml.status).toBe(415);
    expect(await xml.json()).toMatchObject({ code: 'INVALID_CONTENT_TYPE' });
    const empty = await post({ body: '' });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: string }).error).toMatch(/empty/);
    const broken = await post({ body: '{"model": ' });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: string }).error).toMatch(/not valid JSON/);
  });

  it('should answer 413 for a body over the limit, declared or chunked, and keep the connection usable', async () => {
    const big = body({ user: 'x'.repeat(LIMIT) });
    const declared = await post({ body: big });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });

    // Chunked (no Content-Length), then a second request on the same kept-alive connection.
    const pool = new Pool(server.url, { connections: 1, pipelining: 1 });
    try {
      const chunks = async function* () {
        yield Buffer.from(big.slice(0, LIMIT / 2));
        yield Buffer.from(big.slice(LIMIT / 2));
      };
      const headers = { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' };
      const refused = await pool.request({
        method: 'POST',
        path: '/api/v1/chat/completions',
        headers,
        body: Readable.from(chunks()),
      });
      expect(refused.statusCode).toBe(413);
      await refused.body.text();
      const next = await pool.request({ method: 'POST', path: '/api/v1/chat/completions', headers, body: body() });
      expect(next.statusCode).toBe(200);
      expect(((await next.body.json()) as { choices: unknown[] }).choices).toHaveLength(1);
    } finally {
      await pool.close();
    }
  });

  it('should echo a valid X-Request-ID, make one up otherwise, and send the CORS headers for an allowed origin', async () => {
    const given = 'abcdef0123456789abcdef0123456789';
    const echoed = await post({ headers: { 'x-request-id': given, origin: 'https://app.example' } });
    expect(echoed.status).toBe(200);
    expect(echoed.headers.get('x-request-id')).toBe(given);
    expect(echoed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(echoed.headers.get('x-balance-usd')).toMatch(/^\d+\.\d+$/);
    // The completion id is Lagoon's own, not built from the caller's request id (which may repeat).
    const id = ((await echoed.json()) as { id: string }).id;
    expect(id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(id).not.toContain(given);
    const again = await post({ headers: { 'x-request-id': given } });
    expect(again.headers.get('x-request-id')).toBe(given);
    expect(((await again.json()) as { id: string }).id).not.toBe(id);
    const made = await post({ headers: { 'x-request-id': 'not valid', origin: 'https://elsewhere.example' } });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
    expect(made.headers.get('access-control-allow-origin')).toBeNull();
    await made.body?.cancel();
  });

  it('should gzip the answer when asked, with its exact length', async () => {
    const raw = await new Promise<{
      status: number;
      headers: Record<string, string | string[] | undefined>;
      bytes: Buffer;
    }>((resolve, reject) => {
      const payload = body();
      const req = httpRequest(
        `${server.url}/api/v1/chat/completions`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${account.secret}`,
            'content-type': 'application/json',
            'accept-encoding': 'gzip',
            'content-length': Buffer.byteLength(payload),
          },
        },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (part: Buffer) => parts.push(part));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(parts) }),
          );
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
    expect(raw.status).toBe(200);
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(Number(raw.headers['content-length'])).toBe(raw.bytes.length);
    expect(JSON.parse(gunzipSync(raw.bytes).toString('utf8'))).toMatchObject({
      object: 'chat.completion',
      model: 'lagoon-sim-chat',
    });
  });

  it('should give the same answer and the same stream as the in-process fetch handler', async () => {
    const strip = (value: unknown) =>
      JSON.parse(
        JSON.stringify(value)
          .replace(/chatcmpl-[0-9a-f]{32}/g, 'ID')
          .replace(/"created":\d+/g, '"created":0'),
      ) as unknown;
    const viaHttp = await post({});
    const inProcess = await server.t.call('/api/v1/chat/completions', {
      key: account.secret,
      body: JSON.parse(body()) as unknown,
    });
    expect(inProcess.status).toBe(200);
    expect(strip(await viaHttp.json())).toEqual(strip(await inProcess.json()));

    const streamed = await post({ body: body({ stream: true }) });
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const streamedInProcess = await server.t.call('/api/v1/chat/completions', {
      key: account.secret,
      body: JSON.parse(body({ stream: true })) as unknown,
    });
    const events = await readSse(streamed);
    expect(events.at(-1)).toBe('[DONE]');
    expect(strip(events)).toEqual(strip(await readSse(streamedInProcess)));
  });

  it('should leave the other methods on the path to the router (405 naming the allowed one)', async () => {
    const response = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'GET',
      headers: { authorization: `Bearer ${account.secret}` },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    await response.body?.cancel();
  });
});
