import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatAccount, requestIdOf, startChatServer, tokenCostNano, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';

/* The zero-config upstream: OPENAI_COMPATIBLE_BASE_URL alone, and the `openai` client chats with its models. */

const UPSTREAM_KEY = 'sk-upstream-secret';
// Discovery's default prices (operator-config DiscoveryConfigSchema), USD per 1M tokens.
const DISCOVERED = { input: '0.5', output: '2' };

describe(`REST chat completions through OPENAI_COMPATIBLE_BASE_URL (${testDatabaseKind})`, () => {
  let upstream: OpenAIUpstream;
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ models: ['llama-local'], apiKey: UPSTREAM_KEY });
    server = await startChatServer({
      OPENAI_COMPATIBLE_BASE_URL: upstream.url,
      OPENAI_COMPATIBLE_API_KEY: UPSTREAM_KEY,
    });
    account = await chatAccount(server, '1');
  });
  afterAll(async () => {
    await server.close();
    await upstream.close();
  });

  it('should serve a discovered model, non-streaming and streaming, billed at the discovery prices', async () => {
    const before = await account.balance();
    const completion = await account.client.chat.completions.create({
      model: 'llama-local',
      messages: [{ role: 'user', content: 'hi' }],
    });
    const request = upstream.chatRequests().at(-1)!;
    expect(request.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(request.body.model).toBe('llama-local');
    expect(completion.model).toBe('llama-local');
    const usage = completion.usage!;
    expect((await account.entries(requestIdOf(completion.id))).map((e) => e.units)).toEqual([
      usage.prompt_tokens,
      usage.completion_tokens,
    ]);
    const mid = await account.balance();
    expect(before.amount - mid.amount).toBe(
      tokenCostNano(usage.prompt_tokens, DISCOVERED.input) + tokenCostNano(usage.completion_tokens, DISCOVERED.output),
    );

    const stream = await account.client.chat.completions.create({
      model: 'llama-local',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    let last: ChatCompletionChunk | undefined;
    let text = '';
    for await (const chunk of stream) {
      last = chunk;
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe(completion.choices[0]!.message.content);
    expect(last!.usage).toMatchObject({
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
    });
    expect(mid.amount - (await account.balance()).amount).toBe(before.amount - mid.amount);
  });
});
