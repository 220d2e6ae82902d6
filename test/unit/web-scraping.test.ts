import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy, parseNetwork } from '../../src/augment/scrape/address-policy.ts';
import { PageFetchError, PageFetcher } from '../../src/augment/scrape/page-fetch.ts';
import { htmlPageText, limitTokens } from '../../src/augment/scrape/page-text.ts';
import { linkedUrls } from '../../src/augment/scrape/page-urls.ts';
import { countTextTokens } from '../../src/tokenizer.ts';

/* Chat web scraping's parts: which URLs a message names, which addresses may be reached, and a fetcher that keeps
 * to them through DNS answers and redirects (two loopback servers: 127.0.0.2 allowed, 127.0.0.1 not). */

describe('linkedUrls', () => {
  it('should find http(s) URLs in prose, without the punctuation around them, once each, at most max', () => {
    const text =
      'Compare https://a.example/x?y=1, (see http://b.example/wiki/Foo_(bar)) and https://a.example/x?y=1#top. Also ftp://c.example/ and <https://d.example/page>! https://e.example/';
    expect(linkedUrls(text, 10)).toEqual([
      'https://a.example/x?y=1',
      'http://b.example/wiki/Foo_(bar)',
      'https://d.example/page',
      'https://e.example/',
    ]);
    expect(linkedUrls(text, 2)).toEqual(['https://a.example/x?y=1', 'http://b.example/wiki/Foo_(bar)']);
    expect(linkedUrls('no links here, only example.org', 3)).toEqual([]);
  });
});

describe('AddressPolicy', () => {
  it('should allow public unicast addresses only', () => {
    const policy = new AddressPolicy();
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(policy.allows(address), address).toBe(true);
    const refused = [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.0.10',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
    ];
    refused.push(
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'fec0::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::a00:1',
      'not-an-ip',
    );
    for (const address of refused) expect(policy.allows(address), address).toBe(false);
  });

  it('should allow the networks the operator lists, and nothing beside them', () => {
    const policy = new AddressPolicy(['10.20.0.0/16', '127.0.0.2', 'fd00::/8']);
    expect(['10.20.3.4', '127.0.0.2', '::ffff:127.0.0.2', 'fd00::5'].map((a) => policy.allows(a))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['10.21.0.1', '127.0.0.1', 'fc00::1'].map((a) => policy.allows(a))).toEqual([false, false, false]);
    expect(() => parseNetwork('10.0.0.0/33')).toThrow('not an IP address or CIDR network');
  });
});

describe('page text', () => {
  it('should read an HTML page as its title and readable text, without navigation, scripts or link targets', () => {
    const html = Buffer.from(
      '<!doctype html><html><head><title>Tides &amp; Currents</title><style>p{color:red}</style><script>var secret = 1;</script></head>' +
        '<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav><main><h1>Lisbon tides</h1><p>High water at <a href="https://x.example">06:12</a>.</p>' +
        '<table><tr><th>Day</th><th>Height</th></tr><tr><td>Mon</td><td>3.4 m</td></tr></table><img src="x.png" alt="chart"></main><footer>© Harbour office</footer></body></html>',
    );
    const page = htmlPageText(html, undefined);
    expect(page.title).toBe('Tides & Currents');
    expect(page.text).toContain('Lisbon tides');
    expect(page.text).toContain('High water at 06:12.');
    expect(page.text).toMatch(/Mon\s+3\.4 m/);
    for (const left of ['Home', 'secret', 'color:red', 'Harbour office', 'https://x.example', 'chart'])
      expect(page.text).not.toContain(left);
  });

  it('should leave the title out of a page without a body element', () => {
    expect(htmlPageText(Buffer.from('<title>Only a title</title><p>Hi &amp; bye</p>'), undefined)).toEqual({
      title: 'Only a title',
      text: 'Hi & bye',
    });
  });

  it('should decode the charset the page declares', () => {
    const latin1 = Buffer.from(
      '<html><head><meta charset="iso-8859-1"></head><body><p>Caf\xe9 cr\xe8me</p></body></html>',
      'latin1',
    );
    expect(htmlPageText(latin1, undefined).text).toBe('Café crème');
    expect(htmlPageText(Buffer.from('<p>Caf\xe9</p>', 'latin1'), 'windows-1252').text).toBe('Café');
  });

  it('should cut text to a token budget and say so', () => {
    const long = 'The tide rises and falls twice a day. '.repeat(500);
    const cut = limitTokens(long, 100);
    expect(cut.truncated).toBe(true);
    expect(cut.tokens).toBe(100);
    expect(countTextTokens(cut.text)).toBeLessThanOrEqual(101);
    expect(long.startsWith(cut.text.slice(0, 50))).toBe(true);
    expect(limitTokens('short text', 100)).toEqual({
      text: 'short text',
      tokens: countTextTokens('short text'),
      truncated: false,
    });
  });
});

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

async function serve(host: string, handler: Handler): Promise<{ server: Server; origin: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((request, response) => {
    hits.push(request.url ?? '');
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, origin: `http://${host}:${(server.address() as AddressInfo).port}`, hits };
}

describe('PageFetcher', () => {
  let allowed: Awaited<ReturnType<typeof serve>>;
  let secret: Awaited<ReturnType<typeof serve>>;
  let fetcher: PageFetcher;
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error as PageFetchError,
    );

  beforeAll(async () => {
    secret = await serve('127.0.0.1', (_request, response) => response.end('internal secret'));
    allowed = await serve('127.0.0.2', (request, response) => {
      const url = request.url ?? '/';
      if (url === '/page')
        response
          .writeHead(200, {
            'content-type': 'text/html; charset=utf-8',
            'last-modified': 'Tue, 03 Nov 2026 10:00:00 GMT',
          })
          .end('<p>hello</p>');
      else if (url === '/to-secret') response.writeHead(302, { location: `${secret.origin}/admin` }).end();
      else if (url === '/to-page') response.writeHead(301, { location: '/page' }).end();
      else if (url === '/loop') response.writeHead(302, { location: '/loop' }).end();
      else if (url === '/big') response.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(50_000));
      else if (url === '/slow') setTimeout(() => response.end('late'), 2_000);
      else response.writeHead(404).end('missing');
    });
    fetcher = new PageFetcher(new AddressPolicy(['127.0.0.2']), { timeoutMs: 500, maxBytes: 20_000, maxRedirects: 3 });
  });
  afterAll(async () => {
    await fetcher.close();
    for (const { server } of [allowed, secret]) {
      server.closeAllConnections();
      server.close();
    }
  });

  it('should fetch an allowed page, following relative redirects, with its media type and date', async () => {
    const page = await fetcher.fetch(`${allowed.origin}/to-page`);
    expect(page).toMatchObject({
      url: `${allowed.origin}/page`,
      mediaType: 'text/html',
      charset: 'utf-8',
      truncated: false,
      lastModified: '2026-11-03T10:00:00.000Z',
    });
    expect(Buffer.from(page.bytes).toString()).toBe('<p>hello</p>');
  });

  it('should refuse non-public addresses, by literal, by DNS name and behind a redirect, without ever connecting', async () => {
    const port = new URL(secret.origin).port;
    const refusals = await Promise.all(
      [
        `${secret.origin}/a`,
        `http://localhost:${port}/b`,
        `http://[::ffff:127.0.0.1]:${port}/c`,
        `http://0x7f000001:${port}/d`,
        `${allowed.origin}/to-secret`,
      ].map((url) => failure(fetcher.fetch(url))),
    );
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(PageFetchError);
      expect(refusal?.message).toMatch(/is not a public address$/);
    }
    expect(refusals[1]?.message).toMatch(/^localhost resolves to /);
    expect(secret.hits).toEqual([]);
  });

  it('should stop at the redirect limit, a non-2xx status and the time limit, and cut long bodies', async () => {
    expect((await failure(fetcher.fetch(`${allowed.origin}/loop`)))?.message).toBe('more than 3 redirects');
    expect((await failure(fetcher.fetch(`${allowed.origin}/nothing`)))?.message).toBe('HTTP 404');
    expect((await failure(fetcher.fetch(`${allowed.origin}/slow`)))?.message).toBe('no answer within 500 ms');
    const big = await fetcher.fetch(`${allowed.origin}/big`);
    expect(big.truncated).toBe(true);
    expect(big.bytes.byteLength).toBe(20_000);
  });

  it('should pass the caller abort through as it is', async () => {
    const controller = new AbortController();
    const pending = failure(fetcher.fetch(`${allowed.origin}/slow`, controller.signal));
    controller.abort(new Error('client left'));
    expect((await pending)?.message).toBe('client left');
  });
});
