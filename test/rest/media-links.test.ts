import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import { ADMIN_KEY, BASE } from '../helpers/app.ts';
import { createTestDatabase, testDatabaseKind, type TestDatabase } from '../helpers/db.ts';
import { listenLocally } from '../helpers/local-server.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * Signed media URLs over HTTP, as a browser or a GraphQL client fetches them: no API key; a bad, tampered, expired
 * or foreign token is a 404 in the error body; Range and HEAD; and two app instances on one database (two API
 * processes behind a load balancer) open each other's URLs.
 */

const HOUR = 3_600_000;
/** The media files of every app here (two apps on one database share it, as processes of one machine do). */
const MEDIA_DIR = mkdtempSync(join(tmpdir(), 'lagoon-media-links-'));
const OTHER_SECRET = 'another-media-secret-of-32-characters-at-least';

interface ErrorBody {
  error: string;
  code: string;
}

async function startApp(database: TestDatabase, env: Record<string, string> = {}, keepDatabase = false) {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
    LAGOON_MEDIA_DIR: MEDIA_DIR,
    ...env,
  });
  const handle = keepDatabase ? { ...database, close: async () => undefined } : database;
  return createApp(config, { database: handle, logger: createLogger('silent') });
}

/** A GET (or other method) on the app's fetch entry, with no API key. */
const fetchFrom = (app: App, path: string, init: { method?: string; headers?: Record<string, string> } = {}) =>
  app.fetch(new Request(`${BASE}${path}`, { method: init.method ?? 'GET', headers: init.headers ?? {} }));

const pathOf = (url: string) => new URL(url, BASE).pathname;

describe(`GET /media/<token> (${testDatabaseKind})`, () => {
  let database: TestDatabase;
  /** Second process: its own services, secret cache and pipeline, on the same database. */
  let second: TestDatabase;
  let appA: App;
  let appB: App;
  let foreign: App;
  let accountId: string;
  const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7) % 256));

  beforeAll(async () => {
    database = await createTestDatabase();
    appA = await startApp(database, {}, true);
    second = database.url
      ? Object.assign(await openDatabase({ url: database.url, poolSize: 4 }), {
          url: database.url,
          drop: async () => {},
        })
      : { ...database, close: async () => undefined };
    appB = await startApp(second, {}, !database.url);
    foreign = await startApp(database, { LAGOON_MEDIA_SECRET: OTHER_SECRET }, true);
    accountId = (await createAccountWithKey(appA.services)).accountId;
  });

  afterAll(async () => {
    await Promise.all([appA?.close(), appB?.close(), foreign?.close()]);
    if (database.url) await second?.close();
    await database?.drop();
  });

  const publish = (media: { bytes?: Buffer; contentType?: string; ttlMs?: number } = {}) =>
    appA.services.media.links.publish(
      accountId,
      { bytes: media.bytes ?? bytes, contentType: media.contentType ?? 'image/png', ttlMs: media.ttlMs },
      BASE,
    );

  it('serves the bytes without an API key, with type, length and a private cache lifetime', async () => {
    const link = await publish();
    expect(link.url).toBe(`${BASE}/media/${link.token}`);
    const response = await fetchFrom(appA, pathOf(link.url));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(response.headers.get('content-length')).toBe('5000');
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const maxAge = Number(/^private, max-age=(\d+)$/.exec(response.headers.get('cache-control') ?? '')?.[1]);
    expect(maxAge).toBeGreaterThan(3000);
    expect(maxAge).toBeLessThanOrEqual(3600);
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);

    const aliased = await fetchFrom(appA, `/api/v1/media/${link.token}`);
    expect(aliased.status).toBe(200);
    expect(Buffer.from(await aliased.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('answers 404 MEDIA_NOT_FOUND for tampered, truncated, unknown and malformed tokens', async () => {
    const link = await publish();
    const [payload = '', signature = ''] = link.token.split('.');
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const unknown = await appA.services.media.links.sign('00000000-0000-4000-8000-000000000000', link.expiresAt);
    for (const token of [
      `${flip(payload, 2)}.${signature}`,
      `${payload}.${flip(signature, 10)}`,
      link.token.slice(0, -2),
      unknown,
      'nope',
      '..%00',
    ]) {
      for (const prefix of ['/media/', '/api/v1/media/']) {
        const response = await fetchFrom(appA, `${prefix}${token}`);
        expect(response.status, `${prefix}${token}`).toBe(404);
        const body = (await response.json()) as ErrorBody;
        expect(body.code).toBe('MEDIA_NOT_FOUND');
        expect(typeof body.error).toBe('string');
      }
    }
  });

  it('answers 404 once the URL or the object has expired, and once the object is deleted', async () => {
    const { store, links } = appA.services.media;
    const live = await store.put({ accountId, contentType: 'image/png', bytes, ttlMs: HOUR });
    const expiredUrl = await links.sign(live.id, new Date(Date.now() - 1000));
    expect((await fetchFrom(appA, `/media/${expiredUrl}`)).status).toBe(404);

    const past = new Date(Date.now() - 2 * HOUR);
    const old = await store.put({ accountId, contentType: 'image/png', bytes, ttlMs: HOUR }, past);
    const forOld = await links.sign(old.id, new Date(Date.now() + HOUR));
    const response = await fetchFrom(appA, `/media/${forOld}`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as ErrorBody).code).toBe('MEDIA_NOT_FOUND');

    const link = await publish();
    expect((await fetchFrom(appA, pathOf(link.url))).status).toBe(200);
    await store.delete(link.media.id);
    expect((await fetchFrom(appA, pathOf(link.url))).status).toBe(404);
  });

  it('refuses a URL signed under another secret, both ways', async () => {
    const link = await publish();
    const response = await fetchFrom(foreign, pathOf(link.url));
    expect(response.status).toBe(404);
    expect(((await response.json()) as ErrorBody).code).toBe('MEDIA_NOT_FOUND');
    const theirs = await foreign.services.media.links.publish(accountId, { bytes, contentType: 'image/png' });
    expect(theirs.url).toBe(`/media/${theirs.token}`);
    expect((await fetchFrom(foreign, theirs.url)).status).toBe(200);
    expect((await fetchFrom(appA, theirs.url)).status).toBe(404);
  });

  it('serves byte ranges: 206 with Content-Range, 416 past the end, the whole object for several ranges', async () => {
    const link = await publish({ contentType: 'audio/mpeg' });
    const path = pathOf(link.url);
    const ranged = async (range: string, extra: Record<string, string> = {}) => {
      const response = await fetchFrom(appA, path, { headers: { range, ...extra } });
      return { response, body: Buffer.from(await response.arrayBuffer()) };
    };

    let { response, body } = await ranged('bytes=0-9');
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe('bytes 0-9/5000');
    expect(response.headers.get('content-length')).toBe('10');
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    expect(body.equals(bytes.subarray(0, 10))).toBe(true);

    ({ response, body } = await ranged('bytes=4990-'));
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe('bytes 4990-4999/5000');
    expect(body.equals(bytes.subarray(4990))).toBe(true);

    ({ response, body } = await ranged('bytes=-100'));
    expect(response.headers.get('content-range')).toBe('bytes 4900-4999/5000');
    expect(body.equals(bytes.subarray(4900))).toBe(true);

    ({ response, body } = await ranged('bytes=4000-99999'));
    expect(response.headers.get('content-range')).toBe('bytes 4000-4999/5000');
    expect(body.byteLength).toBe(1000);

    ({ response } = await ranged('bytes=5000-'));
    expect(response.status).toBe(416);
    expect(response.headers.get('content-range')).toBe('bytes */5000');

    ({ response, body } = await ranged('bytes=0-1, 5-6'));
    expect(response.status).toBe(200);
    expect(body.equals(bytes)).toBe(true);

    ({ response, body } = await ranged('bytes=0-9', { 'if-range': '"some-other-version"' }));
    expect(response.status).toBe(200);
    expect(body.byteLength).toBe(5000);
    ({ response } = await ranged('bytes=0-9', { 'if-range': `"${link.media.id}"` }));
    expect(response.status).toBe(206);
  });

  it('serves an empty object, and refuses any range of it or a zero-length suffix', async () => {
    const link = await publish({ bytes: Buffer.alloc(0), contentType: 'application/octet-stream' });
    const whole = await fetchFrom(appA, pathOf(link.url));
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-length')).toBe('0');
    expect((await whole.arrayBuffer()).byteLength).toBe(0);
    const ranged = await fetchFrom(appA, pathOf(link.url), { headers: { range: 'bytes=0-' } });
    expect(ranged.status).toBe(416);
    expect(ranged.headers.get('content-range')).toBe('bytes */0');

    const other = await publish();
    const zeroSuffix = await fetchFrom(appA, pathOf(other.url), { headers: { range: 'bytes=-0' } });
    expect(zeroSuffix.status).toBe(416);
    const garbage = await fetchFrom(appA, pathOf(other.url), { headers: { range: 'items=0-5' } });
    expect(garbage.status).toBe(200);
    expect((await garbage.arrayBuffer()).byteLength).toBe(5000);
  });

  it('answers HEAD with the head only', async () => {
    const link = await publish();
    const head = await fetchFrom(appA, pathOf(link.url), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('5000');
    expect(head.headers.get('content-type')).toBe('image/png');
    expect((await head.arrayBuffer()).byteLength).toBe(0);

    const partial = await fetchFrom(appA, pathOf(link.url), { method: 'HEAD', headers: { range: 'bytes=100-199' } });
    expect(partial.status).toBe(206);
    expect(partial.headers.get('content-length')).toBe('100');

    const missing = await fetchFrom(appA, '/media/nothing', { method: 'HEAD' });
    expect(missing.status).toBe(404);
    expect((await fetchFrom(appA, pathOf(link.url), { method: 'POST' })).status).toBe(405);
  });

  it('two app instances on one database open each other’s URLs (one generated secret)', async () => {
    const fromA = await publish({ contentType: 'image/webp' });
    const fromB = await appB.services.media.links.publish(accountId, {
      bytes: Buffer.from('b'),
      contentType: 'text/plain',
    });
    const onB = await fetchFrom(appB, pathOf(fromA.url));
    expect(onB.status).toBe(200);
    expect(Buffer.from(await onB.arrayBuffer()).equals(bytes)).toBe(true);
    const onA = await fetchFrom(appA, pathOf(fromB.url));
    expect(onA.status).toBe(200);
    expect(await onA.text()).toBe('b');
  });

  it('streams a large object over a real connection, whole and by range', async () => {
    const large = Buffer.alloc(2_600_000);
    for (let i = 0; i < large.byteLength; i += 1) large[i] = (i * 31 + (i >> 11)) % 256;
    const link = await publish({ bytes: large, contentType: 'video/mp4' });
    const server = await listenLocally(createServer(appA.nodeListener));
    try {
      const whole = await fetch(`${server.url}${pathOf(link.url)}`);
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-length')).toBe(String(large.byteLength));
      expect(Buffer.from(await whole.arrayBuffer()).equals(large)).toBe(true);

      const part = await fetch(`${server.url}${pathOf(link.url)}`, { headers: { range: 'bytes=1000000-2200000' } });
      expect(part.status).toBe(206);
      expect(Buffer.from(await part.arrayBuffer()).equals(large.subarray(1_000_000, 2_200_001))).toBe(true);

      const head = await fetch(`${server.url}${pathOf(link.url)}`, { method: 'HEAD' });
      expect(head.headers.get('content-length')).toBe(String(large.byteLength));
    } finally {
      await server.close();
    }
  });
});

afterAll(() => rmSync(MEDIA_DIR, { recursive: true, force: true }));
