import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatAccount, readSse, requestIdOf, startChatServer, tokenCostNano, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';

/* POST /api/v1/chat/completions against the built-in simulator (the default catalog), through the `openai` client. */

// The default catalog's prices (src/operator-config/default-config.ts), USD per 1M tokens.
const SIM_CHAT = { input: '0.5', output: '2' };
const SIM_REASONER = { input: '1', output: '4' };

/** Extra (non-OpenAI) body fields, passed through the client's types. */
const extra = (fields: Record<string, unknown>) => fields as object;

describe(`REST chat completions on the simulator (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;

  beforeAll(async () => {
    server = await startChatServer();
    account = await chatAccount(server, '5');
  });
  afterAll(async () => server.close());

  it('should answer a non-streaming completion whose usage equals its usage entry, charged exactly price × tokens', async () => {
    const before = await account.balance();
    const { data: completion, response } = await account.client.chat.completions
      .create({ model: 'lagoon-sim-chat', messages: [{ role: 'user', content: 'Tell me about tide pools.' }], seed: 7 })
      .withResponse();
    expect(completion).toMatchObject({ object: 'chat.completion', model: 'lagoon-sim-chat', prompt_logprobs: null });
    expect(completion.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(completion.choices).toHaveLength(1);
    const [choice] = completion.choices;
    expect(choice).toMatchObject({
      index: 0,
      finish_reason: 'stop',
      message: { role: 'assistant', reasoning_content: null, tool_calls: [] },
    });
    expect(choice!.message.content).toEqual(expect.any(String));
    const usage = completion.usage!;
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    expect((completion as unknown as { service_parameters: Record<string, unknown> }).service_parameters).toEqual({
      strip_thinking_response: false,
      disable_thinking: false,
      enable_e2ee: false,
      enable_web_search: 'off',
      enable_web_scraping: false,
      enable_web_citations: false,
      include_search_results_in_stream: false,
      return_search_results_as_documents: false,
      include_venice_system_prompt: true,
      enable_x_search: false,
      web_search_citations: [],
    });

    const entries = await account.entries(requestIdOf(completion.id));
    expect(entries.map((e) => [e.sku, e.units])).toEqual([
      ['lagoon-sim-chat-llm-input-mtoken', usage.prompt_tokens],
      ['lagoon-sim-chat-llm-output-mtoken', usage.completion_tokens],
    ]);
    for (const entry of entries)
      expect(entry.inferenceDetails).toMatchObject({
        promptTokens: usage.prompt_tokens,
        completionTokens: usage.completion_tokens,
      });
    const expected =
      tokenCostNano(usage.prompt_tokens, SIM_CHAT.input) + tokenCostNano(usage.completion_tokens, SIM_CHAT.output);
    const after = await account.balance();
    expect(before.amount - after.amount).toBe(expected);
    expect(after.reserved).toBe(0n);
    expect(response.headers.get('x-balance-usd')).toBe(String(Number(after.amount) / 1e9));
  });

  it('should echo service_parameters under venice_parameters too, with a completion id of its own', async () => {
    type Echo = {
      id: string;
      service_parameters: Record<string, unknown>;
      venice_parameters?: Record<string, unknown>;
    };
    const ask = () =>
      account.client.chat.completions
        .create(
          {
            model: 'lagoon-sim-chat',
            messages: [{ role: 'user', content: 'Echo?' }],
            max_completion_tokens: 5,
            ...extra({ venice_parameters: { strip_thinking_response: true } }),
          },
          { headers: { 'x-request-id': 'feedfacefeedfacefeedfacefeedface' } },
        )
        .withResponse();
    const first = await ask();
    const body = first.data as unknown as Echo;
    expect(body.service_parameters).toMatchObject({ strip_thinking_response: true, web_search_citations: [] });
    expect(body.venice_parameters).toEqual(body.service_parameters);
    // The caller's X-Request-ID stays the request id; the completion id is Lagoon's, new for every completion.
    expect(first.response.headers.get('x-request-id')).toBe('feedfacefeedfacefeedfacefeedface');
    expect(body.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(body.id).not.toContain('feedface');
    const second = await ask();
    expect(second.response.headers.get('x-request-id')).toBe('feedfacefeedfacefeedfacefeedface');
    expect(second.data.id).not.toBe(body.id);
    // The stream's chunks share one id of their own too.
    const stream = await account.client.chat.completions.create(
      {
        model: 'lagoon-sim-chat',
        messages: [{ role: 'user', content: 'Echo?' }],
        max_completion_tokens: 5,
        stream: true,
      },
      { headers: { 'x-request-id': 'feedfacefeedfacefeedfacefeedface' } },
    );
    const ids = new Set<string>();
    for await (const chunk of stream) ids.add(chunk.id);
    expect([...ids]).toHaveLength(1);
    expect([...ids][0]).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect([...ids][0]).not.toContain('feedface');
  });

  it('should stream chunks, then a usage chunk with choices: [] and [DONE]; the streamed usage equals the usage entry', async () => {
    const before = await account.balance();
    const stream = await account.client.chat.completions.create({
      model: 'lagoon-sim-reasoner',
      messages: [{ role: 'user', content: 'Why is the sea salty?' }],
      stream: true,
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    const usage = last.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    const body = chunks.slice(0, -1);
    expect(
      body.every((c) => c.object === 'chat.completion.chunk' && c.model === 'lagoon-sim-reasoner' && c.id === last.id),
    ).toBe(true);
    const deltas = body.flatMap((c) =>
      c.choices.map((choice) => choice.delta as { content?: string; reasoning_content?: string }),
    );
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).not.toBe('');
    expect(deltas.map((d) => d.content ?? '').join('')).not.toBe('');
    expect(body.at(-1)!.choices[0]!.finish_reason).toBe('stop');

    const entries = await account.entries(requestIdOf(last.id));
    expect(entries.map((e) => e.units)).toEqual([usage.prompt_tokens, usage.completion_tokens]);
    const after = await account.balance();
    expect(before.amount - after.amount).toBe(
      tokenCostNano(usage.prompt_tokens, SIM_REASONER.input) +
        tokenCostNano(usage.completion_tokens, SIM_REASONER.output),
    );
    expect(after.reserved).toBe(0n);
  });

  it('should stream uncompressed SSE: the role first, a usage chunk whatever include_usage says, then [DONE]', async () => {
    const response = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${account.secret}`,
        'content-type': 'application/json',
        'accept-encoding': 'gzip, br',
      },
      body: JSON.stringify({
        model: 'default',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stream_options: { include_usage: false },
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('content-encoding')).toBeNull();
    const events = await readSse(response);
    expect(events.at(-1)).toBe('[DONE]');
    const usageChunk = events.at(-2) as { choices: unknown[]; usage: { total_tokens: number } };
    expect(usageChunk.choices).toEqual([]); // sent whatever include_usage says
    expect(usageChunk.usage.total_tokens).toBeGreaterThan(0);
    expect((events[0] as { choices: { delta: { role: string } }[] }).choices[0]!.delta.role).toBe('assistant');
  });

  it('should call a forced tool and pass tool results back in the history', async () => {
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ];
    const first = await account.client.chat.completions.create({
      model: 'lagoon-sim-chat',
      messages: [{ role: 'user', content: 'Weather in Lisbon?' }],
      tools,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    const args = JSON.parse((call as { function: { arguments: string } }).function.arguments) as { city: unknown };
    expect(typeof args.city).toBe('string');

    const second = await account.client.chat.completions.create({
      model: 'lagoon-sim-chat',
      messages: [
        { role: 'user', content: 'Weather in Lisbon?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '{"temperature": 21}' },
      ],
      tools,
    });
    expect(second.choices[0]!.message.content).toEqual(expect.any(String));
  });

  it('should return structured output that satisfies a json_schema', async () => {
    const completion = await account.client.chat.completions.create({
      model: 'lagoon-sim-chat',
      messages: [{ role: 'user', content: 'Describe a fish.' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'fish',
          strict: true,
          schema: {
            type: 'object',
            properties: { name: { type: 'string' }, legs: { type: 'integer' } },
            required: ['name', 'legs'],
            additionalProperties: false,
          },
        },
      },
    });
    const parsed = JSON.parse(completion.choices[0]!.message.content!) as Record<string, unknown>;
    expect(Object.keys(parsed).sort()).toEqual(['legs', 'name']);
    expect(typeof parsed.name).toBe('string');
    expect(Number.isInteger(parsed.legs)).toBe(true);
  });

  it('should resolve traits, compatibility names and suffixes, the suffix overriding the body', async () => {
    const ask = (model: string, body: Record<string, unknown> = {}) =>
      account.client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'hello' }],
        max_completion_tokens: 16,
        ...extra(body),
      });
    expect((await ask('default')).model).toBe('lagoon-sim-chat');
    expect((await ask('fastest')).model).toBe('lagoon-sim-chat');
    expect((await ask('default_reasoning')).model).toBe('lagoon-sim-reasoner');
    expect((await ask('gpt-4o')).model).toBe('lagoon-sim-chat');
    expect((await ask('o3-mini')).model).toBe('lagoon-sim-reasoner');

    const suffixed = await ask('o3-mini:strip_thinking_response=true&enable_web_citations=true&unknown_key=1', {
      venice_parameters: { strip_thinking_response: false },
    });
    expect(suffixed.model).toBe('lagoon-sim-reasoner');
    expect((suffixed.choices[0]!.message as { reasoning_content?: unknown }).reasoning_content).toBeNull();
    expect(suffixed as unknown).toMatchObject({
      service_parameters: { strip_thinking_response: true, enable_web_citations: true },
    });

    const plain = await ask('o3-mini', { service_parameters: { disable_thinking: false } });
    expect((plain.choices[0]!.message as { reasoning_content?: unknown }).reasoning_content).toEqual(
      expect.any(String),
    );
    const slug = await ask('default:character_slug=pirate-storyteller');
    expect(slug as unknown).toMatchObject({
      model: 'lagoon-sim-chat',
      service_parameters: { character_slug: 'pirate-storyteller' },
    });
  });

  it('should compress non-streaming responses for Accept-Encoding br and gzip', async () => {
    const body = JSON.stringify({ model: 'default', messages: [{ role: 'user', content: 'compress me' }] });
    for (const [accept, coding, decode] of [
      ['gzip, br', 'br', brotliDecompressSync],
      ['gzip', 'gzip', gunzipSync],
    ] as const) {
      // node:http keeps the bytes as sent (fetch would decode them).
      const { request } = await import('node:http');
      const raw = await new Promise<{ headers: Record<string, unknown>; bytes: Buffer }>((resolve, reject) => {
        const req = request(`${server.url}/api/v1/chat/completions`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${account.secret}`,
            'content-type': 'application/json',
            'accept-encoding': accept,
          },
        });
        req.on('response', (res) => {
          const parts: Buffer[] = [];
          res.on('data', (part: Buffer) => parts.push(part));
          res.on('end', () => resolve({ headers: res.headers, bytes: Buffer.concat(parts) }));
        });
        req.on('error', reject);
        req.end(body);
      });
      expect(raw.headers['content-encoding']).toBe(coding);
      const json = JSON.parse(decode(raw.bytes).toString('utf8')) as { object: string };
      expect(json.object).toBe('chat.completion');
    }
  });

  it('should answer n choices and charge them all', async () => {
    const completion = await account.client.chat.completions.create({
      model: 'lagoon-sim-chat',
      messages: [{ role: 'user', content: 'Three ideas' }],
      n: 3,
      max_completion_tokens: 20,
    });
    expect(completion.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    const entries = await account.entries(requestIdOf(completion.id));
    expect(entries.find((e) => e.sku.endsWith('output-mtoken'))!.units).toBe(completion.usage!.completion_tokens);
    expect(completion.usage!.completion_tokens).toBeGreaterThan(20); // more than one choice's worth
  });

  it('should reject images for a model without vision, naming the message', async () => {
    const error = await account.client.chat.completions
      .create({
        model: 'lagoon-sim-reasoner',
        messages: [
          { role: 'user', content: 'plain' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
        ],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain('messages.1.content');
  });

  it.each([
    ['an unknown model', { model: 'no-such-model' }, 'INVALID_MODEL'],
    ['an image model', { model: 'lagoon-sim-image' }, 'INVALID_MODEL'],
    [
      'an unknown character',
      { model: 'default', service_parameters: { character_slug: 'nobody-here' } },
      'CHARACTER_NOT_FOUND',
    ],
  ])('should refuse %s with its code and charge nothing', async (_what, body, code) => {
    const before = await account.balance();
    const response = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
    });
    expect(response.status).toBe(code === 'CHARACTER_NOT_FOUND' ? 404 : 400);
    expect(((await response.json()) as { code: string }).code).toBe(code);
    expect(await account.balance()).toEqual(before);
  });

  it('should refuse without credentials', async () => {
    const response = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'default', messages: [{ role: 'user', content: 'hi' }] }),
    });
    // The x402 discovery answer: a wallet may sign in and pay (docs/api.md#wallet-callers-x402).
    expect(response.status).toBe(402);
  });
});
