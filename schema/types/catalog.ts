import { modelRecordSpec } from '../../src/catalog/model-record.ts';
import { MODEL_TYPES, type CatalogModel } from '../../src/catalog/model.ts';
import { NotFoundError } from '../../src/errors.ts';
import { builder, type JsonObject } from '../builder.ts';

export const ModelTypeEnum = builder.enumType('ModelType', {
  values: Object.fromEntries(MODEL_TYPES.map((type) => [type.toUpperCase(), { value: type }])) as Record<
    Uppercase<(typeof MODEL_TYPES)[number]>,
    { value: (typeof MODEL_TYPES)[number] }
  >,
});

export const ModelRef = builder.loadableObject('Model', {
  description:
    'A model of the catalog. `spec` is the REST `model_spec` object (pricing, capabilities, constraints, voices…).',
  load: async (ids: string[], context) =>
    (await context.services.catalog.findModelsByIds(ids)).map(
      (model, i) => model ?? new NotFoundError(`Model ${ids[i]} not found`, 'MODEL_NOT_FOUND'),
    ),
  toKey: (model) => model.id,
  cacheResolved: true,
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.field({ type: ModelTypeEnum, resolve: (model) => model.type }),
    name: t.string({ resolve: (model) => model.spec.name }),
    description: t.string({ resolve: (model) => model.spec.description }),
    ownedBy: t.exposeString('ownedBy'),
    created: t.field({ type: 'DateTime', resolve: (model) => model.created }),
    privacy: t.string({ resolve: (model) => model.privacy }),
    offline: t.exposeBoolean('offline'),
    traits: t.exposeStringList('traits'),
    contextLength: t.int({ nullable: true, resolve: (model) => model.contextLength }),
    pricing: t.field({
      type: 'JSONObject',
      description: 'Prices in USD and DIEM (per 1M tokens, per image, …; see the README).',
      resolve: (model) => model.spec.pricing as JsonObject,
    }),
    capabilities: t.field({
      type: 'JSONObject',
      nullable: true,
      resolve: (model) => (model.spec.capabilities as JsonObject | undefined) ?? null,
    }),
    spec: t.field({ type: 'JSONObject', resolve: (model) => modelRecordSpec(model) as JsonObject }),
  }),
});

const ModelName = builder.simpleObject('ModelName', {
  description: 'A name (trait or foreign model name) and the model it stands for.',
  fields: (t) => ({ name: t.string(), modelId: t.id() }),
});
builder.objectField(ModelName, 'model', (t) => t.field({ type: ModelRef, resolve: (entry) => String(entry.modelId) }));

const toNames = (map: Record<string, string>) => Object.entries(map).map(([name, modelId]) => ({ name, modelId }));

builder.queryFields((t) => ({
  models: t.field({
    type: [ModelRef],
    description: 'Models of one type, or of every type when `type` is omitted. Public.',
    args: { type: t.arg({ type: ModelTypeEnum, required: false }) },
    resolve: (_root, { type }, context): Promise<CatalogModel[]> => context.services.catalog.listModels(type ?? 'all'),
  }),
  model: t.field({
    type: ModelRef,
    args: { id: t.arg.id({ required: true }) },
    errors: { types: [NotFoundError] },
    resolve: (_root, { id }, context) => context.services.catalog.getModel(String(id)),
  }),
  modelTraits: t.field({
    type: [ModelName],
    description: 'Traits (default, fastest, …) usable as model names, and the model each names.',
    args: { type: t.arg({ type: ModelTypeEnum, required: false, defaultValue: 'text' }) },
    resolve: async (_root, { type }, context) => toNames(await context.services.catalog.traits(type ?? 'text')),
  }),
  compatibilityMapping: t.field({
    type: [ModelName],
    description: 'Foreign model names accepted as aliases, and the model each maps to.',
    args: { type: t.arg({ type: ModelTypeEnum, required: false, defaultValue: 'text' }) },
    resolve: async (_root, { type }, context) =>
      toNames(await context.services.catalog.compatibilityMapping(type ?? 'text')),
  }),
}));
