import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyLimits, DEFAULT_MAX_MEDIA_BODY_BYTES, inlineMediaBody } from '../../src/body-limits.ts';
import { loadConfig } from '../../src/config.ts';
import { ffmpegPath } from '../../src/providers/speech/ffmpeg.ts';
import { startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { streamingMultipart } from '../helpers/uploads.ts';

/*
 * Body limits follow the route (src/body-limits.ts), over HTTP: a clip sent inline as a data URL to /video/queue
 * (the original CLI's `video upscale clip.mp4`) is far past the 1 MiB JSON limit and is taken; a body past its
 * route's limit is answered 413 while the client is still sending, whether it declared no length or a false one,
 * and the server goes on serving.
 */

const run = promisify(execFile);
const MiB = 1_048_576;
const UPSCALER = 'lagoon-sim-video-upscaler';

/** An H.264 MP4 of about 1.4 MB (noise does not compress), as the CLI would read from disk. */
async function makeClip(dir: string): Promise<Buffer> {
  const file = join(dir, 'clip.mp4');
  await run(ffmpegPath(), [
    ...[
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=320x240:rate=10,noise=alls=60:allf=t',
    ],
    ...['-t', '5', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-preset', 'ultrafast'],
    ...['-b:v', '2600k', '-maxrate', '2600k', '-bufsize', '500k', file],
  ]);
  return readFile(file);
}

const upscaleJob = (clip: Buffer) => ({
  model: UPSCALER,
  prompt: 'sharper',
  duration: '5s',
  video_url: `data:video/mp4;base64,${clip.toString('base64')}`,
});

interface Streamed {
  status: number;
  body: string;
  /** Whether the client had finished its body when the answer came (it should not have). */
  endedAtAnswer: boolean;
  /** Bytes written in all, when the server stopped taking them or the body was done. */
  written: number;
}

/**
 * POSTs up to `total` bytes of a JSON string without Content-Length (chunked), a chunk at a time as a slow client
 * would, until the answer comes; then sends the rest as fast as it can, to see where the server stops taking it.
 */
function streamChunked(url: string, headers: Record<string, string>, total: number): Promise<Streamed> {
  return new Promise((resolve, reject) => {
    let written = 0;
    let ended = false;
    let answer: { status: number; body: string; endedAtAnswer: boolean } | undefined;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const request = httpRequest(url, { method: 'POST', headers }, (response) => {
      const endedAtAnswer = ended;
      let body = '';
      response.on('data', (data: Buffer) => (body += data.toString()));
      response.on('end', () => {
        answer = { status: response.statusCode ?? 0, body, endedAtAnswer };
        flood();
      });
    });
    const finish = () => {
      if (answer) resolve({ ...answer, written });
    };
    // The server ending a refused body it no longer reads: expected once the answer is in.
    request.on('error', (error) => (answer ? finish() : reject(error)));
    request.on('close', finish);
    const slowly = () => {
      if (answer || request.destroyed) return;
      if (written >= total) {
        ended = true;
        request.end('"}');
        return;
      }
      written += chunk.length;
      request.write(chunk, () => setTimeout(slowly, 1));
    };
    const flood = () => {
      while (!request.destroyed && written < total) {
        written += chunk.length;
        if (!request.write(chunk)) {
          request.once('drain', flood);
          return;
        }
      }
      if (!request.destroyed) request.end('"}');
    };
    request.write('{"model":"x","video_url":"');
    slowly();
  });
}

/** Raw bytes on a socket: what the server answers (all of it, up to its close). */
function rawExchange(port: number, head: string, body: Buffer | string, keepOpen = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      // One whole answer is enough when the socket is kept open on purpose.
      if (keepOpen && /\r\n\r\n[\s\S]*\}$/.test(answer)) socket.end();
    });
    socket.on('error', () => resolve(answer));
    socket.on('close', () => resolve(answer));
    socket.on('connect', () => {
      socket.write(head);
      socket.write(body);
      if (!keepOpen) socket.end();
    });
    setTimeout(() => reject(new Error(`no answer; got ${answer.slice(0, 200)}`)), 30_000).unref();
  });
}

describe(`Body limits by route, over HTTP (${testDatabaseKind})`, () => {
  let server: ChatServer;
  /** The media limit set low (LAGOON_MAX_MEDIA_BODY_BYTES) so the refusals stream a few MB, not 70. */
  let small: ChatServer;
  let secret: string;
  let smallSecret: string;
  let dir: string;
  let clip: Buffer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lagoon-body-limits-'));
    [server, small, clip] = await Promise.all([
      startChatServer(),
      startChatServer({ LAGOON_MAX_MEDIA_BODY_BYTES: String(3 * MiB) }),
      makeClip(dir),
    ]);
    ({ secret } = await createAccountWithKey(server.t.app.services, { credit: { USD: '10' }, type: 'INFERENCE' }));
    ({ secret: smallSecret } = await createAccountWithKey(small.t.app.services, {
      credit: { USD: '10' },
      type: 'INFERENCE',
    }));
  }, 120_000);
  afterAll(async () => {
    await Promise.all([server?.close(), small?.close()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const post = (base: string, key: string, path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/api/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body,
    });

  it('should take a 1.4 MB clip sent as a data URL to /video/queue, past the 1 MiB JSON limit', async () => {
    const body = JSON.stringify(upscaleJob(clip));
    expect(clip.byteLength).toBeGreaterThan(1.2 * MiB);
    expect(body.length).toBeGreaterThan(MiB);
    const queued = await post(server.url, secret, '/video/queue', body);
    expect(queued.status).toBe(200);
    const handle = (await queued.json()) as Record<string, unknown>;
    expect(handle).toMatchObject({ model: UPSCALER, queue_id: expect.any(String) });
    // The JSON routes without media keep their 1 MiB.
    const other = await post(server.url, secret, '/embeddings', JSON.stringify({ input: 'x'.repeat(1.5 * MiB) }));
    expect(other.status).toBe(413);
    expect(await other.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', error: expect.stringContaining('1048576') });
  }, 60_000);

  it('should size the media limit for a 50 MB reference video as base64, and follow the environment', () => {
    expect(DEFAULT_MAX_MEDIA_BODY_BYTES).toBe(inlineMediaBody(50 * MiB));
    expect(DEFAULT_MAX_MEDIA_BODY_BYTES).toBeGreaterThan((50 * MiB * 4) / 3);
    expect(bodyLimits(loadConfig({}).http).videoJob).toBe(DEFAULT_MAX_MEDIA_BODY_BYTES);
    expect(bodyLimits(loadConfig({ LAGOON_MAX_MEDIA_BODY_BYTES: '5000000' }).http).videoJob).toBe(5_000_000);
    expect(() => loadConfig({ LAGOON_MAX_MEDIA_BODY_BYTES: '0' })).toThrow(/LAGOON_MAX_MEDIA_BODY_BYTES/);
  });

  it('should answer 413 while a chunked body past the limit is still streaming, and keep serving', async () => {
    const headers = { authorization: `Bearer ${smallSecret}`, 'content-type': 'application/json' };
    const total = 64 * MiB;
    const streamed = await streamChunked(`${small.url}/api/v1/video/queue`, headers, total);
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body)).toEqual({
      error: `Request body exceeds the limit of ${3 * MiB} bytes.`,
      code: 'PAYLOAD_TOO_LARGE',
    });
    // The refusal came while the client was sending; what it sent after was dropped, up to a bound, then the
    // connection closed: the server never took the whole body.
    expect(streamed.endedAtAnswer).toBe(false);
    expect(streamed.written).toBeLessThan(total);

    // Still serving: the clip fits the 3 MiB limit, and the health check answers.
    const queued = await post(small.url, smallSecret, '/video/queue', JSON.stringify(upscaleJob(clip)));
    expect(queued.status).toBe(200);
    expect((await fetch(`${small.url}/healthz`)).status).toBe(200);
  }, 60_000);

  it('should refuse a declared length past the limit at once, though the body never comes', async () => {
    const port = Number(new URL(small.url).port);
    const head =
      'POST /api/v1/video/queue HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      `Authorization: Bearer ${smallSecret}\r\nContent-Length: ${200 * MiB}\r\n\r\n`;
    // Ten bytes of a 200 MB promise, the socket left open: the answer does not wait for the rest.
    const answer = await rawExchange(port, head, '{"model":"', true);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    const length = Number(/content-length: (\d+)/i.exec(answer)?.[1]);
    const body = answer.slice(answer.indexOf('\r\n\r\n') + 4).slice(0, length);
    expect(JSON.parse(body)).toEqual({
      error: `Request body exceeds the limit of ${3 * MiB} bytes.`,
      code: 'PAYLOAD_TOO_LARGE',
    });
  }, 60_000);

  it('should read no more than a declared length that is short of the body sent', async () => {
    const port = Number(new URL(small.url).port);
    const sent = Buffer.from(
      JSON.stringify({ model: UPSCALER, video_url: `data:video/mp4;base64,${'A'.repeat(5 * MiB)}` }),
    );
    const head =
      'POST /api/v1/video/queue HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      `Authorization: Bearer ${smallSecret}\r\nContent-Length: 100\r\nConnection: close\r\n\r\n`;
    const answer = await rawExchange(port, head, sent);
    // The first 100 bytes are the body (not JSON on their own: 400); the rest is never taken as part of it.
    // Node's parser takes the first 100 bytes as the body and the rest as a malformed next request: a 400, the
    // connection closed; the route never sees more than the declared length.
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect((await fetch(`${small.url}/healthz`)).status).toBe(200);
  }, 60_000);

  it('should let GraphQL take an upload as large as the REST route for it (25 MiB of audio)', async () => {
    const query = 'mutation ($file: File!) { transcribeAudio(file: $file) { __typename ... on Error { code } } }';
    const upload = streamingMultipart(25 * MiB, '0', {
      operations: JSON.stringify({ query, variables: { file: null } }),
      map: JSON.stringify({ 0: ['variables.file'] }),
    });
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': upload.contentType },
      body: upload.body,
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    const body = (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
    // Past the body limit it would be a 413 PAYLOAD_TOO_LARGE; here the file reaches transcription (not audio: 4xx).
    expect(body.errors?.[0]?.extensions?.code).not.toBe('PAYLOAD_TOO_LARGE');
    expect(response.status).not.toBe(413);
  }, 60_000);

  it('should hold GraphQL streams (chat completion streams) to the chat body limit', async () => {
    const response = await fetch(`${server.url}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${secret}` },
      body: JSON.stringify({ query: 'subscription { __typename }', variables: { padding: 'x'.repeat(21 * MiB) } }),
    });
    expect(response.status).toBe(413);
  }, 60_000);

  it('should keep the plain JSON limit for a GraphQL body without credentials', async () => {
    const padding = 'x'.repeat(2 * MiB);
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }', variables: { padding } }),
    });
    expect(response.status).toBe(413);
    const keyed = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify({ query: '{ __typename }', variables: { padding } }),
    });
    expect(keyed.status).toBe(200);
    expect(await keyed.json()).toEqual({ data: { __typename: 'Query' } });
  }, 60_000);
});
