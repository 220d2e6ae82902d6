import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatAccount, startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';

/* Every field of POST /chat/completions with a bad value → 400 naming it, and nothing charged (the input bounds). */

interface ErrorBody {
  error: string;
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}

const user = [{ role: 'user', content: 'hi' }];
const base = { model: 'lagoon-sim-chat', messages: user };

// [body fields merged over a valid request, the field path the 400 must name]
const BAD_FIELDS: [Record<string, unknown>, string][] = [
  [{ model: undefined }, 'model'],
  [{ model: '' }, 'model'],
  [{ model: 42 }, 'model'],
  [{ model: 'default:strip_thinking_response=maybe' }, 'model'],
  [{ model: 'default:enable_web_search=always' }, 'model'],
  [{ model: 'default:character_slug=%E0%A4%A' }, 'model'],
  [{ messages: undefined }, 'messages'],
  [{ messages: [] }, 'messages'],
  [{ messages: 'hello' }, 'messages'],
  [{ messages: [{ role: 'robot', content: 'hi' }] }, 'messages.0.role'],
  [{ messages: [{ role: 'user', content: 42 }] }, 'messages.0.content'],
  [{ messages: [{ role: 'user', content: [{ type: 'audio', data: 'x' }] }] }, 'messages.0.content'],
  [{ messages: [{ role: 'user', content: [] }] }, 'messages.0.content'],
  [
    { messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }] },
    'messages.0.content',
  ],
  [{ messages: [...user, { role: 'tool', content: 'result' }] }, 'messages.1.tool_call_id'],
  [{ messages: [...user, { role: 'assistant' }] }, 'messages.1.content'],
  [
    {
      messages: [
        ...user,
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f' } }] },
      ],
    },
    'messages.1.tool_calls.0.function.arguments',
  ],
  [{ frequency_penalty: 2.5 }, 'frequency_penalty'],
  [{ frequency_penalty: -2.01 }, 'frequency_penalty'],
  [{ presence_penalty: 3 }, 'presence_penalty'],
  [{ presence_penalty: '1' }, 'presence_penalty'],
  [{ repetition_penalty: -0.5 }, 'repetition_penalty'],
  [{ temperature: -0.1 }, 'temperature'],
  [{ temperature: 2.01 }, 'temperature'],
  [{ max_temp: 2.5 }, 'max_temp'],
  [{ min_temp: -1 }, 'min_temp'],
  [{ top_p: 1.5 }, 'top_p'],
  [{ min_p: -0.1 }, 'min_p'],
  [{ min_p: 1.1 }, 'min_p'],
  [{ top_k: -1 }, 'top_k'],
  [{ top_k: 2.5 }, 'top_k'],
  [{ seed: 0 }, 'seed'],
  [{ seed: -3 }, 'seed'],
  [{ seed: 1.5 }, 'seed'],
  [{ n: 0 }, 'n'],
  [{ n: 1.5 }, 'n'],
  [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
  [{ stop: 42 }, 'stop'],
  [{ stop_token_ids: [-1] }, 'stop_token_ids.0'],
  [{ logprobs: 'yes' }, 'logprobs'],
  [{ top_logprobs: -1 }, 'top_logprobs'],
  [{ max_completion_tokens: 0 }, 'max_completion_tokens'],
  [{ max_completion_tokens: 10.5 }, 'max_completion_tokens'],
  [{ max_tokens: 'ten' }, 'max_tokens'],
  [{ reasoning_effort: 'extreme' }, 'reasoning_effort'],
  [{ reasoning: { effort: 'huge' } }, 'reasoning.effort'],
  [{ stream: 'yes' }, 'stream'],
  [{ stream_options: { include_usage: 'sure' } }, 'stream_options.include_usage'],
  [{ tools: [{ type: 'retrieval' }] }, 'tools.0.type'],
  [{ tools: [{ type: 'function', function: { name: 'has spaces' } }] }, 'tools.0.function.name'],
  [{ tools: 'all' }, 'tools'],
  [{ tool_choice: 'sometimes' }, 'tool_choice'],
  [{ parallel_tool_calls: 'no' }, 'parallel_tool_calls'],
  [{ response_format: { type: 'xml' } }, 'response_format.type'],
  [{ response_format: { type: 'json_schema' } }, 'response_format.json_schema'],
  [{ prompt_cache_retention: 'forever' }, 'prompt_cache_retention'],
  [{ user: 42 }, 'user'],
  [{ metadata: 'x' }, 'metadata'],
  [{ service_parameters: { enable_web_search: 'always' } }, 'service_parameters.enable_web_search'],
  [{ service_parameters: { strip_thinking_response: 'yes' } }, 'service_parameters.strip_thinking_response'],
  [{ service_parameters: { enable_e2ee: true } }, 'service_parameters.enable_e2ee'],
  [{ venice_parameters: { include_venice_system_prompt: 1 } }, 'venice_parameters.include_venice_system_prompt'],
  [{ reasoning_effort: 'minimal', model: 'lagoon-sim-reasoner' }, 'reasoning_effort'],
];

describe(`REST chat completions: validation (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  const post = async (body: unknown) => {
    const response = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as ErrorBody & { choices?: unknown[] } };
  };

  beforeAll(async () => {
    server = await startChatServer();
    account = await chatAccount(server, '1');
  });
  afterAll(async () => server.close());

  it.each(BAD_FIELDS)('should answer 400 for %j naming %s, charging nothing', async (fields, path) => {
    const before = await account.balance();
    const { status, body } = await post({ ...base, ...fields });
    expect(status).toBe(400);
    expect(body.code).toBe('INVALID_REQUEST');
    expect(body.issues?.map((issue) => issue.path.join('.'))).toContain(path);
    expect(body.error).toContain(path);
    expect(await account.balance()).toEqual(before);
  });

  it('should ignore max_tokens ≤ 0 and accept the accepted-and-unused fields', async () => {
    const { status, body } = await post({
      ...base,
      max_tokens: 0,
      user: 'someone',
      store: true,
      text: { verbosity: 'low' },
      include: ['reasoning.encrypted_content'],
      metadata: { team: 'a' },
      prompt_cache_key: 'k1',
      prompt_cache_retention: '24h',
      logit_bias: { '50256': -100 },
      stop: 'END',
      reasoning: { effort: 'medium', summary: 'auto' },
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'Be brief.' }] },
        { role: 'user', content: 'hi', name: 'ann' },
      ],
    });
    expect(status).toBe(200);
    expect(body.choices).toHaveLength(1);
  });

  it('should take an explicit null as absent, at every level of the body', async () => {
    const nulls = Object.fromEntries(
      [
        'frequency_penalty',
        'presence_penalty',
        'temperature',
        'top_p',
        'top_k',
        'seed',
        'n',
        'stop',
        'max_tokens',
        'max_completion_tokens',
        'tools',
        'tool_choice',
        'response_format',
        'user',
        'metadata',
      ].map((field) => [field, null]),
    );
    const { status, body } = await post({
      ...base,
      ...nulls,
      stream: null,
      stream_options: { include_usage: null },
      reasoning: { effort: null, summary: null },
      text: { verbosity: null },
      // null in service_parameters leaves the alias's value in force
      venice_parameters: { strip_thinking_response: true },
      service_parameters: { strip_thinking_response: null, character_slug: null },
      messages: [
        { role: 'system', content: 'Be brief.', name: null },
        { role: 'user', content: [{ type: 'text', text: 'hi' }], name: null },
        { role: 'assistant', content: 'Hello.', tool_calls: null, reasoning_content: null },
        { role: 'user', content: 'again' },
      ],
    });
    expect(status).toBe(200);
    expect(body.choices).toHaveLength(1);
    expect(
      (body as { service_parameters?: { strip_thinking_response?: boolean } }).service_parameters
        ?.strip_thinking_response,
    ).toBe(true);
    // A null where a value is required is still named.
    const missing = await post({ ...base, messages: [{ role: 'tool', content: 'x', tool_call_id: null }] });
    expect(missing.status).toBe(400);
    expect((missing.body as unknown as ErrorBody).issues?.map((issue) => issue.path.join('.'))).toContain(
      'messages.0.tool_call_id',
    );
  });

  it('should let reasoning_effort win over reasoning.effort', async () => {
    // minimal is not among the reasoner's efforts: the top-level field alone decides.
    expect(
      (await post({ ...base, model: 'lagoon-sim-reasoner', reasoning_effort: 'low', reasoning: { effort: 'minimal' } }))
        .status,
    ).toBe(200);
    expect(
      (await post({ ...base, model: 'lagoon-sim-reasoner', reasoning_effort: 'minimal', reasoning: { effort: 'low' } }))
        .status,
    ).toBe(400);
  });

  it('should answer 400 for a body that is not JSON', async () => {
    const response = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: '{"model": ',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).code).toBe('INVALID_REQUEST');
  });
});
