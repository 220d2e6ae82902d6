import { beforeAll, describe, expect, it } from 'vitest';
import { ChatUpstreamError } from '../../src/providers/upstream-errors.ts';
import { collect, contentOf, failure, reasoningOf, request, useAdapterUpstream } from '../helpers/openai-adapter.ts';
import { DEFAULT_REPLY_CONTENT, type OpenAIUpstream } from '../helpers/openai-upstream.ts';

const harness = useAdapterUpstream();
const adapter = harness.adapter;
let upstream: OpenAIUpstream;
beforeAll(() => {
  upstream = harness.upstream;
});

describe('OpenAICompatibleEngine, non-streaming', () => {
  it('posts the body with the operator key and headers, and normalises the answer', async () => {
    const completion = await adapter().complete(request({ temperature: 0.2 }), { requestId: 'req-123' });
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: DEFAULT_REPLY_CONTENT, reasoning_content: null, tool_calls: [] },
        finish_reason: 'stop',
        stop_reason: null,
        logprobs: null,
      },
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, cached_tokens: 0 });
    const [sent] = upstream.chatRequests();
    expect(sent?.headers.authorization).toBe('Bearer sk-upstream');
    expect(sent?.headers['x-operator']).toBe('acme');
    expect(sent?.headers['x-request-id']).toBe('req-123');
    expect(sent?.body).toEqual({
      model: 'up-model',
      messages: [{ role: 'user', content: 'Hi there' }],
      temperature: 0.2,
      stream: false,
    });
  });

  it('reuses the connection (keep-alive pool)', async () => {
    const chat = adapter();
    for (let i = 0; i < 6; i += 1) await chat.complete(request(), {});
    const ports = new Set(upstream.chatRequests().map((r) => r.remotePort));
    // Sequential calls share one or two pooled sockets (undici may open a second while the first settles).
    expect(ports.size).toBeLessThanOrEqual(2);
  });

  it('passes tools, json_schema and logprobs through and normalises tool calls, cached tokens and reasoning', async () => {
    const logprobs = { content: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [] }] };
    upstream.setBehavior({
      kind: 'reply',
      content: null,
      reasoning: 'The user wants the weather.',
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 64 },
      logprobs,
      stopReason: 'END',
    });
    const tools = [
      {
        type: 'function',
        function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      },
    ];
    const responseFormat = {
      type: 'json_schema',
      json_schema: { name: 'x', schema: { type: 'object' }, strict: true },
    };
    const completion = await adapter().complete(
      request({ tools, tool_choice: 'auto', response_format: responseFormat, logprobs: true, top_logprobs: 2 }),
      {},
    );
    expect(upstream.chatRequests()[0]?.body).toMatchObject({
      tools,
      tool_choice: 'auto',
      response_format: responseFormat,
      logprobs: true,
      top_logprobs: 2,
    });
    const [choice] = completion.choices;
    expect(choice?.message).toEqual({
      role: 'assistant',
      content: null,
      reasoning_content: 'The user wants the weather.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
    });
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.stop_reason).toBe('END');
    expect(choice?.logprobs).toEqual(logprobs);
    expect(completion.usage).toEqual({
      prompt_tokens: 100,
      completion_tokens: 20,
      total_tokens: 120,
      cached_tokens: 64,
    });
  });

  it('reads `reasoning` as reasoning_content, and reports no usage as null', async () => {
    upstream.setBehavior({ kind: 'reply', reasoning: 'thinking…', reasoningField: 'reasoning', usage: null });
    const completion = await adapter().complete(request(), {});
    expect(completion.choices[0]?.message.reasoning_content).toBe('thinking…');
    expect(completion.usage).toBeNull();
  });

  it('splits inline <think> blocks when asked (per call or per provider)', async () => {
    upstream.setBehavior({ kind: 'reply', content: '<think>\nTwo plus two is four.\n</think>\n\nThe answer is 4.' });
    const split = await adapter().complete(request(), { splitThinkTags: true });
    expect(split.choices[0]?.message).toMatchObject({
      content: 'The answer is 4.',
      reasoning_content: 'Two plus two is four.',
    });
    const byProvider = await adapter({ options: { splitThinkTags: true } }).complete(request(), {});
    expect(byProvider.choices[0]?.message.content).toBe('The answer is 4.');
    const kept = await adapter().complete(request(), {});
    expect(kept.choices[0]?.message.content).toContain('<think>');
  });

  it('lists the upstream models', async () => {
    expect(await adapter().listModels()).toEqual(['meta-llama/Llama-3.3-70B-Instruct', 'qwen2.5:7b']);
  });
});

describe('OpenAICompatibleEngine, streaming', () => {
  it('asks for usage, forwards chunks as they come and ends with the usage chunk', async () => {
    upstream.setBehavior({ kind: 'reply', usage: { prompt_tokens: 5, completion_tokens: 6, cached_tokens: 2 } });
    const chunks = await collect(
      await adapter().stream(request({ stream_options: { continuous_usage_stats: false } }), {}),
    );
    expect(upstream.chatRequests()[0]?.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: false },
    });
    expect(contentOf(chunks)).toBe(DEFAULT_REPLY_CONTENT);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11, cached_tokens: 2 },
    });
  });

  it('streams tool call fragments, reasoning and logprobs', async () => {
    const logprobs = { content: [{ token: 'Sure', logprob: -0.2, bytes: [83], top_logprobs: [] }] };
    upstream.setBehavior({
      kind: 'reply',
      content: 'Sure ',
      reasoning: 'Plan it.',
      logprobs,
      toolCalls: [{ id: 'call_9', name: 'lookup', arguments: '{"q":"tides"}' }],
    });
    const chunks = await collect(await adapter().stream(request(), {}));
    expect(reasoningOf(chunks)).toBe('Plan it.');
    const toolDeltas = chunks.flatMap((c) => c.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
    expect(toolDeltas[0]).toEqual({
      index: 0,
      id: 'call_9',
      type: 'function',
      function: { name: 'lookup', arguments: '' },
    });
    expect(toolDeltas.map((d) => d.function?.arguments ?? '').join('')).toBe('{"q":"tides"}');
    expect(chunks.find((c) => c.choices[0]?.delta.content === 'Sure ')?.choices[0]?.logprobs).toEqual(logprobs);
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'tool_calls')).toBe(true);
  });

  it('splits <think> tags that arrive cut across chunk boundaries', async () => {
    upstream.setBehavior({
      kind: 'reply',
      chunks: ['<thi', 'nk>\nI am ', 'thinking</th', 'ink>\n\nThe answer', ' is 4. a < b', ' and <', 'b>'],
    });
    const chunks = await collect(await adapter().stream(request(), { splitThinkTags: true }));
    expect(reasoningOf(chunks)).toBe('I am thinking');
    expect(contentOf(chunks)).toBe('The answer is 4. a < b and <b>');
    expect(chunks.every((c) => !(c.choices[0]?.delta.content ?? '').includes('think'))).toBe(true);
  });

  it('reads a character whose UTF-8 bytes arrive in two reads', async () => {
    const event = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const bytes = Buffer.from(
      event({ role: 'assistant', content: 'Olá 🌊 maré' }, null) + event({}, 'stop') + 'data: [DONE]\n\n',
    );
    const cut = bytes.indexOf(Buffer.from('🌊')) + 2; // inside the 4-byte wave
    upstream.setBehavior({
      kind: 'custom',
      handle: (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(bytes.subarray(0, cut));
        setTimeout(() => response.end(bytes.subarray(cut)), 30);
      },
    });
    expect(contentOf(await collect(await adapter().stream(request(), {})))).toBe('Olá 🌊 maré');
  });

  it('cancel() closes the upstream connection', async () => {
    upstream.setBehavior({ kind: 'reply', holdAfterChunks: 1 });
    const stream = await adapter().stream(request(), {});
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    stream.cancel();
    const aborted = await upstream.waitForClientAbort();
    expect(aborted.path).toBe('/v1/chat/completions');
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });

  it('leaving the loop early closes the upstream connection', async () => {
    upstream.setBehavior({ kind: 'reply', holdAfterChunks: 2 });
    const stream = await adapter().stream(request(), {});
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) break;
    await upstream.waitForClientAbort();
  });

  it("the caller's abort closes the upstream connection and fails as cancelled", async () => {
    upstream.setBehavior({ kind: 'reply', holdAfterChunks: 1 });
    const controller = new AbortController();
    const stream = await adapter().stream(request(), { signal: controller.signal });
    const reading = collect(stream);
    controller.abort();
    const error = await failure(reading);
    expect(error).toBeInstanceOf(ChatUpstreamError);
    expect((error as ChatUpstreamError).cancelled).toBe(true);
    await upstream.waitForClientAbort();
  });
});
