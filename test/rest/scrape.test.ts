import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { writeOperatorConfig } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/* POST /augment/scrape: a page as Markdown, charged once per page read, nothing otherwise. The page server listens
 * on 127.0.0.2, which the operator config allows; 127.0.0.1 stands for the operator's private network. */

const ARTICLE =
  '<!doctype html><html><head><title>Tide Report</title><script>track()</script></head><body>' +
  '<nav><a href="/">Home</a></nav><main><h1>Tides this week</h1><p>High water on <b>Monday</b> at 06:12.</p>' +
  '<ul><li>Lisbon</li><li>Porto</li></ul><p>See <a href="https://tides.example/porto">Porto tides</a>.</p></main>' +
  '<footer>Harbour office</footer></body></html>';

async function listen(server: Server, host: string): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

describe(`POST /augment/scrape (${testDatabaseKind})`, () => {
  let t: TestApp;
  let pages: Server;
  let site: string;
  let config: Awaited<ReturnType<typeof writeOperatorConfig>>;
  let secret: string;
  let accountId: string;
  const usd = async () =>
    (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')?.amount ?? 0n;

  beforeAll(async () => {
    pages = createServer((request, response) => {
      if (request.url === '/article') response.writeHead(200, { 'content-type': 'text/html' }).end(ARTICLE);
      else if (request.url === '/photo') response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(9));
      else response.writeHead(404).end();
    });
    site = await listen(pages, '127.0.0.2');
    config = await writeOperatorConfig('chat:\n  webScraping: { allowNetworks: ["127.0.0.2"], timeoutMs: 5000 }');
    t = await createTestApp({ LAGOON_CONFIG: config.path });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { type: 'INFERENCE', credit: { USD: '1' } }));
  });
  afterAll(async () => {
    await t.close();
    pages.closeAllConnections();
    pages.close();
    await config.remove();
  });

  const scrape = (body: unknown, key: string | null = secret) =>
    t.call('/api/v1/augment/scrape', { method: 'POST', key, body });

  it('answers the page as Markdown and charges 0.01 USD once', async () => {
    const before = await usd();
    const response = await scrape({ url: `${site}/article` });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { url: string; content: string; format: string };
    expect(body.url).toBe(`${site}/article`);
    expect(body.format).toBe('markdown');
    expect(body.content).toContain('# Tides this week');
    expect(body.content).toContain('**Monday**');
    expect(body.content).toMatch(/^\* Lisbon$/m);
    expect(body.content).toContain('[Porto tides](https://tides.example/porto)');
    for (const left of ['track()', 'Harbour office', 'Home']) expect(body.content).not.toContain(left);
    expect(before - (await usd())).toBe(10_000_000n);
  });

  it('charges nothing for a page that cannot be read, and refuses bad URLs with 400', async () => {
    const before = await usd();
    const missing = await scrape({ url: `${site}/missing` });
    expect(missing.status).toBe(502);
    expect(await missing.json()).toMatchObject({ error: expect.stringContaining('HTTP 404') });
    expect((await scrape({ url: `${site}/photo` })).status).toBe(502);
    for (const body of [
      {},
      { url: 'not a url' },
      { url: 'ftp://example.com/file' },
      { url: 'https://x.com/someone/status/1' },
      { url: 'https://old.reddit.com/r/tides' },
      { url: 'http://127.0.0.1:9/admin' },
    ]) {
      const response = await scrape(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await response.json()).toMatchObject({ error: expect.any(String) });
    }
    expect(await usd()).toBe(before);
    expect((await scrape({ url: `${site}/article` }, null)).status).toBe(402);
  });

  it('is a GraphQL mutation too', async () => {
    const result = await t.graphql<{ scrape: { data: { content: string; charged: string } } }>(
      `mutation ($url: String!) { scrape(url: $url) { ... on MutationScrapeSuccess { data { content charged } } } }`,
      { url: `${site}/article` },
      secret,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data?.scrape.data.content).toContain('# Tides this week');
    expect(result.data?.scrape.data.charged).toBe('0.01');
  });
});
