import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { chatAccount, startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';

/* GraphQL rateLimits and rateLimitLog, and chatCompletion's typed RateLimitExceededError. */

const CHAT = `mutation Chat($input: ChatCompletionInput!) {
  chatCompletion(input: $input) {
    __typename
    ... on MutationChatCompletionSuccess { data { id } }
    ... on Error { message code }
    ... on RateLimitExceededError { type modelId limit remaining resetAt }
  }
}`;

const STATUS = `{
  rateLimits {
    accessPermitted tierId tierIsCharged balanceUsd balanceDiem keyExpiration nextEpochBegins
    models { modelId rateLimits { type amount } }
  }
  rateLimitLog { apiKeyId modelId tier type timestamp }
}`;

interface Status {
  rateLimits: {
    accessPermitted: boolean;
    tierId: string;
    tierIsCharged: boolean;
    balanceUsd: string;
    keyExpiration: string | null;
    models: { modelId: string; rateLimits: { type: string; amount: number }[] }[];
  };
  rateLimitLog: { apiKeyId: string; modelId: string; tier: string; type: string; timestamp: string }[];
}

describe(`GraphQL rate limits (${testDatabaseKind})`, () => {
  let server: ChatServer;

  beforeAll(async () => {
    server = await startChatServer(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {});
  });
  afterAll(async () => {
    await server.close();
  });

  it('refuses chatCompletion past RPM with a typed error, then lists it in rateLimitLog', async () => {
    const account = await chatAccount(server, '3');
    const auth = await server.t.app.services.auth.authenticate({ authorization: `Bearer ${account.secret}` }, 't');
    if (auth.kind !== 'apiKey') throw new Error('expected a key');
    await server.t.app.services.apiKeys.setRateLimits(operator(), { id: auth.apiKey.id }, { rpm: 1 });
    const input = { model: 'lagoon-sim-chat', messages: [{ role: 'USER', content: 'Hello' }] };
    const first = await server.t.graphql<{ chatCompletion: { __typename: string } }>(CHAT, { input }, account.secret);
    expect(first.errors).toBeUndefined();
    expect(first.data?.chatCompletion.__typename).toBe('MutationChatCompletionSuccess');
    const before = await account.balance();
    const second = await server.t.graphql<{ chatCompletion: Record<string, unknown> }>(CHAT, { input }, account.secret);
    expect(second.data?.chatCompletion).toMatchObject({
      __typename: 'RateLimitExceededError',
      code: 'RATE_LIMIT_EXCEEDED',
      type: 'RPM',
      modelId: 'lagoon-sim-chat',
      limit: 1,
      remaining: 0,
    });
    expect(Date.parse(second.data?.chatCompletion.resetAt as string)).toBeGreaterThan(Date.now());
    expect(await account.balance()).toEqual(before);

    const status = await server.t.graphql<Status>(STATUS, {}, account.secret);
    expect(status.errors).toBeUndefined();
    expect(status.data?.rateLimits).toMatchObject({
      accessPermitted: true,
      tierId: 'paid',
      tierIsCharged: true,
      keyExpiration: null,
    });
    const chat = status.data?.rateLimits.models.find((model) => model.modelId === 'lagoon-sim-chat');
    expect(chat?.rateLimits[0]).toEqual({ type: 'RPM', amount: 1 });
    expect(status.data?.rateLimitLog).toEqual([
      {
        apiKeyId: auth.apiKey.id,
        modelId: 'lagoon-sim-chat',
        tier: 'paid',
        type: 'RPM',
        timestamp: expect.any(String) as unknown,
      },
    ]);
  });

  it('answers the same typed error from the other paid mutations, embeddings and the job queue here', async () => {
    const account = await chatAccount(server, '3');
    const auth = await server.t.app.services.auth.authenticate({ authorization: `Bearer ${account.secret}` }, 't');
    if (auth.kind !== 'apiKey') throw new Error('expected a key');
    await server.t.app.services.apiKeys.setRateLimits(operator(), { id: auth.apiKey.id }, { rpm: 1 });
    const calls = [
      {
        query: `mutation E($input: EmbeddingsInput!) {
          createEmbeddings(input: $input) { __typename ... on RateLimitExceededError { type modelId limit } }
        }`,
        input: { model: 'lagoon-sim-embedding', input: ['a lagoon'] },
        modelId: 'lagoon-sim-embedding',
      },
      {
        query: `mutation Q($input: JSONObject!) {
          queueVideo(input: $input) { __typename ... on RateLimitExceededError { type modelId limit } }
        }`,
        input: { model: 'lagoon-sim-video', prompt: 'a lagoon', duration: '5s', resolution: '480p' },
        modelId: 'lagoon-sim-video',
      },
    ];
    for (const { query, input, modelId } of calls) {
      type Answer = Record<string, { __typename: string }>;
      const first = await server.t.graphql<Answer>(query, { input }, account.secret);
      expect(first.errors).toBeUndefined();
      expect(Object.values(first.data ?? {})[0]?.__typename).not.toBe('RateLimitExceededError');
      const second = await server.t.graphql<Answer>(query, { input }, account.secret);
      expect(Object.values(second.data ?? {})[0]).toEqual({
        __typename: 'RateLimitExceededError',
        type: 'RPM',
        modelId,
        limit: 1,
      });
    }
  });

  it('needs a key', async () => {
    const anonymous = await server.t.graphql(STATUS, {}, null);
    expect(anonymous.data?.rateLimits ?? null).toBeNull();
    expect(anonymous.errors?.[0]?.extensions?.code).toBeDefined();
  });
});
