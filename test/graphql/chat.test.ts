import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatNano } from '../../src/billing/money.ts';
import {
  chatAccount,
  eventually,
  recordingFetch,
  requestIdOf,
  startChatServer,
  tokenCostNano,
  type ChatServer,
} from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';

/* GraphQL chatCompletion (mutation) and chatCompletionStream (subscription over graphql-sse), on the simulator. */

const SIM_CHAT = { input: '0.5', output: '2' };

const MUTATION = `mutation Chat($input: ChatCompletionInput!) {
  chatCompletion(input: $input) {
    __typename
    ... on MutationChatCompletionSuccess {
      data {
        id model created charged currency
        choices { index finishReason message { role content reasoningContent toolCalls { id type function { name arguments } } } }
        usage { promptTokens completionTokens totalTokens cachedTokens }
        serviceParameters { enableWebSearch enableWebScraping includeSystemPrompt characterSlug webSearchCitations { index url } }
      }
    }
    ... on Error { message code }
    ... on ValidationError { issues { path message } }
  }
}`;

const SUBSCRIPTION = `subscription Stream($input: ChatCompletionInput!) {
  chatCompletionStream(input: $input) {
    id model
    choices { index finishReason delta { role content reasoningContent toolCalls { index id function { name arguments } } } }
    usage { promptTokens completionTokens totalTokens }
    charged currency
  }
}`;

interface Chunk {
  id: string;
  model: string;
  choices: {
    index: number;
    finishReason: string | null;
    delta: { role: string | null; content: string | null; reasoningContent: string | null };
  }[];
  usage: { promptTokens: number; completionTokens: number; totalTokens: number } | null;
  charged: string | null;
  currency: string | null;
}

describe(`GraphQL chat completions (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  const clients: Client[] = [];
  const sse = (secret: string) => {
    const client = createClient({
      url: `${server.url}/graphql/stream`,
      headers: { authorization: `Bearer ${secret}` },
      fetchFn: recordingFetch,
      retryAttempts: 0,
    });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await startChatServer();
    account = await chatAccount(server, '5');
  });
  afterAll(async () => {
    for (const client of clients) client.dispose();
    await server.close();
  });

  it('should answer chatCompletion with typed objects, charged exactly price × tokens', async () => {
    const before = await account.balance();
    // Over HTTP through recordingFetch, which notes the request id (X-Request-ID) that answered the completion.
    const response = await recordingFetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: MUTATION,
        variables: {
          input: {
            model: 'default',
            messages: [{ role: 'USER', content: 'Hello from GraphQL' }],
            seed: 3,
            serviceParameters: { characterSlug: 'lagoon-guide', enableWebScraping: true },
          },
        },
      }),
    });
    const { data, errors } = (await response.json()) as {
      data?: { chatCompletion: Record<string, unknown> };
      errors?: unknown;
    };
    expect(errors).toBeUndefined();
    const result = data!.chatCompletion as unknown as {
      __typename: string;
      data: {
        id: string;
        model: string;
        charged: string;
        currency: string;
        choices: { message: { role: string; content: string } }[];
        usage: { promptTokens: number; completionTokens: number; totalTokens: number; cachedTokens: number };
        serviceParameters: Record<string, unknown>;
      };
    };
    expect(result.__typename).toBe('MutationChatCompletionSuccess');
    const completion = result.data;
    expect(completion.model).toBe('lagoon-sim-chat');
    expect(completion.choices[0]!.message.role).toBe('assistant');
    expect(completion.serviceParameters).toEqual({
      enableWebSearch: 'OFF',
      enableWebScraping: true,
      includeSystemPrompt: true,
      characterSlug: 'lagoon-guide',
      webSearchCitations: [],
    });
    const { usage } = completion;
    expect(usage.totalTokens).toBe(usage.promptTokens + usage.completionTokens);
    const expected =
      tokenCostNano(usage.promptTokens, SIM_CHAT.input) + tokenCostNano(usage.completionTokens, SIM_CHAT.output);
    expect(completion).toMatchObject({ charged: formatNano(expected), currency: 'USD' });
    expect(before.amount - (await account.balance()).amount).toBe(expected);
    const entries = await account.entries(requestIdOf(completion.id));
    expect(entries.map((e) => e.units)).toEqual([usage.promptTokens, usage.completionTokens]);
  });

  it('should return typed errors: an unknown model, a bad field, no funds', async () => {
    const ask = async (input: Record<string, unknown>, key = account.secret) =>
      (
        await server.t.graphql<{ chatCompletion: Record<string, unknown> }>(
          MUTATION,
          { input: { messages: [{ role: 'USER', content: 'hi' }], ...input } },
          key,
        )
      ).data!.chatCompletion;
    expect(await ask({ model: 'no-such-model' })).toMatchObject({
      __typename: 'InvalidModelError',
      code: 'INVALID_MODEL',
    });
    expect(await ask({ model: 'default', temperature: 5 })).toMatchObject({
      __typename: 'ValidationError',
      code: 'INVALID_REQUEST',
      issues: [{ path: ['temperature'] }],
    });
    const poor = await chatAccount(server, '0.000001');
    expect(await ask({ model: 'default' }, poor.secret)).toMatchObject({
      __typename: 'InsufficientBalanceError',
      code: 'INSUFFICIENT_BALANCE',
    });
  });

  it('should stream chatCompletionStream over graphql-sse as typed chunks ending with a usage chunk', async () => {
    const before = await account.balance();
    const results: { data?: { chatCompletionStream: Chunk } | null; errors?: unknown }[] = [];
    for await (const result of sse(account.secret).iterate<{ chatCompletionStream: Chunk }>({
      query: SUBSCRIPTION,
      variables: {
        input: {
          model: 'lagoon-sim-reasoner',
          messages: [{ role: 'USER', content: 'Explain tides' }],
          maxCompletionTokens: 60,
        },
      },
    })) {
      results.push(result);
    }
    expect(results.every((r) => r.errors === undefined)).toBe(true);
    const chunks = results.map((r) => r.data!.chatCompletionStream);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.completionTokens).toBeGreaterThan(0);
    expect(
      chunks.slice(0, -1).every((c) => c.usage === null && c.model === 'lagoon-sim-reasoner' && c.id === last.id),
    ).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.flatMap((c) => c.choices.map((choice) => choice.delta.reasoningContent ?? '')).join('')).not.toBe('');
    const entries = await account.entries(requestIdOf(last.id));
    expect(entries.map((e) => e.units)).toEqual([last.usage!.promptTokens, last.usage!.completionTokens]);
    const cost = tokenCostNano(last.usage!.promptTokens, '1') + tokenCostNano(last.usage!.completionTokens, '4');
    expect(before.amount - (await account.balance()).amount).toBe(cost);
    // The last chunk says what the call cost; the others carry no charge.
    expect({ charged: last.charged, currency: last.currency }).toEqual({ charged: formatNano(cost), currency: 'USD' });
    expect(chunks.slice(0, -1).every((c) => c.charged === null && c.currency === null)).toBe(true);
  });

  it('should refuse a subscription the account cannot pay for, and settle what was delivered when the client unsubscribes', async () => {
    const poor = await chatAccount(server, '0.000001');
    const refused = await sse(poor.secret)
      .iterate({
        query: SUBSCRIPTION,
        variables: { input: { model: 'default', messages: [{ role: 'USER', content: 'hi' }] } },
      })
      .next();
    expect(refused.value).toMatchObject({ errors: [{ extensions: { code: 'INSUFFICIENT_BALANCE' } }] });

    const before = await account.balance();
    const events = sse(account.secret).iterate<{ chatCompletionStream: Chunk }>({
      query: SUBSCRIPTION,
      variables: {
        input: {
          model: 'default',
          messages: [{ role: 'USER', content: 'Write a long story about the sea' }],
          maxCompletionTokens: 2000,
        },
      },
    });
    await events.next();
    await events.next();
    await events.return?.();
    await eventually(async () => (await account.balance()).reserved === 0n);
    const [latest] = await account.allEntries();
    expect(latest!.notes).toContain('the client disconnected');
    expect((await account.balance()).amount).toBeLessThan(before.amount);
  });
});
