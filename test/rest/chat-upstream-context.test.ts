import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_SYSTEM_PROMPT, requestIdOf, tokenCostNano, UPSTREAM_PRICES } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { useUpstreamChat, type UpstreamChat } from '../helpers/upstream-chat.ts';

/* Chat completions against a fake OpenAI-compatible upstream declared in the operator config: what the upstream
 * receives, what the client gets, and what is charged. */

const extra = (fields: Record<string, unknown>) => fields as object;
const PRICE = UPSTREAM_PRICES;
const WEB_SEARCH_NANO = 10_000_000n;
const IMAGE = (n: number) => ({ type: 'image_url' as const, image_url: { url: `https://img.example.org/${n}.png` } });

describe(`REST chat completions against an OpenAI-compatible upstream: images, web search, logprobs (${testDatabaseKind})`, () => {
  const harness = useUpstreamChat();
  let upstream: UpstreamChat['upstream'];
  let searxng: UpstreamChat['searxng'];
  let account: UpstreamChat['account'];
  const lastBody = harness.lastBody;
  beforeAll(() => {
    ({ upstream, searxng, account } = harness);
  });

  it('should keep only the last message with images for a single-image model, the newest maxImages for a multi-image one', async () => {
    await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'first' }, IMAGE(1)] },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [IMAGE(2)] },
        { role: 'user', content: [{ type: 'text', text: 'compare' }, IMAGE(3), IMAGE(4)] },
      ],
    });
    expect(
      lastBody()
        .messages.slice(1)
        .map((m) => m.content),
    ).toEqual([[{ type: 'text', text: 'first' }], 'ok', '', [{ type: 'text', text: 'compare' }, IMAGE(3), IMAGE(4)]]);

    await account.client.chat.completions.create({
      model: 'up-multi',
      messages: [
        { role: 'user', content: [IMAGE(1), { type: 'text', text: 'one' }] },
        { role: 'user', content: [IMAGE(2)] },
        { role: 'user', content: [IMAGE(3), { type: 'text', text: 'three' }] },
      ],
    });
    expect(
      lastBody()
        .messages.slice(1)
        .map((m) => m.content),
    ).toEqual([[{ type: 'text', text: 'one' }], [IMAGE(2)], [IMAGE(3), { type: 'text', text: 'three' }]]);

    const refused = await account.client.chat.completions
      .create({ model: 'up-basic', messages: [{ role: 'user', content: [IMAGE(1)] }] })
      .catch((e: unknown) => e);
    expect((refused as Error).message).toContain('messages.0.content');
  });

  it('should add web search results to the prompt, cite them, and charge the search as a line of the chat charge', async () => {
    searxng.requests.length = 0;
    const before = await account.balance();
    const completion = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: 'latest tide tables for Lisbon' }],
      ...extra({ service_parameters: { enable_web_search: 'on', enable_web_citations: true } }),
    });
    expect(searxng.requests).toHaveLength(1);
    expect(searxng.requests[0]!.params.get('q')).toBe('latest tide tables for Lisbon');
    const system = lastBody().messages[0]!.content as string;
    expect(system).toContain('[1] brave result 1');
    expect(system).toContain('https://brave.example.org/articles/1');
    expect(system).toContain('square brackets');
    const citations = (
      completion as unknown as {
        service_parameters: {
          web_search_citations: { index: number; url: string; title: string }[];
          enable_web_search: string;
        };
      }
    ).service_parameters;
    expect(citations.enable_web_search).toBe('on');
    expect(citations.web_search_citations).toHaveLength(10);
    expect(citations.web_search_citations[0]).toMatchObject({
      index: 1,
      url: 'https://brave.example.org/articles/1',
      title: 'brave result 1',
    });

    const entries = await account.entries(requestIdOf(completion.id));
    expect(entries.map((e) => [e.sku, e.units])).toEqual([
      ['augment-web-search', 1],
      ['up-chat-llm-input-mtoken', 12],
      ['up-chat-llm-output-mtoken', 7],
    ]);
    expect(before.amount - (await account.balance()).amount).toBe(
      WEB_SEARCH_NANO + tokenCostNano(12, PRICE['up-chat'].input) + tokenCostNano(7, PRICE['up-chat'].output),
    );
  });

  it('should stream the citations first with include_search_results_in_stream, and return results as documents when asked', async () => {
    const stream = await account.client.chat.completions.create({
      model:
        'up-chat:enable_web_search=on&include_search_results_in_stream=true&return_search_results_as_documents=true',
      messages: [{ role: 'user', content: 'tides' }],
      stream: true,
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const first = chunks[0] as ChatCompletionChunk & { service_parameters?: { web_search_citations: unknown[] } };
    expect(first.choices).toEqual([]);
    expect(first.service_parameters?.web_search_citations).toHaveLength(10);
    const documents = chunks
      .flatMap((c) => c.choices.flatMap((choice) => choice.delta.tool_calls ?? []))
      .find((call) => call.function?.name === 'web_search_documents');
    expect(JSON.parse(documents!.function!.arguments!)).toMatchObject({
      documents: expect.arrayContaining([expect.objectContaining({ index: 1 })]),
    });

    // auto searches only for models that support web search.
    searxng.requests.length = 0;
    await account.client.chat.completions.create({
      model: 'up-basic:enable_web_search=auto',
      messages: [{ role: 'user', content: 'tides' }],
    });
    expect(searxng.requests).toHaveLength(0);
    await account.client.chat.completions.create({
      model: 'up-chat:enable_web_search=auto',
      messages: [{ role: 'user', content: 'tides' }],
    });
    expect(searxng.requests).toHaveLength(1);
  });

  it('should answer without the search (and not charge it) when the search upstream fails', async () => {
    searxng.queue((_request, response) => response.writeHead(500).end());
    const before = await account.balance();
    const completion = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: 'tides' }],
      ...extra({ service_parameters: { enable_web_search: 'on' } }),
    });
    expect(
      (completion as unknown as { service_parameters: { web_search_citations: unknown[] } }).service_parameters
        .web_search_citations,
    ).toEqual([]);
    expect(lastBody().messages[0]!.content).toBe(OPERATOR_SYSTEM_PROMPT);
    expect(before.amount - (await account.balance()).amount).toBe(
      tokenCostNano(12, PRICE['up-chat'].input) + tokenCostNano(7, PRICE['up-chat'].output),
    );
  });

  it('should pass logprobs through for a model that supports them, and drop them for one that does not', async () => {
    upstream.setBehavior({ kind: 'reply', logprobs: { content: [{ token: 'Hi', logprob: -0.1, top_logprobs: [] }] } });
    const withLogprobs = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: 'hi' }],
      logprobs: true,
      top_logprobs: 2,
    });
    expect(lastBody()).toMatchObject({ logprobs: true, top_logprobs: 2 });
    expect(withLogprobs.choices[0]!.logprobs).toMatchObject({ content: [{ token: 'Hi' }] });
    const without = await account.client.chat.completions.create({
      model: 'up-basic',
      messages: [{ role: 'user', content: 'hi' }],
      logprobs: true,
    });
    expect(lastBody().logprobs).toBeUndefined();
    expect(without.choices[0]!.logprobs).toBeNull();
  });
});
