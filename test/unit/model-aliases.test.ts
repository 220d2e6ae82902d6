import { describe, expect, it } from 'vitest';
import { modelFromConfig } from '../../src/catalog/model.ts';
import { OperatorConfigError, parseOperatorConfig } from '../../src/operator-config/load.ts';

const PROVIDERS = [
  { id: 'vllm', type: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', ownedBy: 'acme' },
  { id: 'backup', type: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' },
];
const TARGET = {
  id: 'acme/llama',
  type: 'text',
  name: 'Acme Llama',
  description: 'The target',
  created: '2025-01-15',
  traits: ['smart'],
  contextLength: 131_072,
  capabilities: { supportsFunctionCalling: true, supportsVision: true },
  constraints: { temperature: { default: 0.7 } },
  spec: { maxCompletionTokens: 8192 },
  providers: ['vllm', { id: 'backup', upstreamModel: 'llama-b' }],
  upstreamModel: 'meta-llama/Llama-3.3-70B-Instruct',
  pricing: { input: { usd: 0.7 }, output: { usd: 2.8 } },
};

const modelsOf = (models: unknown[]) => parseOperatorConfig({ providers: PROVIDERS, models }, 'operator.yaml').models;
function issuesOf(models: unknown[]): string[] {
  try {
    modelsOf(models);
  } catch (error) {
    if (error instanceof OperatorConfigError) return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
    throw error;
  }
  throw new Error('expected an OperatorConfigError');
}

describe('model aliases in the operator file', () => {
  it("should inherit the target's engine, record and prices, but not its traits", () => {
    const models = modelsOf([TARGET, { id: 'gpt-4o', aliasOf: 'acme/llama' }]);
    const alias = models.find((model) => model.id === 'gpt-4o')!;
    const target = models.find((model) => model.id === 'acme/llama')!;
    expect(modelFromConfig(alias).providers).toEqual([
      { providerId: 'vllm', upstreamModel: 'meta-llama/Llama-3.3-70B-Instruct' },
      { providerId: 'backup', upstreamModel: 'llama-b' },
    ]);
    expect(alias).toMatchObject({ type: 'text', ownedBy: 'acme', traits: [], created: target.created });
    const { traits: _traits, ...spec } = modelFromConfig(target).spec;
    expect(modelFromConfig(alias).spec).toEqual({ ...spec, traits: [] });
  });

  it('should let the alias override record fields; capabilities, constraints and spec key by key', () => {
    const alias = modelsOf([
      TARGET,
      {
        id: 'gpt-4o',
        aliasOf: 'acme/llama',
        type: 'text',
        name: 'GPT-4o',
        description: 'Under the original name',
        ownedBy: 'openai',
        created: 1_700_000_000,
        traits: ['default'],
        contextLength: 8192,
        capabilities: { supportsVision: false },
        constraints: { top_p: { default: 0.9 } },
        spec: { beta: true },
        pricing: { input: { usd: 1 }, output: { usd: 3 } },
      },
    ]).find((model) => model.id === 'gpt-4o');
    expect(alias).toMatchObject({
      name: 'GPT-4o',
      description: 'Under the original name',
      ownedBy: 'openai',
      created: new Date(1_700_000_000_000),
      traits: ['default'],
      contextLength: 8192,
      capabilities: { supportsFunctionCalling: true, supportsVision: false },
      constraints: { temperature: { default: 0.7 }, top_p: { default: 0.9 } },
      spec: { maxCompletionTokens: 8192, beta: true },
      pricing: { input: { usd: 1, diem: 1 }, output: { usd: 3, diem: 3 } },
    });
  });

  it('should resolve an alias of an alias to the final engine, with the middle one’s record', () => {
    const models = modelsOf([
      { id: 'b', aliasOf: 'a', name: 'Middle' },
      TARGET,
      { id: 'a', aliasOf: 'acme/llama', description: 'First hop' },
    ]);
    const b = models.find((model) => model.id === 'b')!;
    expect(b).toMatchObject({ name: 'Middle', description: 'First hop', traits: [] });
    expect(modelFromConfig(b).providers[0]).toEqual({
      providerId: 'vllm',
      upstreamModel: 'meta-llama/Llama-3.3-70B-Instruct',
    });
  });

  it('should alias built-in models and keep compatibility mappings and characters working', () => {
    const config = parseOperatorConfig(
      {
        models: [{ id: 'my-chat', aliasOf: 'lagoon-sim-chat' }],
        compatibilityMappings: { text: { 'gpt-5': 'my-chat' } },
        characters: [{ slug: 'helper', name: 'Helper', modelId: 'my-chat', systemPrompt: 'Help.' }],
      },
      'operator.yaml',
    );
    expect(config.models.find((model) => model.id === 'my-chat')).toMatchObject({
      providers: [{ id: 'simulator', upstreamModel: 'lagoon-sim-chat' }],
      traits: [],
    });
    expect(config.compatibilityMappings.text).toMatchObject({ 'gpt-4o': 'lagoon-sim-chat', 'gpt-5': 'my-chat' });
    expect(config.characters.find((character) => character.slug === 'helper')?.modelId).toBe('my-chat');
  });

  it('should refuse a missing or disabled target, a cycle, a type mismatch and engine fields', () => {
    expect(issuesOf([{ id: 'x', aliasOf: 'nowhere' }])).toEqual([
      'models[0].aliasOf: unknown or disabled model "nowhere"',
    ]);
    expect(
      issuesOf([
        { id: 'lagoon-sim-chat', disabled: true },
        { id: 'x', aliasOf: 'lagoon-sim-chat' },
      ]),
    ).toEqual(['models[1].aliasOf: unknown or disabled model "lagoon-sim-chat"']);
    expect(
      issuesOf([
        { id: 'a', aliasOf: 'b' },
        { id: 'b', aliasOf: 'c' },
        { id: 'c', aliasOf: 'a' },
      ]),
    ).toEqual(['models[0].aliasOf: alias cycle: a → b → c → a']);
    expect(issuesOf([{ id: 'self', aliasOf: 'self' }])).toEqual(['models[0].aliasOf: alias cycle: self → self']);
    expect(issuesOf([{ id: 'x', aliasOf: 'lagoon-sim-chat', type: 'image' }])).toEqual([
      'models[0].type: alias "x" is image but its target "lagoon-sim-chat" is a text model',
    ]);
    expect(issuesOf([{ id: 'x', aliasOf: 'lagoon-sim-chat', provider: 'simulator' }])).toEqual([
      'models[0]: Unrecognized key: "provider"',
    ]);
    expect(issuesOf([{ id: 'x', aliasOf: 'lagoon-sim-image', capabilities: { supportsVision: true } }])).toEqual([
      'models[0]: Unrecognized key: "capabilities"',
    ]);
    expect(issuesOf([{ id: 'x', aliasOf: 'lagoon-sim-chat', pricing: { input: { usd: 'free' } } }])).toContain(
      'models[0].pricing.input.usd: Invalid input: expected number, received string',
    );
  });

  it('should refuse an alias taking a trait another model of the file has, and take it from a built-in', () => {
    expect(issuesOf([TARGET, { id: 'x', aliasOf: 'acme/llama', traits: ['smart'] }])).toEqual([
      'models[1].traits: trait "smart" already names text model "acme/llama"; a trait names one model per type',
    ]);
    const models = modelsOf([{ id: 'x', aliasOf: 'lagoon-sim-chat', traits: ['fastest'] }]);
    const fastest = models.filter((model) => model.type === 'text' && model.traits.includes('fastest'));
    expect(fastest.map((model) => model.id)).toEqual(['x']);
  });
});
