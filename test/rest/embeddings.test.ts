import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatAccount, startChatServer, tokenCostNano, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { fakeVector, startEmbeddingUpstream, type FakeEmbeddingUpstream } from '../helpers/embedding-upstream.ts';
import { eventually } from '../helpers/eventually.ts';
import { scaled } from '../helpers/time-scale.ts';

const cosine = (a: readonly number[], b: readonly number[]) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);
const norm = (a: readonly number[]) => Math.sqrt(cosine(a, a));

describe(`REST POST /api/v1/embeddings with the openai client (${testDatabaseKind})`, () => {
  let upstream: FakeEmbeddingUpstream;
  let dir: string;
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  let client: OpenAI;
  const post = (body: unknown, key = account.secret) =>
    fetch(`${server.url}/api/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    upstream = await startEmbeddingUpstream();
    dir = await mkdtemp(join(tmpdir(), 'lagoon-embeddings-'));
    const path = join(dir, 'operator.json');
    await writeFile(
      path,
      JSON.stringify({
        providers: [{ id: 'fake-embed', type: 'openai-compatible', baseUrl: upstream.url, maxRetries: 0 }],
        models: [
          {
            id: 'test-upstream-embedding',
            type: 'embedding',
            name: 'Upstream embedding',
            pricing: { input: { usd: 0.1 }, output: { usd: 0.1 } },
            spec: { embeddingDimensions: 8, maxInputTokens: 16, supportsCustomDimensions: false },
            providers: [{ id: 'fake-embed', upstreamModel: 'bge-small' }],
          },
          {
            id: 'test-upstream-wide',
            type: 'embedding',
            name: 'Upstream embedding, 1024 dimensions',
            pricing: { input: { usd: 0.1 }, output: { usd: 0.1 } },
            spec: { embeddingDimensions: 1024, maxInputTokens: 512, supportsCustomDimensions: false },
            providers: [{ id: 'fake-embed', upstreamModel: 'wide-1024' }],
          },
        ],
      }),
    );
    server = await startChatServer({ LAGOON_CONFIG: path });
    account = await chatAccount(server);
    client = account.client;
  }, scaled(60_000));
  afterAll(async () => {
    await server.close();
    await Promise.all([upstream.close(), rm(dir, { recursive: true, force: true })]);
  });

  it('should embed with the built-in simulator: unit vectors, similar texts closer, charged per token', async () => {
    const before = await account.balance();
    const answer = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['The cat sat on the mat', 'A cat sat on a mat', 'Quarterly revenue grew by nine percent'],
      encoding_format: 'float',
    });
    expect(answer.model).toBe('lagoon-sim-embedding');
    expect(answer.data.map((item) => item.index)).toEqual([0, 1, 2]);
    const [a, b, c] = answer.data.map((item) => item.embedding);
    expect(a).toHaveLength(1024);
    for (const vector of [a!, b!, c!]) expect(norm(vector)).toBeCloseTo(1, 6);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!) + 0.3);
    const tokens = answer.usage.prompt_tokens;
    expect(tokens).toBeGreaterThan(10);
    expect(answer.usage.total_tokens).toBe(tokens);
    await eventually(async () => {
      expect(before.amount - (await account.balance()).amount).toBe(tokenCostNano(tokens, '0.02'));
    });
    const entries = (await account.allEntries()).filter(
      (entry) => entry.sku === 'lagoon-sim-embedding-embedding-input-mtoken',
    );
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ units: tokens, inferenceDetails: { promptTokens: tokens } });
  });

  it('should use the default embedding model when the request names none (the MCP tool sends none)', async () => {
    const traits = await fetch(`${server.url}/api/v1/models/traits?type=embedding`);
    const defaultModel = ((await traits.json()) as { data: Record<string, string> }).data.default;
    expect(defaultModel).toBe('lagoon-sim-embedding');
    const before = await account.balance();
    const input = ['The cat sat on the mat', 'Quarterly revenue grew'];
    // The openai client types `model` as required; the original's clients send the body without it.
    const answer = await client.embeddings.create({ model: undefined as unknown as string, input });
    expect(answer.model).toBe(defaultModel);
    expect(answer.data).toHaveLength(2);
    const named = await client.embeddings.create({ model: defaultModel!, input });
    expect(answer.data.map((item) => item.embedding)).toEqual(named.data.map((item) => item.embedding));
    const tokens = answer.usage.prompt_tokens;
    await eventually(async () => {
      expect(before.amount - (await account.balance()).amount).toBe(2n * tokenCostNano(tokens, '0.02'));
    });
  });

  it('should give the same vectors as base64 (the client asks for base64 by default and decodes it)', async () => {
    const input = 'Lagoon serves embeddings';
    const floats = await client.embeddings.create({ model: 'lagoon-sim-embedding', input, encoding_format: 'float' });
    const decoded = await client.embeddings.create({ model: 'lagoon-sim-embedding', input });
    expect(decoded.data[0]!.embedding).toEqual(floats.data[0]!.embedding.map((value) => Math.fround(value)));
    const raw = (await (await post({ model: 'lagoon-sim-embedding', input, encoding_format: 'base64' })).json()) as {
      data: { embedding: string }[];
    };
    expect(Buffer.from(raw.data[0]!.embedding, 'base64').byteLength).toBe(1024 * 4);
  });

  it('should shorten to `dimensions` on a model with supportsCustomDimensions, still unit length', async () => {
    const answer = await client.embeddings.create({
      model: 'default',
      input: 'short vector',
      dimensions: 256,
      encoding_format: 'float',
    });
    expect(answer.data[0]!.embedding).toHaveLength(256);
    expect(norm(answer.data[0]!.embedding)).toBeCloseTo(1, 6);
  });

  it('should pass an upstream model through: its vectors, base64 asked for, its token count billed', async () => {
    const before = await account.balance();
    const answer = await client.embeddings.create({ model: 'test-upstream-embedding', input: ['one', 'two'] });
    expect(answer.data.map((item) => item.embedding)).toEqual([fakeVector(0), fakeVector(1)]);
    expect(answer.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
    expect(upstream.requests.at(-1)).toEqual({ model: 'bge-small', input: ['one', 'two'], encoding_format: 'base64' });
    await eventually(async () => {
      expect(before.amount - (await account.balance()).amount).toBe(tokenCostNano(6, '0.1'));
    });
    const floats = await client.embeddings.create({
      model: 'test-upstream-embedding',
      input: 'three',
      encoding_format: 'float',
    });
    expect(floats.data[0]!.embedding).toEqual(fakeVector(0));
  });

  describe('wide vectors, which go back out as the upstream sent their bytes', () => {
    const wide = (index: number) => fakeVector(index, 1024);
    /** The JSON text of each `"embedding":` value in a body, as written. */
    const embeddingTexts = (body: string) =>
      [...body.matchAll(/"embedding":("[^"]*"|\[[^\]]*\])/g)].map((match) => match[1]);

    it('should answer base64 vectors byte for byte, which the openai client decodes, and bill the tokens', async () => {
      const before = await account.balance();
      const answer = await client.embeddings.create({ model: 'test-upstream-wide', input: ['a', 'b', 'c'] });
      expect(answer.data.map((item) => item.embedding)).toEqual([wide(0), wide(1), wide(2)]);
      expect(answer.model).toBe('test-upstream-wide');
      expect(answer.usage).toEqual({ prompt_tokens: 9, total_tokens: 9 });
      const response = await post({ model: 'test-upstream-wide', input: ['a', 'b'], encoding_format: 'base64' });
      const text = await response.text();
      expect(embeddingTexts(text)).toEqual(embeddingTexts(upstream.sent.at(-1)!));
      expect(JSON.parse(text)).toMatchObject({
        object: 'list',
        model: 'test-upstream-wide',
        usage: { prompt_tokens: 6 },
      });
      await eventually(async () => {
        expect(before.amount - (await account.balance()).amount).toBe(
          tokenCostNano(9, '0.1') + tokenCostNano(6, '0.1'),
        );
      });
    });

    it('should answer float vectors as the upstream wrote them', async () => {
      const response = await post({ model: 'test-upstream-wide', input: ['a', 'b'], encoding_format: 'float' });
      const text = await response.text();
      expect(response.headers.get('content-type')).toContain('application/json');
      expect(embeddingTexts(text)).toEqual(embeddingTexts(upstream.sent.at(-1)!));
      const body = JSON.parse(text) as { data: { object: string; index: number; embedding: number[] }[] };
      expect(body.data).toEqual([
        { object: 'embedding', index: 0, embedding: wide(0) },
        { object: 'embedding', index: 1, embedding: wide(1) },
      ]);
      const floats = await client.embeddings.create({
        model: 'test-upstream-wide',
        input: 'x',
        encoding_format: 'float',
      });
      expect(floats.data[0]!.embedding).toEqual(wide(0));
    });

    it('should compress the spliced answer when asked (Accept-Encoding)', async () => {
      const response = await fetch(`${server.url}/api/v1/embeddings`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${account.secret}`,
          'content-type': 'application/json',
          'accept-encoding': 'gzip',
        },
        body: JSON.stringify({ model: 'test-upstream-wide', input: ['a', 'b'], encoding_format: 'float' }),
      });
      expect(response.headers.get('content-encoding')).toBe('gzip');
      const body = (await response.json()) as { data: { embedding: number[] }[] };
      expect(body.data.map((item) => item.embedding)).toEqual([wide(0), wide(1)]);
    });

    it('should convert when the upstream ignores the encoding asked for', async () => {
      const floatsBody = JSON.stringify({
        data: [1, 0].map((index) => ({ object: 'embedding', index, embedding: wide(index) })),
        usage: { prompt_tokens: 4 },
      });
      upstream.queueBody(floatsBody);
      const asBase64 = await client.embeddings.create({ model: 'test-upstream-wide', input: ['p', 'q'] });
      expect(asBase64.data.map((item) => item.embedding)).toEqual([wide(0), wide(1)]);
      upstream.queueBody(
        JSON.stringify({
          data: [
            {
              object: 'embedding',
              index: 0,
              embedding: Buffer.from(Float32Array.from(wide(3)).buffer).toString('base64'),
            },
          ],
        }),
      );
      const asFloats = await client.embeddings.create({
        model: 'test-upstream-wide',
        input: 'r',
        encoding_format: 'float',
      });
      expect(asFloats.data[0]!.embedding).toEqual(wide(3));
    });

    it('should give GraphQL createEmbeddings the numbers of lifted vectors', async () => {
      const response = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          query: `mutation($input: EmbeddingsInput!) { createEmbeddings(input: $input) {
            ... on MutationCreateEmbeddingsSuccess { data { promptTokens data { index embedding } } } } }`,
          variables: { input: { model: 'test-upstream-wide', input: ['g', 'h'] } },
        }),
      });
      const body = (await response.json()) as {
        data: { createEmbeddings: { data: { promptTokens: number; data: { index: number; embedding: number[] }[] } } };
      };
      expect(body.data.createEmbeddings.data).toEqual({
        promptTokens: 6,
        data: [
          { index: 0, embedding: wide(0) },
          { index: 1, embedding: wide(1) },
        ],
      });
    });

    it.each([
      ['a base64 vector that is not ASCII', `{"data":[{"index":0,"embedding":"${'é'.repeat(300)}"}]}`],
      ['a base64 vector of a length base64 never has', `{"data":[{"index":0,"embedding":"${'A'.repeat(301)}"}]}`],
      ['a long array that is not numbers', `{"data":[{"index":0,"embedding":[${'true,'.repeat(80)}true]}]}`],
      ['a long array that breaks off', `{"data":[{"index":0,"embedding":[${'0.5,'.repeat(80)}`],
    ])('should refuse %s from the upstream (5xx) and charge nothing', async (_what, answer) => {
      const before = await account.balance();
      upstream.queueBody(answer);
      const response = await post({ model: 'test-upstream-wide', input: 'x', encoding_format: 'float' });
      expect(response.status).toBeGreaterThanOrEqual(500);
      expect(((await response.json()) as { code: string }).code).toBe('UPSTREAM_ERROR');
      await eventually(async () => {
        const now = await account.balance();
        expect([now.amount, now.reserved]).toEqual([before.amount, 0n]);
      });
    });
  });

  it.each([
    ['token arrays', { model: 'lagoon-sim-embedding', input: [1, 2, 3] }, 'Token arrays'],
    ['arrays of token arrays', { model: 'lagoon-sim-embedding', input: [[1, 2]] }, 'Token arrays'],
    ['an empty string', { model: 'lagoon-sim-embedding', input: '' }, 'input'],
    ['an empty list', { model: 'lagoon-sim-embedding', input: [] }, 'input'],
    ['2049 inputs', { model: 'lagoon-sim-embedding', input: Array.from({ length: 2049 }, () => 'x') }, 'input'],
    ['an unknown field', { model: 'lagoon-sim-embedding', input: 'x', extra: 1 }, 'extra'],
    ['a bad encoding', { model: 'lagoon-sim-embedding', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
    ['dimensions on a fixed-size model', { model: 'test-upstream-embedding', input: 'x', dimensions: 4 }, 'dimensions'],
    [
      'more dimensions than the model has',
      { model: 'lagoon-sim-embedding', input: 'x', dimensions: 4096 },
      'dimensions',
    ],
    ['an input over maxInputTokens', { model: 'test-upstream-embedding', input: 'word '.repeat(40) }, 'input.0'],
    ['an unknown model', { model: 'no-such-model', input: 'x' }, 'Unknown model'],
    ['a text model', { model: 'lagoon-sim-chat', input: 'x' }, 'text model'],
    ['no model and an empty input', { input: '' }, 'input'],
    ['no model and no input', {}, 'input'],
    ['a null model', { model: null, input: 'x' }, 'model'],
    ['an empty model', { model: '', input: 'x' }, 'model'],
  ])('should answer 400 for %s, charging nothing', async (_what, body, mention) => {
    const before = await account.balance();
    const response = await post(body);
    expect(response.status).toBe(400);
    const error = (await response.json()) as { error: string; code: string };
    expect(error.error).toContain(mention);
    expect(['INVALID_REQUEST', 'INVALID_MODEL']).toContain(error.code);
    expect((await account.balance()).amount).toBe(before.amount);
  });

  it('should answer 402 to an account without funds, and 401 without a key', async () => {
    const broke = await chatAccount(server, '0');
    const response = await post({ model: 'lagoon-sim-embedding', input: 'x' }, broke.secret);
    expect(response.status).toBe(402);
    expect(((await response.json()) as { code: string }).code).toBe('INSUFFICIENT_BALANCE');
    await expect(broke.client.embeddings.create({ model: 'lagoon-sim-embedding', input: 'x' })).rejects.toMatchObject({
      status: 402,
    });
    expect((await post({ model: 'lagoon-sim-embedding', input: 'x' }, '')).status).toBe(401);
  });

  it('should release the hold when the upstream fails (5xx → 502-class error, a 400 passed on as 400)', async () => {
    const before = await account.balance();
    upstream.queue(500);
    const failed = await post({ model: 'test-upstream-embedding', input: 'x' });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    upstream.queue(400);
    expect((await post({ model: 'test-upstream-embedding', input: 'x' })).status).toBe(400);
    await eventually(async () => {
      const now = await account.balance();
      expect([now.amount, now.reserved]).toEqual([before.amount, 0n]);
    });
  });

  it('should serve GraphQL createEmbeddings with the same vectors', async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `mutation($input: EmbeddingsInput!) { createEmbeddings(input: $input) { __typename
          ... on MutationCreateEmbeddingsSuccess { data { model simulated promptTokens currency data { index embedding } } }
          ... on Error { message } } }`,
        variables: { input: { model: 'lagoon-sim-embedding', input: ['graph', 'ql'], dimensions: 16 } },
      }),
    });
    const body = (await response.json()) as {
      data: { createEmbeddings: { data: { model: string; simulated: boolean; data: { embedding: number[] }[] } } };
    };
    const result = body.data.createEmbeddings.data;
    expect(result).toMatchObject({ model: 'lagoon-sim-embedding', simulated: true });
    expect(result.data.map((item) => item.embedding.length)).toEqual([16, 16]);
    const rest = await client.embeddings.create({
      model: 'lagoon-sim-embedding',
      input: 'graph',
      dimensions: 16,
      encoding_format: 'float',
    });
    expect(result.data[0]!.embedding).toEqual(rest.data[0]!.embedding);
  });
});
