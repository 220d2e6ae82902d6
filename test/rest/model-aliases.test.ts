import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/** A text model and an image model of the operator's, each with an alias; one more alias of a built-in model. */
const OPERATOR_CONFIG = `
models:
  - id: house-chat
    type: text
    name: House Chat
    traits: [default]
    contextLength: 65536
    capabilities: { supportsFunctionCalling: true }
    pricing: { input: { usd: 1 }, output: { usd: 2 } }
    provider: simulator
  - id: gpt-4o
    aliasOf: house-chat
    name: GPT-4o (house)
    ownedBy: openai
    created: 2024-05-13
    pricing: { input: { usd: 10 }, output: { usd: 20 } }
  - id: house-picture
    aliasOf: lagoon-sim-image
    type: image
    description: Pictures under the house name
compatibilityMappings:
  text: { chatgpt: gpt-4o }
`;

interface ModelRecord {
  id: string;
  type: string;
  owned_by: string;
  created: number;
  context_length?: number;
  model_spec: { name: string; description: string; traits: string[]; pricing: Record<string, unknown> } & Record<
    string,
    unknown
  >;
}

describe(`model aliases over HTTP (${testDatabaseKind})`, () => {
  let dir: string;
  let t: TestApp;
  let client: OpenAI;
  let secret: string;
  let accountId: string;

  const get = async <T>(path: string) => {
    const response = await t.call(`/api/v1${path}`, { key: null });
    expect(response.status).toBe(200);
    return (await response.json()) as T;
  };
  const ids = async (type: string) =>
    (await get<{ data: ModelRecord[] }>(`/models?type=${type}`)).data.map((model) => model.id);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lagoon-aliases-'));
    await writeFile(join(dir, 'operator.yaml'), OPERATOR_CONFIG);
    t = await createTestApp({ LAGOON_CONFIG: join(dir, 'operator.yaml') });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
    client = new OpenAI({
      apiKey: secret,
      baseURL: 'http://lagoon.test/api/v1',
      maxRetries: 0,
      timeout: 30_000,
      fetch: (url, init) => t.app.fetch(new Request(url, init)),
    });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('should list each alias under its own id in its type, in all, and retrieve it', async () => {
    expect(await ids('text')).toEqual(expect.arrayContaining(['house-chat', 'gpt-4o']));
    expect(await ids('image')).toEqual(expect.arrayContaining(['lagoon-sim-image', 'house-picture']));
    expect(await ids('all')).toEqual(expect.arrayContaining(['house-chat', 'gpt-4o', 'house-picture']));
    expect(await ids('image')).not.toContain('gpt-4o');

    const target = await get<ModelRecord>('/models/house-chat');
    const alias = await get<ModelRecord>('/models/gpt-4o');
    expect(alias).toMatchObject({
      id: 'gpt-4o',
      type: 'text',
      owned_by: 'openai',
      created: Date.parse('2024-05-13') / 1000,
      context_length: 65536,
    });
    expect(target.owned_by).toBe('lagoon');
    expect(alias.model_spec).toEqual({
      ...target.model_spec,
      name: 'GPT-4o (house)',
      traits: [],
      pricing: { input: { usd: 10, diem: 10 }, output: { usd: 20, diem: 20 } },
    });
    const builtIn = await get<ModelRecord>('/models/lagoon-sim-image');
    const picture = await get<ModelRecord>('/models/house-picture');
    expect(picture.model_spec).toEqual({
      ...builtIn.model_spec,
      description: 'Pictures under the house name',
      traits: [],
    });
  });

  it('should not pass the target’s traits on (one default per type)', async () => {
    expect((await get<{ data: Record<string, string> }>('/models/traits')).data.default).toBe('house-chat');
    const imageTraits = (await get<{ data: Record<string, string> }>('/models/traits?type=image')).data;
    expect(Object.values(imageTraits)).not.toContain('house-picture');
  });

  it('should serve the aliases to the openai client and the GraphQL catalog', async () => {
    const listed = [];
    for await (const model of client.models.list()) listed.push(model.id);
    expect(listed).toEqual(expect.arrayContaining(['gpt-4o', 'house-chat']));
    const retrieved = await client.models.retrieve('gpt-4o');
    expect(retrieved).toMatchObject({ id: 'gpt-4o', object: 'model', owned_by: 'openai' });

    const result = await t.graphql<{ models: { id: string; ownedBy: string; name: string }[] }>(
      '{ models(type: IMAGE) { id ownedBy name } }',
      {},
      null,
    );
    expect(result.data?.models).toContainEqual({
      id: 'house-picture',
      ownedBy: 'lagoon',
      name: 'Lagoon Simulator Image',
    });
  });

  it('should answer and bill a chat under the alias id at the alias’s prices', async () => {
    for (const model of ['gpt-4o', 'chatgpt']) {
      const answer = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] });
      expect(answer.model).toBe('gpt-4o');
      const { prompt_tokens: input, completion_tokens: output } = answer.usage!;
      // USD per 1M tokens (10 in, 20 out) in nano-units: 10 000 nano per input token, 20 000 per output token.
      const expected = -(BigInt(input) * 10_000n + BigInt(output) * 20_000n);
      let entries: { model_id: string | null; amount: bigint }[] = [];
      await eventually(async () => {
        entries = await t.app.database.db
          .selectFrom('usage_entries')
          .select(['model_id', 'amount'])
          .where('account_id', '=', accountId)
          .execute();
        expect(entries.length).toBeGreaterThanOrEqual(2);
      }, 15_000);
      await t.app.database.db.deleteFrom('usage_entries').where('account_id', '=', accountId).execute();
      expect(new Set(entries.map((entry) => entry.model_id))).toEqual(new Set(['gpt-4o']));
      expect(entries.reduce((sum, entry) => sum + entry.amount, 0n)).toBe(expected);
    }
  });
});
