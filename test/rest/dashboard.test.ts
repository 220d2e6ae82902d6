import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_DIR } from '../../build.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';

/**
 * The console's files at /dashboard (rest/dashboard.ts): types, caching, the precompressed file chosen by
 * Accept-Encoding, the Content-Security-Policy, client-side routes answered with the html, and refusals.
 * Raw `..` paths, which a Request URL would resolve first, are sent by test/browser/console.test.ts.
 */
describe('GET /dashboard', () => {
  let t: TestApp;
  let script: string;
  let style: string;

  beforeAll(async () => {
    const assets = readdirSync(join(CONSOLE_DIR, 'assets'));
    script = assets.find((name) => /^main-[A-Z0-9]+\.js$/.test(name))!;
    style = assets.find((name) => /^main-[A-Z0-9]+\.css$/.test(name))!;
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  const get = (path: string, acceptEncoding?: string) =>
    t.call(path, { key: null, headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {} });

  it('answers the html for /dashboard and every client-side route, never cached without asking', async () => {
    for (const path of ['/dashboard', '/dashboard/', '/dashboard/overview', '/dashboard/keys/123']) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      const html = await response.text();
      expect(html).toContain(`<script type="module" src="/dashboard/assets/${script}"></script>`);
      expect(html).toContain(`href="/dashboard/assets/${style}"`);
    }
  });

  it('sends a strict Content-Security-Policy: this server only, no inline script', async () => {
    const response = await get('/dashboard/');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await response.text()).not.toMatch(/<script>|<script [^>]*>[^<]/);
  });

  it('serves hashed assets for good, precompressed as the client accepts', async () => {
    const plain = readFileSync(join(CONSOLE_DIR, 'assets', script));
    const cases = [
      { accept: 'gzip, deflate, br', coding: 'br', decode: brotliDecompressSync },
      { accept: 'gzip', coding: 'gzip', decode: gunzipSync },
      { accept: 'br;q=0, gzip', coding: 'gzip', decode: gunzipSync },
      { accept: undefined, coding: null, decode: (body: Buffer) => body },
    ];
    for (const { accept, coding, decode } of cases) {
      const response = await get(`/dashboard/assets/${script}`, accept);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('vary')).toBe('accept-encoding');
      expect(response.headers.get('content-encoding'), accept).toBe(coding);
      // The in-process fetch hands the body over as sent: decode it as a browser would.
      expect(decode(Buffer.from(await response.arrayBuffer())).equals(plain), accept).toBe(true);
    }
    const css = await get(`/dashboard/assets/${style}`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('answers 404 for files the build did not make, and 405 for writes', async () => {
    for (const path of ['/dashboard/assets/main-NOPE.js', '/dashboard/assets/index.html', '/dashboard/assets/']) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
    const post = await t.call('/dashboard/', { method: 'POST', key: null, body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await post.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED' });
  });
});
