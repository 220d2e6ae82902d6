import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogId } from '../../src/providers/chat/model-discovery.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';

interface ModelRecord {
  id: string;
  context_length?: number;
  model_spec: {
    name: string;
    traits: string[];
    pricing: Record<string, { usd: number; diem: number }>;
    capabilities?: Record<string, unknown>;
  };
}

// A model the upstream also lists (qwen2.5:7b → qwen2.5-7b): the config's definition wins.
const OPERATOR_CONFIG = `
discovery:
  pricing: { input: { usd: 0.3 }, output: { usd: 1.2 }, cache_input: { usd: 0.1 } }
  contextLength: 65536
  traits: [local]
models:
  - id: qwen2.5-7b
    type: text
    name: Qwen 2.5 7B (configured)
    provider: simulator
    pricing: { input: { usd: 0.05 }, output: { usd: 0.1 } }
`;

const UPSTREAM_MODELS = ['meta-llama/Llama-3.3-70B-Instruct', 'qwen2.5:7b', 'llama3.2:latest'];

describe(`zero-config model discovery (${testDatabaseKind})`, () => {
  let upstream: OpenAIUpstream;
  let t: TestApp;
  let dir: string;

  const textModels = async (app: TestApp = t) => {
    const response = await app.call('/api/v1/models', { key: null });
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: ModelRecord[] }).data;
  };

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ models: UPSTREAM_MODELS, apiKey: 'sk-local' });
    dir = mkdtempSync(join(tmpdir(), 'lagoon-discovery-'));
    writeFileSync(join(dir, 'operator.yaml'), OPERATOR_CONFIG);
    t = await createTestApp({
      LAGOON_CONFIG: join(dir, 'operator.yaml'),
      OPENAI_COMPATIBLE_BASE_URL: upstream.url,
      OPENAI_COMPATIBLE_API_KEY: 'sk-local',
    });
  });
  afterAll(async () => {
    await t.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the upstream models in GET /models with the discovery pricing, after the configured ones', async () => {
    const models = await textModels();
    const ids = models.map((m) => m.id);
    expect(ids).toEqual(
      expect.arrayContaining(['lagoon-sim-chat', 'meta-llama/Llama-3.3-70B-Instruct', 'qwen2.5-7b', 'llama3.2']),
    );
    expect(ids.indexOf('meta-llama/Llama-3.3-70B-Instruct')).toBeGreaterThan(ids.indexOf('lagoon-sim-chat'));
    const llama = models.find((m) => m.id === 'meta-llama/Llama-3.3-70B-Instruct');
    expect(llama?.context_length).toBe(65536);
    expect(llama?.model_spec.pricing).toEqual({
      input: { usd: 0.3, diem: 0.3 },
      output: { usd: 1.2, diem: 1.2 },
      cache_input: { usd: 0.1, diem: 0.1 },
    });
    expect(llama?.model_spec.traits).toEqual(['local']);
    expect(llama?.model_spec.capabilities).toMatchObject({
      supportsFunctionCalling: true,
      supportsResponseSchema: true,
    });
    expect(models.find((m) => m.id === 'llama3.2')?.model_spec.traits).toEqual([]);
    const traits = (await (await t.call('/api/v1/models/traits', { key: null })).json()) as {
      data: Record<string, string>;
    };
    expect(traits.data.local).toBe('meta-llama/Llama-3.3-70B-Instruct');
    // Discovery authenticated with the env key.
    expect(upstream.requests.find((r) => r.path === '/v1/models')?.headers.authorization).toBe('Bearer sk-local');
  });

  it('lets the config file override a discovered model of the same id', async () => {
    const qwen = (await textModels()).find((m) => m.id === 'qwen2.5-7b');
    expect(qwen?.model_spec.name).toBe('Qwen 2.5 7B (configured)');
    expect(qwen?.model_spec.pricing.input).toEqual({ usd: 0.05, diem: 0.05 });
  });

  it('binds discovered models to the upstream under their own names', async () => {
    const model = await t.app.services.catalog.resolveModel('llama3.2', 'text');
    expect(model?.providers).toEqual([{ providerId: 'openai-compatible', upstreamModel: 'llama3.2:latest' }]);
    const result = await t.app.services.chatGateway.complete(
      model?.providers ?? [],
      { messages: [{ role: 'user', content: 'Hi' }] },
      {},
    );
    expect(result.completion.choices[0]?.message.content).toBe('Hello from the test upstream.');
    expect(upstream.chatRequests().at(-1)?.body.model).toBe('llama3.2:latest');
  });

  it('refreshes: keeps the models when the upstream fails, drops the ones no longer listed', async () => {
    upstream.setModels({ status: 500 });
    expect(await t.app.services.modelDiscovery.refresh()).toBeUndefined();
    expect((await textModels()).map((m) => m.id)).toContain('llama3.2');
    upstream.setModels(['llama3.2:latest', 'mistral-small']);
    expect(await t.app.services.modelDiscovery.refresh()).toEqual(['llama3.2', 'mistral-small']);
    const ids = (await textModels()).map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['llama3.2', 'mistral-small', 'qwen2.5-7b', 'lagoon-sim-chat']));
    expect(ids).not.toContain('meta-llama/Llama-3.3-70B-Instruct');
    const direct = await t.call('/api/v1/models/meta-llama/Llama-3.3-70B-Instruct', { key: null });
    expect(direct.status).toBe(404);
  });

  it('starts with the upstream down, with the default price, and picks the models up later', async () => {
    const down = await startOpenAIUpstream({ models: ['phi-4'] });
    down.setModels({ status: 503 });
    const app = await createTestApp({ OPENAI_COMPATIBLE_BASE_URL: down.url, OPENAI_COMPATIBLE_REFRESH_SECONDS: '0' });
    try {
      expect((await textModels(app)).map((m) => m.id)).not.toContain('phi-4');
      down.setModels(['phi-4']);
      await app.app.services.modelDiscovery.refresh();
      const phi = (await textModels(app)).find((m) => m.id === 'phi-4');
      expect(phi?.model_spec.pricing).toEqual({ input: { usd: 0.5, diem: 0.5 }, output: { usd: 2, diem: 2 } });
      expect(phi?.context_length).toBe(32768);
    } finally {
      await app.close();
      await down.close();
    }
  });

  it('starts when the upstream cannot be reached at all', async () => {
    const gone = await startOpenAIUpstream();
    const url = gone.url;
    await gone.close();
    const app = await createTestApp({ OPENAI_COMPATIBLE_BASE_URL: url });
    try {
      expect((await textModels(app)).map((m) => m.id)).toContain('lagoon-sim-chat');
    } finally {
      await app.close();
    }
  });
});

describe(catalogId.name, () => {
  it('turns upstream names into catalog ids (no ":" — it starts the chat suffix)', () => {
    expect(catalogId('llama3.2:latest')).toBe('llama3.2');
    expect(catalogId('qwen2.5:7b')).toBe('qwen2.5-7b');
    expect(catalogId('meta-llama/Llama-3.3-70B-Instruct')).toBe('meta-llama/Llama-3.3-70B-Instruct');
    expect(catalogId('hf.co/bartowski/Qwen:Q4_K_M')).toBe('hf.co/bartowski/Qwen-Q4_K_M');
    expect(catalogId(' my model@v2 ')).toBe('my-model-v2');
  });
});
