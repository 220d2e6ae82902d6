import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelRecordSpec } from '../../src/catalog/model-record.ts';
import { MODEL_TYPES, modelFromConfig, textPrices } from '../../src/catalog/model.ts';
import { loadOperatorConfig, OperatorConfigError, parseOperatorConfig } from '../../src/operator-config/load.ts';

const textModel = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'text',
  name: `Model ${id}`,
  provider: 'simulator',
  pricing: { input: { usd: 1, diem: 1 }, output: { usd: 2, diem: 2 } },
  ...extra,
});

/** The OperatorConfigError a parse throws (fails the test when it does not throw). */
function configError(raw: unknown, source = 'operator.yaml'): OperatorConfigError {
  try {
    parseOperatorConfig(raw, source);
  } catch (error) {
    if (error instanceof OperatorConfigError) return error;
    throw error;
  }
  throw new Error('expected an OperatorConfigError');
}

describe(parseOperatorConfig.name, () => {
  it('should give a valid built-in config with a simulated model of every type', () => {
    const config = parseOperatorConfig({}, 'defaults');
    expect(config.providers).toEqual([{ id: 'simulator', type: 'simulator' }]);
    expect(new Set(config.models.map((model) => model.type))).toEqual(new Set(MODEL_TYPES));
    expect(config.models.filter((model) => model.type === 'text').map((model) => [model.id, model.traits])).toEqual([
      ['lagoon-sim-chat', ['default', 'fastest']],
      ['lagoon-sim-reasoner', ['default_reasoning']],
      ['lagoon-sim-omni', []],
    ]);
    for (const model of config.models) {
      expect(model.provider).toBe('simulator');
      // Speech is real (eSpeak NG built in), the other built-in models are simulated.
      expect(model.description).toMatch(
        model.type === 'tts' ? /eSpeak NG/ : /built-in deterministic simulator; it is not a real model/,
      );
    }
    const speech = config.models.find((model) => model.type === 'tts');
    expect(speech?.spec).toMatchObject({ default_voice: 'af_sky', voices: expect.arrayContaining(['af_sky']) });
    expect(config.characters.map((character) => [character.slug, character.modelId])).toEqual([
      ['lagoon-guide', 'lagoon-sim-chat'],
      ['pirate-storyteller', 'lagoon-sim-chat'],
    ]);
    expect(config.compatibilityMappings.text).toMatchObject({
      'gpt-4o': 'lagoon-sim-chat',
      'gpt-4o-mini': 'lagoon-sim-chat',
    });
    expect(config.compatibilityMappings.image).toMatchObject({ 'dall-e-3': 'lagoon-sim-image' });
  });

  it('should turn decimal prices into exact atto-units', () => {
    const chat = parseOperatorConfig({}, 'defaults').models.find((model) => model.id === 'lagoon-sim-chat')!;
    const prices = textPrices({ ...modelFromConfig(chat), created: new Date(0) });
    expect(prices.input).toEqual({ usd: 500_000_000_000_000_000n, diem: 500_000_000_000_000_000n });
    expect(prices.output.usd).toBe(2_000_000_000_000_000_000n);
    expect(prices.cacheInput?.usd).toBe(125_000_000_000_000_000n);
  });

  it('should replace a built-in entry in place and append new ones', () => {
    const config = parseOperatorConfig(
      { models: [textModel('my-model'), textModel('lagoon-sim-chat', { name: 'Replaced' })] },
      'op.yaml',
    );
    const ids = config.models.map((model) => model.id);
    expect(ids[0]).toBe('lagoon-sim-chat');
    expect(config.models[0]?.name).toBe('Replaced');
    expect(ids.at(-1)).toBe('my-model');
    expect(ids.filter((id) => id === 'lagoon-sim-chat')).toHaveLength(1);
  });

  it('should fill defaults: owner, privacy, diem price, upstream model', () => {
    const config = parseOperatorConfig(
      { models: [textModel('x', { pricing: { input: { usd: 0.1 }, output: { usd: 0.3 } } })] },
      'op.yaml',
    );
    const model = modelFromConfig(config.models.at(-1)!);
    expect(model).toMatchObject({
      ownedBy: 'lagoon',
      privacy: 'private',
      offline: false,
      created: null,
      contextLength: 32_768,
    });
    expect(model.spec.pricing).toEqual({ input: { usd: 0.1, diem: 0.1 }, output: { usd: 0.3, diem: 0.3 } });
    expect(model.providers).toEqual([{ providerId: 'simulator', upstreamModel: 'x' }]);
  });

  it('should remove built-in entries marked disabled', () => {
    const config = parseOperatorConfig(
      {
        models: [{ id: 'lagoon-sim-video', disabled: true }],
        characters: [{ slug: 'pirate-storyteller', disabled: true }],
      },
      'op.yaml',
    );
    expect(config.models.map((model) => model.id)).not.toContain('lagoon-sim-video');
    expect(config.characters.map((character) => character.slug)).toEqual(['lagoon-guide']);
  });

  it('should drop built-in mappings and characters that point at a disabled built-in model', () => {
    const config = parseOperatorConfig({ models: [{ id: 'lagoon-sim-chat', disabled: true }] }, 'op.yaml');
    expect(config.characters).toEqual([]);
    expect(config.compatibilityMappings.text).toEqual({ 'o3-mini': 'lagoon-sim-reasoner' });
  });

  it('should keep only the operator models but still offer the simulator with replaceDefaults', () => {
    const config = parseOperatorConfig({ replaceDefaults: true, models: [textModel('only-model')] }, 'op.yaml');
    expect(config.models.map((model) => model.id)).toEqual(['only-model']);
    expect(config.characters).toEqual([]);
    expect(config.compatibilityMappings).toEqual({});
    expect(config.providers.map((provider) => provider.id)).toEqual(['simulator']);
  });

  it('should name the file and the exact path of every bad value', () => {
    const error = configError(
      {
        models: [
          textModel('a'),
          textModel('b'),
          textModel('c', { pricing: { input: { usd: '0.5', diem: 0.5 }, output: { usd: 2, diem: 2 } } }),
          { ...textModel('d'), contextLenght: 10 },
        ],
        compatibilityMappings: { text: { 'bad:name': 'a' } },
      },
      '/etc/lagoon/operator.yaml',
    );
    expect(error.message).toMatch(/^Invalid operator config \/etc\/lagoon\/operator\.yaml:/);
    expect(error.message).toContain('models[2].pricing.input.usd: Invalid input: expected number, received string');
    expect(error.message).toContain('models[3]: Unrecognized key: "contextLenght"');
    expect(error.issues.map((issue) => issue.path)).toContain('compatibilityMappings.text["bad:name"]');
  });

  it('should reject a price that is not exact to 18 decimal places', () => {
    const error = configError({ models: [textModel('a', { pricing: { input: { usd: 1e-19 }, output: { usd: 1 } } })] });
    expect(error.issues).toEqual([
      { path: 'models[0].pricing.input.usd', message: 'must be a decimal with at most 18 decimal places' },
    ]);
  });

  it('should reject a reference to an unknown provider', () => {
    const error = configError({ models: [textModel('a', { provider: undefined, providers: ['simulator', 'vllm'] })] });
    expect(error.issues).toEqual([
      { path: 'models[0].providers[1]', message: 'unknown provider "vllm" (configured: simulator)' },
    ]);
  });

  it('should reject a model with both or neither provider forms, and a provider without its base URL', () => {
    const error = configError({
      providers: [{ id: 'vllm', type: 'openai-compatible' }],
      models: [textModel('a', { providers: ['simulator'] }), textModel('b', { provider: undefined })],
    });
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'providers[0].baseUrl',
      'models[0].provider',
      'models[1].provider',
    ]);
  });

  it('should reject a compatibility mapping to an unknown model or a model of another type', () => {
    const error = configError({
      compatibilityMappings: { text: { 'gpt-5': 'nope' }, image: { 'dall-e-3': 'lagoon-sim-chat' } },
    });
    expect(error.issues).toEqual([
      { path: 'compatibilityMappings.text["gpt-5"]', message: 'unknown or disabled model "nope"' },
      {
        path: 'compatibilityMappings.image["dall-e-3"]',
        message: 'model "lagoon-sim-chat" has type text, expected image',
      },
    ]);
  });

  it('should remove a built-in mapping set to null', () => {
    const config = parseOperatorConfig({ compatibilityMappings: { image: { 'dall-e-2': null } } }, 'op.yaml');
    expect(config.compatibilityMappings.image).toEqual({ 'dall-e-3': 'lagoon-sim-image' });
  });

  it('should reject a character whose model is unknown, disabled or not a text model', () => {
    const character = { slug: 'x', name: 'X', systemPrompt: 'Be X.' };
    const error = configError({
      models: [{ id: 'lagoon-sim-reasoner', disabled: true }],
      characters: [
        { ...character, modelId: 'lagoon-sim-reasoner' },
        { ...character, slug: 'y', modelId: 'lagoon-sim-image' },
      ],
    });
    expect(error.issues).toEqual([
      { path: 'characters[0].modelId', message: 'unknown or disabled model "lagoon-sim-reasoner"' },
      { path: 'characters[1].modelId', message: 'model "lagoon-sim-image" has type image, expected text' },
    ]);
  });

  it('should reject duplicate ids and a trait used twice in a type, but let an operator trait take over a built-in one', () => {
    expect(configError({ models: [textModel('a'), textModel('b'), textModel('a')] }).issues).toEqual([
      { path: 'models[2].id', message: 'duplicate id "a" (also models[0])' },
    ]);
    expect(
      configError({ models: [textModel('a', { traits: ['default'] }), textModel('b', { traits: ['default'] })] })
        .issues,
    ).toEqual([
      {
        path: 'models[1].traits',
        message: 'trait "default" already names text model "a"; a trait names one model per type',
      },
    ]);
    const config = parseOperatorConfig({ models: [textModel('mine', { traits: ['default'] })] }, 'op.yaml');
    expect(config.models.find((model) => model.id === 'lagoon-sim-chat')?.traits).toEqual(['fastest']);
  });

  it('should reject disabling an id that is not built in', () => {
    expect(configError({ models: [{ id: 'nope', disabled: true }] }).issues).toEqual([
      { path: 'models[0].id', message: 'nothing to disable: no built-in model "nope"' },
    ]);
  });

  it('should build model_spec records shaped like the reference catalog', async () => {
    const fixture = JSON.parse(
      await readFile(new URL('../fixtures/reference-models.json', import.meta.url), 'utf8'),
    ) as {
      id: string;
      type: string;
      model_spec: Record<string, unknown> & { name: string; privacy: string; traits: string[]; pricing: unknown };
    }[];
    const models = fixture.map(
      ({
        id,
        type,
        model_spec: { name, privacy, traits, pricing, availableContextTokens, capabilities, constraints, ...spec },
      }) => ({
        id,
        type,
        name,
        privacy,
        traits,
        pricing,
        provider: 'simulator',
        ...(availableContextTokens !== undefined && { contextLength: availableContextTokens }),
        ...(capabilities !== undefined && { capabilities }),
        ...(constraints !== undefined && { constraints }),
        ...(Object.keys(spec).length > 0 && { spec }),
      }),
    );
    const config = parseOperatorConfig({ replaceDefaults: true, models }, 'fixture');
    expect(new Set(fixture.map((model) => model.type))).toEqual(
      new Set(['text', 'image', 'tts', 'music', 'video', 'inpaint', 'embedding']),
    );
    config.models.forEach((model, index) => {
      expect(modelFromConfig(model).spec).toMatchObject(fixture[index]!.model_spec);
      // The listing's record keeps every configured field (defaults fill only what is missing).
      expect(modelRecordSpec(modelFromConfig(model))).toMatchObject(fixture[index]!.model_spec);
    });
  });
});

describe(loadOperatorConfig.name, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lagoon-operator-config-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('should return the built-in config without a file', async () => {
    expect(await loadOperatorConfig()).toEqual(parseOperatorConfig({}, 'defaults'));
  });

  it('should read a YAML file', async () => {
    const path = join(dir, 'operator.yaml');
    await writeFile(
      path,
      [
        'providers:',
        '  - id: vllm',
        '    type: openai-compatible',
        '    baseUrl: http://127.0.0.1:8000/v1',
        '    timeoutMs: 60000',
        'models:',
        '  - id: llama-3.3-70b',
        '    type: text',
        '    name: Llama 3.3 70B',
        '    created: 2025-01-15',
        '    contextLength: 131072',
        '    traits: [default]',
        '    providers: [vllm, { id: simulator, upstreamModel: lagoon-sim-chat }]',
        '    upstreamModel: meta-llama/Llama-3.3-70B-Instruct',
        '    pricing:',
        '      input: { usd: 0.7, diem: 0.7 }',
        '      output: { usd: 2.8, diem: 2.8 }',
        'compatibilityMappings:',
        '  text:',
        '    gpt-4o: llama-3.3-70b',
      ].join('\n'),
    );
    const config = await loadOperatorConfig(path);
    const model = modelFromConfig(config.models.find((m) => m.id === 'llama-3.3-70b')!);
    expect(model).toMatchObject({
      created: new Date('2025-01-15T00:00:00Z'),
      contextLength: 131_072,
      traits: ['default'],
    });
    expect(model.providers).toEqual([
      { providerId: 'vllm', upstreamModel: 'meta-llama/Llama-3.3-70B-Instruct' },
      { providerId: 'simulator', upstreamModel: 'lagoon-sim-chat' },
    ]);
    expect(config.compatibilityMappings.text?.['gpt-4o']).toBe('llama-3.3-70b');
    expect(config.providers.map((provider) => provider.id)).toEqual(['simulator', 'vllm']);
  });

  it('should read a JSON file', async () => {
    const path = join(dir, 'operator.json');
    await writeFile(
      path,
      JSON.stringify({ replaceDefaults: true, models: [textModel('json-model', { created: 1_700_000_000 })] }),
    );
    const config = await loadOperatorConfig(path);
    expect(config.models.map((model) => [model.id, model.created])).toEqual([
      ['json-model', new Date(1_700_000_000_000)],
    ]);
  });

  it('should name the file when it cannot be parsed, read or recognised', async () => {
    const broken = join(dir, 'broken.yml');
    await writeFile(broken, 'models:\n  - id: [unclosed\n');
    await expect(loadOperatorConfig(broken)).rejects.toThrow(`Invalid operator config ${broken}:`);
    await expect(loadOperatorConfig(join(dir, 'missing.yaml'))).rejects.toThrow(/cannot read the file/);
    await expect(loadOperatorConfig(join(dir, 'operator.toml'))).rejects.toThrow(/unsupported file extension/);
  });

  it('should report a bad value in a file with its path', async () => {
    const path = join(dir, 'bad.yaml');
    await writeFile(
      path,
      'models:\n  - id: x\n    type: text\n    name: X\n    provider: simulator\n    pricing:\n      input: { usd: "1" }\n      output: { usd: 1 }\n',
    );
    await expect(loadOperatorConfig(path)).rejects.toThrow(
      `Invalid operator config ${path}:\n  models[0].pricing.input.usd: Invalid input: expected number, received string`,
    );
  });
});
