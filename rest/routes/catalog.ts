import { z } from 'zod';
import { ModelListQuery, ModelTypeQuery } from '../../src/catalog/catalog.service.ts';
import { modelRecordSpec } from '../../src/catalog/model-record.ts';
import { MODEL_TYPES, type CatalogModel, type ModelType } from '../../src/catalog/model.ts';
import { json, parseQuery, type JsonValue } from '../http.ts';
import type { Route, RouteContext } from '../router.ts';

/** The public model record (as the original service lists it). */
export function modelWire(model: CatalogModel): { [field: string]: JsonValue } {
  return {
    id: model.id,
    object: 'model',
    type: model.type,
    owned_by: model.ownedBy,
    created: Math.floor(model.created.getTime() / 1000),
    model_spec: modelRecordSpec(model) as unknown as JsonValue,
    ...(model.type === 'text' && model.contextLength !== null ? { context_length: model.contextLength } : {}),
  };
}

const ModelRecord = z.object({
  id: z.string(),
  object: z.literal('model'),
  type: z.enum(MODEL_TYPES),
  owned_by: z.string(),
  created: z.number().int(),
  model_spec: z.record(z.string(), z.unknown()),
  context_length: z.number().int().optional(),
});
const NameMap = z.object({ object: z.literal('list'), type: z.string(), data: z.record(z.string(), z.string()) });
const tags = ['Models'];

/** `{object: "list", type, data: {<name>: <model id>}}` for one model type (traits, compatibility names). */
function nameMapRoute(
  path: string,
  summary: string,
  read: (ctx: RouteContext, type: ModelType) => Promise<Record<string, string>>,
): Route {
  return {
    method: 'GET',
    path,
    access: 'public',
    doc: { summary, tags, query: ModelTypeQuery, response: NameMap },
    async handler(ctx) {
      const { type } = parseQuery(ModelTypeQuery, ctx.url);
      return json({ object: 'list', type, data: await read(ctx, type) });
    },
  };
}

export const catalogRoutes: Route[] = [
  {
    method: 'GET',
    path: '/models',
    access: 'public',
    doc: {
      summary: 'List models of a type (`all` for every type, `code` for text models optimised for code)',
      tags,
      query: ModelListQuery,
      response: z.object({ object: z.literal('list'), type: z.string(), data: z.array(ModelRecord) }),
    },
    async handler({ services, url }) {
      const { type } = parseQuery(ModelListQuery, url);
      const models = await services.catalog.listModels(type);
      return json({ object: 'list', data: models.map(modelWire), type });
    },
  },
  nameMapRoute('/models/traits', 'Traits (e.g. default, fastest) and the model each names', (ctx, type) =>
    ctx.services.catalog.traits(type),
  ),
  nameMapRoute('/models/compatibility_mapping', 'Foreign model names and the model each maps to', (ctx, type) =>
    ctx.services.catalog.compatibilityMapping(type),
  ),
  {
    method: 'GET',
    path: '/models/:id*',
    access: 'public',
    doc: { summary: 'One model record', tags, response: ModelRecord },
    async handler({ services, params }) {
      return json(modelWire(await services.catalog.getModel(params.id ?? '')));
    },
  },
];
