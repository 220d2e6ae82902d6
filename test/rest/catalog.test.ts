import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_TYPES } from '../../src/catalog/model.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';

interface ModelRecord {
  id: string;
  object: string;
  type: string;
  owned_by: string;
  created: number;
  context_length?: number;
  model_spec: {
    name: string;
    description: string;
    privacy: string;
    offline: boolean;
    traits: string[];
    pricing: Record<string, { usd: number; diem: number }>;
    availableContextTokens?: number;
    capabilities?: Record<string, unknown>;
  };
}

const OPERATOR_CONFIG = `
providers:
  - id: upstream
    type: openai-compatible
    baseUrl: http://127.0.0.1:9/v1
  - id: acme-gpu
    type: openai-compatible
    baseUrl: http://127.0.0.1:9/v1
    ownedBy: acme-cloud
models:
  - id: acme/llama-70b
    type: text
    name: Acme Llama 70B
    provider: upstream
    upstreamModel: meta-llama/Llama-3.3-70B-Instruct
    contextLength: 131072
    traits: [smart]
    pricing: { input: { usd: 0.7 }, output: { usd: 2.8, diem: 2.5 } }
  - id: acme/coder
    type: text
    name: Acme Coder
    provider: acme-gpu
    capabilities: { optimizedForCode: true }
    pricing: { input: { usd: 1 }, output: { usd: 2 } }
  - id: acme/clips
    type: video
    name: Acme Clips
    provider: acme-gpu
    ownedBy: acme-video
    pricing: { per_second: { usd: 0.1 } }
compatibilityMappings:
  text: { gpt-5: acme/llama-70b }
characters:
  - { slug: acme-helper, name: Acme Helper, description: Helps with Acme, tags: [acme, support], modelId: acme/llama-70b, systemPrompt: You help. }
`;

describe(`REST catalog and characters (${testDatabaseKind})`, () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lagoon-config-'));
    writeFileSync(join(dir, 'operator.yaml'), OPERATOR_CONFIG);
    t = await createTestApp({ LAGOON_CONFIG: join(dir, 'operator.yaml') });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const getJson = async <T>(path: string, key: string | null = null) => {
    const response = await t.call(path, { key });
    return { status: response.status, body: (await response.json()) as T };
  };

  it('should list text models by default, publicly, in the contract shape', async () => {
    const { status, body } = await getJson<{ object: string; type: string; data: ModelRecord[] }>('/api/v1/models');
    expect(status).toBe(200);
    expect(body).toMatchObject({ object: 'list', type: 'text' });
    expect(body.data.map((m) => m.id)).toEqual([
      'lagoon-sim-chat',
      'lagoon-sim-reasoner',
      'lagoon-sim-omni',
      'acme/llama-70b',
      'acme/coder',
    ]);
    for (const model of body.data) {
      expect(model).toMatchObject({
        object: 'model',
        type: 'text',
        owned_by: expect.any(String),
        created: expect.any(Number),
        context_length: expect.any(Number),
      });
      expect(Number.isInteger(model.created)).toBe(true);
      expect(model.model_spec).toMatchObject({
        name: expect.any(String),
        description: expect.any(String),
        offline: false,
        traits: expect.any(Array),
        availableContextTokens: model.context_length,
      });
      expect(model.model_spec.pricing.input).toEqual({ usd: expect.any(Number), diem: expect.any(Number) });
      expect(model.model_spec.capabilities).toHaveProperty('supportsFunctionCalling');
    }
    expect(body.data[3]?.model_spec.pricing).toEqual({
      input: { usd: 0.7, diem: 0.7 },
      output: { usd: 2.8, diem: 2.5 },
    });
    expect(body.data[3]?.model_spec.description).toBe('');
  });

  it('should filter by type, list every type with all, and refuse an unknown type', async () => {
    const image = await getJson<{ type: string; data: ModelRecord[] }>('/api/v1/models?type=image');
    expect(image.body.type).toBe('image');
    expect(image.body.data.length).toBeGreaterThan(0);
    expect(image.body.data.every((m) => m.type === 'image')).toBe(true);
    const all = await getJson<{ type: string; data: ModelRecord[] }>('/api/v1/models?type=all');
    expect(all.body.type).toBe('all');
    for (const type of ['text', 'image', 'tts', 'music', 'video', 'embedding'])
      expect(
        all.body.data.some((m) => m.type === type),
        type,
      ).toBe(true);
    expect(new Set(all.body.data.map((m) => m.type)).size).toBe(MODEL_TYPES.length);
    const bad = await getJson<{ code: string; issues: { path: string[] }[] }>('/api/v1/models?type=bogus');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'INVALID_REQUEST', issues: [{ path: ['type'] }] });
  });

  it('should accept every type the listing accepts: code lists the text models optimised for code', async () => {
    for (const type of [...MODEL_TYPES, 'all', 'code']) {
      const response = await getJson<{ object: string; type: string }>(`/api/v1/models?type=${type}`);
      expect(response.status, type).toBe(200);
      expect(response.body).toMatchObject({ object: 'list', type });
    }
    const code = await getJson<{ type: string; data: ModelRecord[] }>('/api/v1/models?type=code');
    expect(code.body.data.map((m) => m.id)).toEqual(['acme/coder']);
    expect(code.body.data[0]).toMatchObject({ type: 'text', model_spec: { capabilities: { optimizedForCode: true } } });
  });

  it('should carry the per-type fields of the record, configured or defaulted', async () => {
    const all = new Map(
      (await getJson<{ data: ModelRecord[] }>('/api/v1/models?type=all')).body.data.map((m) => [
        m.id,
        m.model_spec as Record<string, unknown>,
      ]),
    );
    const capabilityKeys = [
      'optimizedForCode',
      'quantization',
      'supportsFunctionCalling',
      'supportsAudioInput',
      'supportsReasoning',
      'supportsReasoningEffort',
      'supportsResponseSchema',
      'supportsMultipleImages',
      'supportsVision',
      'supportsVideoInput',
      'supportsWebSearch',
      'supportsLogProbs',
      'supportsTeeAttestation',
      'supportsE2EE',
      'supportsXSearch',
    ];
    for (const id of ['lagoon-sim-chat', 'acme/llama-70b', 'acme/coder']) {
      expect(Object.keys(all.get(id)!.capabilities as object), id).toEqual(expect.arrayContaining(capabilityKeys));
      expect(all.get(id)!.constraints, id).toMatchObject({
        temperature: { default: expect.any(Number) },
        top_p: { default: expect.any(Number) },
      });
    }
    expect(all.get('lagoon-sim-chat')!.constraints).toEqual({ temperature: { default: 0.7 }, top_p: { default: 0.9 } });
    expect(all.get('acme/coder')!.constraints).toEqual({ temperature: { default: 1 }, top_p: { default: 1 } });
    expect(all.get('lagoon-sim-embedding')).toMatchObject({
      embeddingDimensions: 1024,
      maxInputTokens: 8192,
      supportsCustomDimensions: true,
    });
    expect(all.get('lagoon-sim-image')).toMatchObject({
      supportsStyleReferences: false,
      constraints: { promptCharacterLimit: 7500, steps: { default: 8, max: 30 }, widthHeightDivisor: 8 },
    });
    expect(all.get('lagoon-sim-edit')!.constraints).toMatchObject({
      aspectRatios: expect.arrayContaining(['auto']),
      promptCharacterLimit: 32768,
      combineImages: true,
      maxInputImages: 3,
    });
    expect(all.get('lagoon-sim-video')!.constraints).toEqual({
      aspect_ratios: ['16:9', '9:16', '1:1'],
      resolutions: ['480p', '720p'],
      durations: ['5s', '10s'],
      model_type: 'text-to-video',
      audio: true,
      audio_configurable: true,
      prompt_character_limit: 2500,
    });
    // A video model configured without constraints still has every field a client reads before calling.
    expect(all.get('acme/clips')!.constraints).toEqual({
      aspect_ratios: [],
      resolutions: [],
      durations: [],
      model_type: 'text-to-video',
      audio: false,
      audio_configurable: false,
    });
    expect(all.get('lagoon-sim-speech')).toMatchObject({
      voices: expect.any(Array),
      supports_custom_voice_id: true,
      supported_formats: expect.arrayContaining(['mp3']),
      default_format: 'mp3',
    });
    expect(all.get('lagoon-sim-music')).toMatchObject({
      supports_lyrics: true,
      lyrics_required: false,
      supports_force_instrumental: true,
      supports_loop: false,
      supports_custom_voice_id: false,
      supports_language_code: false,
      supports_speed: false,
      duration_options: [30, 60, 120],
      min_duration: 5,
      max_duration: 120,
      default_duration: 30,
      supported_formats: ['mp3', 'wav'],
      default_format: 'mp3',
      prompt_character_limit: 1000,
      min_prompt_length: 1,
      lyrics_character_limit: 3000,
    });
    for (const [id, spec] of all) expect(spec.uncensored, id).toBeUndefined(); // present only when true
  });

  it('should take owned_by from the model, else its provider, else lagoon', async () => {
    const all = new Map(
      (await getJson<{ data: ModelRecord[] }>('/api/v1/models?type=all')).body.data.map((m) => [m.id, m.owned_by]),
    );
    expect(all.get('acme/coder')).toBe('acme-cloud');
    expect(all.get('acme/clips')).toBe('acme-video');
    expect(all.get('acme/llama-70b')).toBe('lagoon');
    expect(all.get('lagoon-sim-chat')).toBe('lagoon');
  });

  it('should get one model by id, also ids with a slash, and 404 an unknown one', async () => {
    expect((await getJson<ModelRecord>('/api/v1/models/lagoon-sim-image')).body).toMatchObject({
      id: 'lagoon-sim-image',
      type: 'image',
      object: 'model',
    });
    expect((await getJson<ModelRecord>('/api/v1/models/acme/llama-70b')).body).toMatchObject({
      id: 'acme/llama-70b',
      context_length: 131072,
    });
    expect((await getJson<ModelRecord>('/api/v1/models/acme%2Fllama-70b')).body.id).toBe('acme/llama-70b');
    const missing = await getJson('/api/v1/models/nope');
    expect(missing).toEqual({ status: 404, body: { error: 'Model nope not found', code: 'MODEL_NOT_FOUND' } });
  });

  it('should map traits and compatibility names to model ids', async () => {
    expect((await getJson('/api/v1/models/traits')).body).toEqual({
      object: 'list',
      type: 'text',
      data: {
        default: 'lagoon-sim-chat',
        fastest: 'lagoon-sim-chat',
        default_reasoning: 'lagoon-sim-reasoner',
        smart: 'acme/llama-70b',
      },
    });
    const mapping = await getJson<{ data: Record<string, string> }>('/api/v1/models/compatibility_mapping?type=text');
    expect(mapping.body.data).toMatchObject({ 'gpt-5': 'acme/llama-70b', 'gpt-4o': 'lagoon-sim-chat' });
    expect((await getJson<{ type: string }>('/api/v1/models/traits?type=image')).body.type).toBe('image');
    expect((await getJson('/api/v1/models/traits?type=all')).status).toBe(400);
  });

  it('should list and get characters for key holders, with filters', async () => {
    // No credentials on a route a wallet may use: the x402 discovery 402 (docs/api.md#wallet-callers-x402).
    expect((await getJson('/api/v1/characters')).status).toBe(402);
    const list = await getJson<{
      object: string;
      data: { slug: string; tags: string[]; stats: Record<string, number> }[];
    }>('/api/v1/characters', undefined);
    expect(list.status).toBe(402);
    const all = await t.call('/api/v1/characters');
    const body = (await all.json()) as {
      object: string;
      data: { slug: string; modelId: string; stats: Record<string, number>; createdAt: string }[];
    };
    expect(body.object).toBe('list');
    expect(body.data.map((c) => c.slug)).toEqual(
      expect.arrayContaining(['lagoon-guide', 'pirate-storyteller', 'acme-helper']),
    );
    expect(body.data[0]).toMatchObject({
      id: expect.any(String),
      adult: false,
      stats: { averageRating: 0, imports: 0, ratingCount: 0, ratingSum: 0, userRating: 0 },
      createdAt: expect.any(String),
      webEnabled: false,
    });
    const tagged = (await (await t.call('/api/v1/characters?tags=support&sortBy=mostRecent')).json()) as {
      data: { slug: string }[];
    };
    expect(tagged.data.map((c) => c.slug)).toEqual(['acme-helper']);
    const searched = (await (await t.call('/api/v1/characters?search=PIRATE')).json()) as { data: { slug: string }[] };
    expect(searched.data.map((c) => c.slug)).toEqual(['pirate-storyteller']);
    const badLimit = await t.call('/api/v1/characters?limit=500');
    expect(badLimit.status).toBe(400);
    expect(await badLimit.json()).toMatchObject({ code: 'INVALID_REQUEST', issues: [{ path: ['limit'] }] });
    const one = await t.call('/api/v1/characters/acme-helper');
    expect(await one.json()).toMatchObject({
      object: 'character',
      data: { slug: 'acme-helper', name: 'Acme Helper', modelId: 'acme/llama-70b', tags: ['acme', 'support'] },
    });
    const missing = await t.call('/api/v1/characters/nobody');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'Character nobody not found', code: 'CHARACTER_NOT_FOUND' });
  });

  it('should serve the same catalog through GraphQL, with the character model loaded', async () => {
    const rest = (await (await t.call('/api/v1/models?type=all')).json()) as { data: ModelRecord[] };
    const gql = await t.graphql<{
      models: {
        id: string;
        type: string;
        ownedBy: string;
        pricing: unknown;
        spec: unknown;
        contextLength: number | null;
      }[];
      modelTraits: { name: string; model: { id: string } }[];
      character: { data: { slug: string; model: { id: string; name: string } } };
    }>(
      `{ models { id type ownedBy pricing spec contextLength } modelTraits(type: TEXT) { name model { id } } character(slug: "acme-helper") { ... on QueryCharacterSuccess { data { slug model { id name } } } } }`,
    );
    expect(gql.errors).toBeUndefined();
    expect(gql.data?.models.map((m) => m.id)).toEqual(rest.data.map((m) => m.id));
    expect(gql.data?.models.map((m) => m.type.toLowerCase())).toEqual(rest.data.map((m) => m.type));
    expect(gql.data?.models.map((m) => m.pricing)).toEqual(rest.data.map((m) => m.model_spec.pricing));
    expect(gql.data?.models.map((m) => m.spec)).toEqual(rest.data.map((m) => m.model_spec));
    expect(gql.data?.models.map((m) => m.ownedBy)).toEqual(rest.data.map((m) => m.owned_by));
    expect(gql.data?.modelTraits).toContainEqual({ name: 'smart', model: { id: 'acme/llama-70b' } });
    expect(gql.data?.character.data).toEqual({
      slug: 'acme-helper',
      model: { id: 'acme/llama-70b', name: 'Acme Llama 70B' },
    });
    const missing = await t.graphql<{ model: { __typename: string; code: string } }>(
      '{ model(id: "nope") { __typename ... on Error { code } } }',
    );
    expect(missing.data?.model).toEqual({ __typename: 'NotFoundError', code: 'MODEL_NOT_FOUND' });
    const anonymousCharacters = await t.graphql('{ characters { id } }', {}, null);
    expect(anonymousCharacters.errors?.[0]?.extensions?.code).toBe('AUTHENTICATION_FAILED');
    const filtered = await t.graphql<{ characters: { slug: string }[] }>(
      '{ characters(filter: { tags: ["support"], limit: 5 }) { slug } }',
    );
    expect(filtered.data?.characters).toEqual([{ slug: 'acme-helper' }]);
    const invalid = await t.graphql('{ characters(filter: { limit: 1000 }) { slug } }');
    expect(invalid.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_REQUEST', issues: [{ path: ['limit'] }] });
  });
});
