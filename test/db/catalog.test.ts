import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogService, ModelListQuery } from '../../src/catalog/catalog.service.ts';
import { buildModelSpec } from '../../src/catalog/model.ts';
import { NotFoundError } from '../../src/errors.ts';
import { parseOperatorConfig } from '../../src/operator-config/load.ts';
import type { OperatorConfig } from '../../src/operator-config/schema.ts';
import { createTestDatabase, testDatabaseKind } from '../helpers/db.ts';

const textModel = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'text',
  name: `Model ${id}`,
  provider: 'simulator',
  pricing: { input: { usd: 1 }, output: { usd: 2 } },
  ...extra,
});
const defaults = (): OperatorConfig => parseOperatorConfig({}, 'defaults');

describe(`${CatalogService.name} (${testDatabaseKind})`, () => {
  let handle: Awaited<ReturnType<typeof createTestDatabase>>;
  let sut: CatalogService;

  beforeAll(async () => {
    handle = await createTestDatabase();
    sut = new CatalogService({ db: handle.db });
  });
  afterAll(async () => handle.drop());

  it('should list text models by default, one type on request and every type in config order with all', async () => {
    await sut.syncFromConfig(defaults());
    expect((await sut.listModels()).map((model) => model.id)).toEqual([
      'lagoon-sim-chat',
      'lagoon-sim-reasoner',
      'lagoon-sim-omni',
    ]);
    expect((await sut.listModels('image')).map((model) => model.id)).toEqual([
      'lagoon-sim-image',
      'lagoon-sim-image-aspect',
      'lagoon-sim-image-tiers',
    ]);
    expect((await sut.listModels('all')).map((model) => model.id)).toEqual(defaults().models.map((model) => model.id));
    expect(ModelListQuery.parse({})).toEqual({ type: 'text' });
    expect(ModelListQuery.safeParse({ type: 'bogus' }).success).toBe(false);
  });

  it('should serve the wire model_spec exactly as configured after a DB round trip', async () => {
    const config = defaults();
    await sut.syncFromConfig(config);
    for (const configured of config.models) {
      const model = await sut.getModel(configured.id);
      expect(model.spec).toEqual(buildModelSpec(configured));
      expect(model).toMatchObject({
        type: configured.type,
        ownedBy: 'lagoon',
        privacy: 'private',
        created: new Date('2026-11-22T00:00:00Z'),
      });
    }
    expect(await sut.getModel('lagoon-sim-chat')).toMatchObject({
      contextLength: 32_768,
      providers: [{ providerId: 'simulator', upstreamModel: 'lagoon-sim-chat' }],
    });
    expect((await sut.getModel('lagoon-sim-image')).contextLength).toBeNull();
  });

  it('should throw MODEL_NOT_FOUND for an unknown model', async () => {
    await sut.syncFromConfig(defaults());
    const error = await sut.getModel('nope').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ code: 'MODEL_NOT_FOUND', message: 'Model nope not found' });
  });

  it('should find models by id in id order with null for unknown ids', async () => {
    await sut.syncFromConfig(defaults());
    const found = await sut.findModelsByIds(['lagoon-sim-video', 'nope', 'lagoon-sim-chat']);
    expect(found.map((model) => model?.id ?? null)).toEqual(['lagoon-sim-video', null, 'lagoon-sim-chat']);
  });

  it('should give traits and compatibility mappings per type', async () => {
    await sut.syncFromConfig(defaults());
    expect(await sut.traits('text')).toEqual({
      default: 'lagoon-sim-chat',
      fastest: 'lagoon-sim-chat',
      default_reasoning: 'lagoon-sim-reasoner',
    });
    expect(await sut.traits('tts')).toEqual({ default: 'lagoon-sim-speech' });
    expect(await sut.compatibilityMapping('image')).toEqual({
      'dall-e-2': 'lagoon-sim-image',
      'dall-e-3': 'lagoon-sim-image',
    });
    expect(await sut.compatibilityMapping('video')).toEqual({});
  });

  it('should resolve a name as a model id first, then a trait, then a compatibility mapping', async () => {
    // "fastest" is both a model id and lagoon-sim-chat's trait; "default" is both a trait and a mapping.
    const config = parseOperatorConfig(
      {
        models: [textModel('fastest')],
        compatibilityMappings: { text: { default: 'fastest', 'gpt-4o': 'lagoon-sim-reasoner' } },
      },
      'op.yaml',
    );
    await sut.syncFromConfig(config);
    const resolve = async (name: string, type: 'text' | 'image' = 'text') => (await sut.resolveModel(name, type))?.id;
    expect(await resolve('lagoon-sim-reasoner')).toBe('lagoon-sim-reasoner');
    expect(await resolve('fastest')).toBe('fastest');
    expect(await resolve('default')).toBe('lagoon-sim-chat');
    expect(await resolve('gpt-4o')).toBe('lagoon-sim-reasoner');
    expect(await resolve('dall-e-3', 'image')).toBe('lagoon-sim-image');
    expect(await resolve('default', 'image')).toBe('lagoon-sim-image');
    expect(await resolve('lagoon-sim-chat', 'image')).toBeUndefined();
    expect(await resolve('nope')).toBeUndefined();
    expect(await resolve('constructor')).toBeUndefined();
  });

  it('should deactivate a model dropped from the config and bring it back when it returns', async () => {
    await sut.syncFromConfig(defaults());
    await sut.syncFromConfig(
      parseOperatorConfig({ models: [{ id: 'lagoon-sim-reasoner', disabled: true }] }, 'op.yaml'),
    );
    expect((await sut.listModels()).map((model) => model.id)).toEqual(['lagoon-sim-chat', 'lagoon-sim-omni']);
    await expect(sut.getModel('lagoon-sim-reasoner')).rejects.toMatchObject({ code: 'MODEL_NOT_FOUND' });
    expect(await sut.findModelsByIds(['lagoon-sim-reasoner'])).toEqual([null]);
    expect(await sut.compatibilityMapping('text')).not.toHaveProperty('o3-mini');
    const row = await handle.db
      .selectFrom('models')
      .select(['active'])
      .where('id', '=', 'lagoon-sim-reasoner')
      .executeTakeFirstOrThrow();
    expect(row.active).toBe(false);

    await sut.syncFromConfig(defaults());
    expect((await sut.listModels()).map((model) => model.id)).toEqual([
      'lagoon-sim-chat',
      'lagoon-sim-reasoner',
      'lagoon-sim-omni',
    ]);
  });

  it('should keep the first-seen creation time of a model without one, and touch updated_at only on change', async () => {
    const config = parseOperatorConfig({ models: [textModel('undated')] }, 'op.yaml');
    await sut.syncFromConfig(config);
    const stamps = () =>
      handle.db
        .selectFrom('models')
        .select(['created_at', 'updated_at'])
        .where('id', '=', 'undated')
        .executeTakeFirstOrThrow();
    const first = await stamps();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await sut.syncFromConfig(config);
    expect(await stamps()).toEqual(first);
    await sut.syncFromConfig(parseOperatorConfig({ models: [textModel('undated', { name: 'Renamed' })] }, 'op.yaml'));
    const renamed = await stamps();
    expect(renamed.created_at).toEqual(first.created_at);
    expect(renamed.updated_at.getTime()).toBeGreaterThan(first.updated_at.getTime());
    expect((await sut.getModel('undated')).spec.name).toBe('Renamed');
  });

  it('should write nothing when the config is unchanged, and write each kind of change', async () => {
    // xmin names the transaction that last wrote a row: an upsert that changes nothing still moves it.
    const versions = async () =>
      (
        await sql<{ id: string; version: string }>`select id, xmin::text as version from models order by id`.execute(
          handle.db,
        )
      ).rows;
    const aliasVersions = async () =>
      (await sql<{ version: string }>`select xmin::text as version from model_aliases`.execute(handle.db)).rows;
    const config = parseOperatorConfig({ models: [textModel('steady-a'), textModel('steady-b')] }, 'op.yaml');
    await sut.syncFromConfig(config);
    const [models, aliases] = [await versions(), await aliasVersions()];
    await sut.syncFromConfig(
      parseOperatorConfig({ models: [textModel('steady-a'), textModel('steady-b')] }, 'op.yaml'),
    );
    expect(await versions()).toEqual(models);
    expect(await aliasVersions()).toEqual(aliases);

    // Order alone, a provider binding alone and a mapping alone are changes.
    const changed = async (file: Record<string, unknown>) => {
      const before = await versions();
      await sut.syncFromConfig(parseOperatorConfig(file, 'op.yaml'));
      return (await versions()).some((row, index) => row.version !== before[index]?.version);
    };
    expect(await changed({ models: [textModel('steady-b'), textModel('steady-a')] })).toBe(true);
    expect((await sut.listModels('all')).map((model) => model.id).slice(-2)).toEqual(['steady-b', 'steady-a']);
    expect(
      await changed({ models: [textModel('steady-b'), textModel('steady-a', { upstreamModel: 'other-name' })] }),
    ).toBe(true);
    const mapped = {
      models: [textModel('steady-b'), textModel('steady-a', { upstreamModel: 'other-name' })],
      compatibilityMappings: { text: { 'gpt-steady': 'steady-a' } },
    };
    await sut.syncFromConfig(parseOperatorConfig(mapped, 'op.yaml'));
    expect(await sut.compatibilityMapping('text')).toMatchObject({ 'gpt-steady': 'steady-a' });
  });

  it('should let another instance read the synced catalog lazily and pick up changes on reload', async () => {
    await sut.syncFromConfig(defaults());
    const other = new CatalogService({ db: handle.db });
    expect((await other.listModels('all')).length).toBe(defaults().models.length);
    await sut.syncFromConfig(parseOperatorConfig({ models: [textModel('added')] }, 'op.yaml'));
    expect((await other.listModels()).map((model) => model.id)).not.toContain('added');
    await other.reload();
    expect((await other.listModels()).map((model) => model.id)).toContain('added');
  });

  it('should serve read-only models so callers cannot corrupt the shared snapshot', async () => {
    await sut.syncFromConfig(defaults());
    const model = await sut.getModel('lagoon-sim-chat');
    expect(() => {
      (model.spec as { name: string }).name = 'mutated';
    }).toThrow(TypeError);
    expect((await sut.getModel('lagoon-sim-chat')).spec.name).toBe('Lagoon Simulator Chat');
  });

  it('should list text models optimised for code with type code', async () => {
    const config = parseOperatorConfig(
      { models: [textModel('coder', { capabilities: { optimizedForCode: true } }), textModel('plain')] },
      'op.yaml',
    );
    await sut.syncFromConfig(config);
    expect(ModelListQuery.parse({ type: 'code' })).toEqual({ type: 'code' });
    expect((await sut.listModels('code')).map((model) => model.id)).toEqual(['coder']);
    expect((await sut.listModels('text')).map((model) => model.id)).toContain('plain');
  });

  it('should keep owned_by from the model, else its primary provider, else lagoon, through the database', async () => {
    const config = parseOperatorConfig(
      {
        providers: [
          { id: 'acme', type: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', ownedBy: 'acme-cloud' },
          { id: 'plain', type: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' },
        ],
        models: [
          textModel('on-acme', { provider: 'acme' }),
          textModel('own-owner', { provider: 'acme', ownedBy: 'someone' }),
          textModel('plain-first', { provider: undefined, providers: ['plain', 'acme'] }),
        ],
      },
      'op.yaml',
    );
    await sut.syncFromConfig(config);
    const owners = Object.fromEntries((await sut.listModels('text')).map((model) => [model.id, model.ownedBy]));
    expect(owners).toMatchObject({
      'on-acme': 'acme-cloud',
      'own-owner': 'someone',
      'plain-first': 'lagoon',
      'lagoon-sim-chat': 'lagoon',
    });
  });

  it('should survive concurrent syncs from several processes', async () => {
    const others = Array.from({ length: 4 }, () => new CatalogService({ db: handle.db }));
    await Promise.all(others.map((service) => service.syncFromConfig(defaults())));
    expect(await sut.compatibilityMapping('tts')).toEqual({
      'tts-1': 'lagoon-sim-speech',
      'tts-1-hd': 'lagoon-sim-speech',
    });
  });
});
