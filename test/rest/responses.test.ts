import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatAccount, startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { scaled } from '../helpers/time-scale.ts';

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: true,
};

describe(`REST /api/v1/responses with the openai client (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  const post = (body: unknown, key = account.secret) =>
    fetch(`${server.url}/api/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    server = await startChatServer();
    account = await chatAccount(server);
  }, scaled(60_000));
  afterAll(() => server.close());

  it('should answer responses.create with a message item, usage and output_text, charged as chat', async () => {
    const before = await account.balance();
    const response = await account.client.responses.create({
      model: 'lagoon-sim-chat',
      instructions: 'Answer briefly.',
      input: 'Tell me about tide pools',
    });
    expect(response.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(response.object).toBe('response');
    expect(response.status).toBe('completed');
    expect(response.model).toBe('lagoon-sim-chat');
    expect(response.output).toHaveLength(1);
    const [message] = response.output;
    expect(message).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(response.output_text.length).toBeGreaterThan(0);
    expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);
    expect(response.usage!.input_tokens).toBeGreaterThan(5);
    await eventually(async () => expect((await account.balance()).amount).toBeLessThan(before.amount));
    const entries = (await account.allEntries()).filter((entry) => entry.sku.startsWith('lagoon-sim-chat-llm-'));
    expect(entries.some((entry) => entry.units === response.usage!.output_tokens)).toBe(true);
  });

  it('should stream typed events through responses.stream and responses.create({stream: true})', async () => {
    const stream = account.client.responses.stream({ model: 'lagoon-sim-chat', input: 'Hello there' });
    const types: string[] = [];
    let deltas = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
    }
    const final = await stream.finalResponse();
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types).toContain('response.output_text.delta');
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(final.output_text).toBe(deltas);
    expect(final.usage!.output_tokens).toBeGreaterThan(0);

    const raw = await account.client.responses.create({ model: 'lagoon-sim-chat', input: 'Hi', stream: true });
    const sequence: number[] = [];
    let completed: { status?: string } | undefined;
    for await (const event of raw) {
      sequence.push(event.sequence_number);
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(completed?.status).toBe('completed');
  });

  it('should round-trip a function call: function_call item, then function_call_output answered in text', async () => {
    const first = await account.client.responses.create({
      model: 'lagoon-sim-chat',
      input: 'What is the get_weather in Lisbon?',
      tools: [weatherTool],
      store: false,
    });
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    if (call?.type !== 'function_call') throw new Error('no function call');
    expect(JSON.parse(call.arguments)).toHaveProperty('city');
    // Stateless: the caller sends the history back as items.
    const second = await account.client.responses.create({
      model: 'lagoon-sim-chat',
      tools: [weatherTool],
      input: [
        { role: 'user', content: 'What is the get_weather in Lisbon?' },
        call,
        { type: 'function_call_output', call_id: call.call_id, output: '{"temperature": 21}' },
      ],
    });
    expect(second.output[0]).toMatchObject({ type: 'message' });
    expect(second.output_text.length).toBeGreaterThan(0);
    // A stored-off response cannot be continued.
    const missing = await post({ model: 'lagoon-sim-chat', input: 'more', previous_response_id: first.id });
    expect(missing.status).toBe(404);
  });

  it('should stream a function call as output_item.added + function_call_arguments deltas', async () => {
    const stream = account.client.responses.stream({
      model: 'lagoon-sim-chat',
      input: 'call get_weather please',
      tools: [weatherTool],
      tool_choice: { type: 'function', name: 'get_weather' },
    });
    const types = new Set<string>();
    for await (const event of stream) types.add(event.type);
    const final = await stream.finalResponse();
    expect(types).toContain('response.function_call_arguments.delta');
    expect(types).toContain('response.function_call_arguments.done');
    const call = final.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ name: 'get_weather', status: 'completed' });
  });

  it('should continue a stored response with previous_response_id, for its own account only', async () => {
    const first = await account.client.responses.create({ model: 'lagoon-sim-chat', input: 'My name is Ada.' });
    const second = await account.client.responses.create({
      model: 'lagoon-sim-chat',
      input: 'What did I say?',
      previous_response_id: first.id,
    });
    expect(second.previous_response_id).toBe(first.id);
    // The history was sent: the prompt is longer than the same question alone.
    const alone = await account.client.responses.create({ model: 'lagoon-sim-chat', input: 'What did I say?' });
    expect(second.usage!.input_tokens).toBeGreaterThan(alone.usage!.input_tokens + first.usage!.output_tokens - 1);
    // Streaming continues it as well, and the streamed response is stored.
    const stream = account.client.responses.stream({
      model: 'lagoon-sim-chat',
      input: 'And then?',
      previous_response_id: second.id,
    });
    const streamed = await stream.finalResponse();
    const fetched = await account.client.responses.retrieve(streamed.id);
    expect(fetched.output_text).toBe(streamed.output_text);

    const other = await chatAccount(server);
    const foreign = await post({ model: 'lagoon-sim-chat', input: 'hi', previous_response_id: first.id }, other.secret);
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { code: string }).code).toBe('NOT_FOUND');
    await expect(other.client.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    for (const bad of ['resp_%00', 'a%00b', 'resp_nothex']) {
      const read = await fetch(`${server.url}/api/v1/responses/${bad}`, {
        headers: { authorization: `Bearer ${account.secret}` },
      });
      expect(read.status).toBe(404);
    }
    expect((await post({ model: 'lagoon-sim-chat', input: 'x', previous_response_id: 'a\u0000b' })).status).toBe(404);
    await account.client.responses.delete(first.id);
    await expect(account.client.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
  });

  it.each([
    ['no input', { model: 'lagoon-sim-chat' }],
    ['an empty input list', { model: 'lagoon-sim-chat', input: [] }],
    ['a bad item', { model: 'lagoon-sim-chat', input: [{ type: 'message', role: 'robot', content: 'x' }] }],
    ['an item_reference', { model: 'lagoon-sim-chat', input: [{ type: 'item_reference', id: 'msg_1' }] }],
    ['a nameless function tool', { model: 'lagoon-sim-chat', input: 'x', tools: [{ type: 'function' }] }],
    ['a bad temperature', { model: 'lagoon-sim-chat', input: 'x', temperature: 3 }],
    ['an unknown model', { model: 'no-such-model', input: 'x' }],
  ])('should answer 400 for %s', async (_what, body) => {
    const response = await post(body);
    expect(response.status).toBe(400);
    const error = (await response.json()) as { error: string; code: string };
    expect(typeof error.error).toBe('string');
    expect(['INVALID_REQUEST', 'INVALID_MODEL']).toContain(error.code);
  });

  it('should answer 402 without funds and 401 without a key', async () => {
    const broke = await chatAccount(server, '0');
    expect((await post({ model: 'lagoon-sim-chat', input: 'x' }, broke.secret)).status).toBe(402);
    expect((await post({ model: 'lagoon-sim-chat', input: 'x' }, '')).status).toBe(401);
  });

  it('should serve GraphQL createResponse, continuing a REST response', async () => {
    const first = await account.client.responses.create({ model: 'lagoon-sim-chat', input: 'Remember: blue.' });
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `mutation($input: JSONObject!) { createResponse(input: $input) { __typename
          ... on MutationCreateResponseSuccess { data { id model status outputText currency response } }
          ... on Error { message } } }`,
        variables: { input: { model: 'lagoon-sim-chat', input: 'Which colour?', previous_response_id: first.id } },
      }),
    });
    const body = (await response.json()) as {
      data: {
        createResponse: {
          data: { id: string; status: string; outputText: string; response: { previous_response_id: string } };
        };
      };
    };
    const result = body.data.createResponse.data;
    expect(result.id).toMatch(/^resp_/);
    expect(result.status).toBe('completed');
    expect(result.outputText.length).toBeGreaterThan(0);
    expect(result.response.previous_response_id).toBe(first.id);
  });
});
