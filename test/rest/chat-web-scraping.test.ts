import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countTextTokens } from '../../src/tokenizer.ts';
import {
  chatAccount,
  OPERATOR_SYSTEM_PROMPT,
  requestIdOf,
  startChatServer,
  tokenCostNano,
  UPSTREAM_PRICES,
  upstreamOperatorConfig,
  writeOperatorConfig,
  type ChatServer,
} from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { makePdf } from '../helpers/documents.ts';
import { DEFAULT_USAGE, startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';

/* enable_web_scraping over HTTP with the `openai` client: the pages linked in the last user message reach the
 * model's prompt and the citations; private addresses are never fetched. The page server listens on 127.0.0.2,
 * which the operator config allows; a "secret" server on 127.0.0.1 stands for the operator's private network. */

const extra = (fields: Record<string, unknown>) => fields as object;
const PAGE_TOKENS = 300;
const ARTICLE =
  '<!doctype html><html><head><title>Lisbon Tide Report</title><script>trackVisitor()</script></head><body>' +
  '<nav><a href="/">Home</a></nav><main><h1>Tides this week</h1><p>High water on Monday at 06:12, 3.4 metres.</p></main>' +
  '<footer>Harbour office</footer></body></html>';

type Sources = {
  enable_web_scraping: boolean;
  web_search_citations: { index: number; url: string; title: string; content: string; date: string }[];
};
const sourcesOf = (completion: unknown) => (completion as { service_parameters: Sources }).service_parameters;

async function listen(server: Server, host: string): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

describe(`REST chat completions with web scraping (${testDatabaseKind})`, () => {
  let upstream: OpenAIUpstream;
  let server: ChatServer;
  let config: Awaited<ReturnType<typeof writeOperatorConfig>>;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  let pages: Server;
  let secret: Server;
  let site: string;
  let secretSite: string;
  const pageHits: string[] = [];
  const secretHits: string[] = [];
  const system = () =>
    (upstream.chatRequests().at(-1)!.body as { messages: { role: string; content: string }[] }).messages[0]!;

  beforeAll(async () => {
    const pdf = await makePdf([['Annual report of the harbour', 'Ships served: 1,204']]);
    pages = createServer((request, response) => {
      pageHits.push(request.url ?? '');
      if (request.url === '/article')
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE);
      else if (request.url === '/long')
        response
          .writeHead(200, { 'content-type': 'text/plain' })
          .end('Every tide table line repeats here. '.repeat(2_000));
      else if (request.url === '/report.pdf') response.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf);
      else if (request.url === '/photo')
        response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(100));
      else if (request.url === '/to-secret') response.writeHead(302, { location: `${secretSite}/admin` }).end();
      else response.writeHead(404).end();
    });
    secret = createServer((request, response) => {
      secretHits.push(request.url ?? '');
      response.end('<p>internal credentials</p>');
    });
    [site, secretSite] = await Promise.all([listen(pages, '127.0.0.2'), listen(secret, '127.0.0.1')]);
    upstream = await startOpenAIUpstream();
    const yaml = `${upstreamOperatorConfig(upstream.url)}\n  webScraping: { allowNetworks: ["127.0.0.2"], maxPageTokens: ${PAGE_TOKENS}, maxPages: 3 }`;
    config = await writeOperatorConfig(yaml);
    server = await startChatServer({ LAGOON_CONFIG: config.path });
    account = await chatAccount(server, '10');
  });
  afterAll(async () => {
    await server.close();
    for (const each of [pages, secret]) {
      each.closeAllConnections();
      each.close();
    }
    await Promise.all([upstream.close(), config.remove()]);
  });
  beforeEach(() => {
    upstream.setBehavior({ kind: 'reply' });
    pageHits.length = 0;
    secretHits.length = 0;
  });

  it('should read a linked page into the prompt, cite it, and charge only the tokens', async () => {
    const before = await account.balance();
    const completion = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: `When is high water? See ${site}/article.` }],
      ...extra({ service_parameters: { enable_web_scraping: true, enable_web_citations: true } }),
    });
    expect(pageHits).toEqual(['/article']);
    const prompt = system().content;
    expect(prompt.startsWith(OPERATOR_SYSTEM_PROMPT)).toBe(true);
    expect(prompt).toContain(`[1] Lisbon Tide Report (${site}/article)`);
    expect(prompt).toContain('High water on Monday at 06:12, 3.4 metres.');
    expect(prompt).toContain('square brackets');
    for (const left of ['trackVisitor', 'Harbour office', 'Home']) expect(prompt).not.toContain(left);

    const sources = sourcesOf(completion);
    expect(sources.enable_web_scraping).toBe(true);
    expect(sources.web_search_citations).toEqual([
      {
        index: 1,
        title: 'Lisbon Tide Report',
        url: `${site}/article`,
        content: 'Tides this week High water on Monday at 06:12, 3.4 metres.',
        date: '',
      },
    ]);

    const entries = await account.entries(requestIdOf(completion.id));
    expect(entries.map((e) => [e.sku, e.units])).toEqual([
      ['up-chat-llm-input-mtoken', DEFAULT_USAGE.prompt_tokens],
      ['up-chat-llm-output-mtoken', DEFAULT_USAGE.completion_tokens],
    ]);
    const cost =
      tokenCostNano(DEFAULT_USAGE.prompt_tokens, UPSTREAM_PRICES['up-chat'].input) +
      tokenCostNano(DEFAULT_USAGE.completion_tokens, UPSTREAM_PRICES['up-chat'].output);
    const after = await account.balance();
    expect(before.amount - after.amount).toBe(cost);
  });

  it('should fetch nothing unless asked, and echo the setting', async () => {
    const completion = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: `Look at ${site}/article` }],
    });
    expect(pageHits).toEqual([]);
    expect(system().content).toBe(OPERATOR_SYSTEM_PROMPT);
    expect(sourcesOf(completion)).toMatchObject({ enable_web_scraping: false, web_search_citations: [] });
  });

  it('should refuse an account that cannot pay with 402 before fetching any page', async () => {
    const broke = await chatAccount(server, '0');
    const refused = await broke.client.chat.completions
      .create({ model: 'up-chat:enable_web_scraping=true', messages: [{ role: 'user', content: `${site}/article` }] })
      .catch((error: unknown) => error as { status: number });
    expect(refused).toMatchObject({ status: 402 });
    expect(pageHits).toEqual([]);
  });

  it('should never reach a private address, named directly, through DNS or behind a redirect, and answer without it', async () => {
    const port = new URL(secretSite).port;
    const completion = await account.client.chat.completions.create({
      model: 'up-chat:enable_web_scraping=true',
      messages: [{ role: 'user', content: `${secretSite}/a http://localhost:${port}/b ${site}/to-secret` }],
    });
    expect(secretHits).toEqual([]);
    expect(pageHits).toEqual(['/to-secret']);
    expect(completion.choices[0]!.message.content).toBeTruthy();
    expect(sourcesOf(completion)).toMatchObject({ enable_web_scraping: true, web_search_citations: [] });
    expect(system().content).toBe(OPERATOR_SYSTEM_PROMPT);
  });

  it('should read PDFs, cut long pages to the token budget, skip what is not text, and keep to maxPages', async () => {
    await account.client.chat.completions.create({
      model: 'up-chat:enable_web_scraping=true',
      messages: [{ role: 'user', content: `${site}/photo ${site}/long ${site}/report.pdf ${site}/article` }],
    });
    expect(pageHits.sort()).toEqual(['/long', '/photo', '/report.pdf']);
    const prompt = system().content;
    expect(prompt).toContain(`[1] ${site}/long (${site}/long) (shortened)`);
    expect(prompt).toContain(`[2] ${site}/report.pdf (${site}/report.pdf)`);
    expect(prompt).toContain('Ships served: 1,204');
    const longText = prompt.slice(
      prompt.indexOf('(shortened)\n') + '(shortened)\n'.length,
      prompt.indexOf('\n[end of 1]'),
    );
    expect(countTextTokens(longText)).toBeGreaterThan(PAGE_TOKENS - 5);
    expect(countTextTokens(longText)).toBeLessThanOrEqual(PAGE_TOKENS + 1);
  });

  it('should stream the page citations first and return them as documents when asked', async () => {
    const stream = await account.client.chat.completions.create({
      model:
        'up-chat:enable_web_scraping=true&include_search_results_in_stream=true&return_search_results_as_documents=true',
      messages: [{ role: 'user', content: `summarise ${site}/article` }],
      stream: true,
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const first = chunks[0] as ChatCompletionChunk & { service_parameters?: Sources; venice_parameters?: Sources };
    expect(first.choices).toEqual([]);
    expect(first.service_parameters?.web_search_citations).toMatchObject([{ index: 1, url: `${site}/article` }]);
    // Echoed under the alias too, for clients written for the original service.
    expect(first.venice_parameters).toEqual(first.service_parameters);
    const documents = chunks
      .flatMap((c) => c.choices.flatMap((choice) => choice.delta.tool_calls ?? []))
      .find((call) => call.function?.name === 'web_search_documents');
    expect(JSON.parse(documents!.function!.arguments!)).toMatchObject({
      documents: [{ index: 1, title: 'Lisbon Tide Report' }],
    });
  });

  it('should refuse an operator config with an invalid allowed network', async () => {
    const bad = await writeOperatorConfig(
      `${upstreamOperatorConfig(upstream.url)}\n  webScraping: { allowNetworks: ["10.0.0.0/40"] }`,
    );
    try {
      await expect(startChatServer({ LAGOON_CONFIG: bad.path })).rejects.toThrow(/allowNetworks/);
    } finally {
      await bad.remove();
    }
  });
});
