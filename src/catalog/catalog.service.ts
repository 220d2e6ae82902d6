import { z } from 'zod';
import type { Database } from '../db/database.ts';
import { clip, NotFoundError } from '../errors.ts';
import type { OperatorConfig } from '../operator-config/schema.ts';
import { isCodeModel } from './model-record.ts';
import * as repo from './model.repository.ts';
import {
  MODEL_TYPES,
  modelFromConfig,
  rowToModel,
  type CatalogModel,
  type CatalogModelDraft,
  type ModelType,
} from './model.ts';

/** What `GET /models?type=` accepts: one type, `all` (every type) or `code` (text models optimised for code). */
export const MODEL_LIST_TYPES = [...MODEL_TYPES, 'all', 'code'] as const;
export type ModelListType = (typeof MODEL_LIST_TYPES)[number];
/** `GET /models?type=` (and its GraphQL twin); `text` when absent. */
export const ModelListQuery = z.object({
  type: z.preprocess(
    (value) => (value === '' || value === null ? undefined : value),
    z.enum(MODEL_LIST_TYPES).default('text'),
  ),
});
/** `GET /models/traits?type=` and `/models/compatibility_mapping?type=`: one type, `text` when absent. */
export const ModelTypeQuery = z.object({
  type: z.preprocess(
    (value) => (value === '' || value === null ? undefined : value),
    z.enum(MODEL_TYPES).default('text'),
  ),
});

interface Snapshot {
  readonly models: readonly CatalogModel[];
  readonly byId: ReadonlyMap<string, CatalogModel>;
  readonly byType: ReadonlyMap<ModelType, readonly CatalogModel[]>;
  /** type → trait → model id, first model in config order wins (the config allows one). */
  readonly traits: ReadonlyMap<ModelType, Readonly<Record<string, string>>>;
  /** type → foreign name → model id. */
  readonly aliases: ReadonlyMap<ModelType, Readonly<Record<string, string>>>;
}

export type ModelLookup =
  | { readonly model: CatalogModel; readonly via: 'id' | 'trait' | 'mapping' }
  | { readonly model: undefined; readonly otherType: ModelType | undefined };

/**
 * The model catalog: writes the configured models to the DB and serves every read from an in-memory snapshot
 * (small and hot). Talks to the model repository. The catalog is public: reads take no caller.
 */
export class CatalogService {
  private snapshot: Promise<Snapshot> | undefined;
  /** The last config synced (undefined before the first sync: nothing is written until then). */
  private configured:
    { models: CatalogModelDraft[]; aliases: { type: string; name: string; modelId: string }[] } | undefined;
  /** Models found on an upstream by zero-config discovery; stored after the config's models. */
  private discovered: readonly CatalogModelDraft[] = [];
  /** Catalog writes run one at a time, so a discovery refresh never interleaves with a config sync. */
  private writes: Promise<void> = Promise.resolve();

  constructor(private readonly deps: { db: Database }) {}

  /** Stores the config's models (deactivating dropped ones) and mappings, then reloads the snapshot. */
  async syncFromConfig(config: OperatorConfig): Promise<void> {
    const models = config.models.map(modelFromConfig);
    const aliases = Object.entries(config.compatibilityMappings).flatMap(([type, names]) =>
      Object.entries(names ?? {}).map(([name, modelId]) => ({ type, name, modelId })),
    );
    this.configured = { models, aliases };
    await this.write();
  }

  /**
   * Replaces the discovered models (model-discovery.ts): stored active after the configured ones, except ids the
   * config defines (the config wins); discovered models no longer listed are deactivated like dropped config models.
   */
  async setDiscoveredModels(models: readonly CatalogModelDraft[]): Promise<void> {
    this.discovered = [...models];
    if (this.configured) await this.write();
  }

  private write(): Promise<void> {
    const run = async () => {
      const configured = this.configured ?? { models: [], aliases: [] };
      const configIds = new Set(configured.models.map((model) => model.id));
      const models = [...configured.models, ...this.discovered.filter((model) => !configIds.has(model.id))];
      await repo.replaceCatalog(this.deps.db, models, configured.aliases);
      await this.reload();
    };
    const done = this.writes.then(run, run);
    this.writes = done.catch(() => undefined);
    return done;
  }

  /** Re-reads the active catalog from the DB (a failed reload keeps the previous snapshot). Reads load it lazily. */
  async reload(): Promise<void> {
    const snapshot = await this.load();
    this.snapshot = Promise.resolve(snapshot);
  }

  /** Active models of one type (every type with `all`, text models for code with `code`), in config order. */
  async listModels(type: ModelListType = 'text'): Promise<CatalogModel[]> {
    const snapshot = await this.current();
    if (type === 'all') return [...snapshot.models];
    if (type === 'code') return (snapshot.byType.get('text') ?? []).filter(isCodeModel);
    return [...(snapshot.byType.get(type) ?? [])];
  }

  async getModel(id: string): Promise<CatalogModel> {
    const model = (await this.current()).byId.get(id);
    if (!model) throw new NotFoundError(`Model ${clip(id)} not found`, 'MODEL_NOT_FOUND');
    return model;
  }

  /** Models by id in id order, null for unknown or inactive ids; for dataloaders. */
  async findModelsByIds(ids: readonly string[]): Promise<(CatalogModel | null)[]> {
    const { byId } = await this.current();
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** `{ <trait>: <model id> }` for one type. */
  async traits(type: ModelType): Promise<Record<string, string>> {
    return { ...(await this.current()).traits.get(type) };
  }

  /** `{ <foreign model name>: <model id> }` for one type. */
  async compatibilityMapping(type: ModelType): Promise<Record<string, string>> {
    return { ...(await this.current()).aliases.get(type) };
  }

  /** What a request's model name means for a type: a model id, else a trait, else a compatibility mapping. */
  async resolveModel(name: string, type: ModelType): Promise<CatalogModel | undefined> {
    return (await this.lookupModel(name, type)).model;
  }

  /**
   * Like {@link resolveModel}, and says how the name matched (callers treat a trait, "whatever you recommend",
   * differently from an explicit id), or, for a name that is not of this type, the type it has.
   */
  async lookupModel(name: string, type: ModelType): Promise<ModelLookup> {
    const snapshot = await this.current();
    const direct = snapshot.byId.get(name);
    if (direct?.type === type) return { model: direct, via: 'id' };
    const trait = own(snapshot.traits.get(type), name);
    const target = trait ?? own(snapshot.aliases.get(type), name);
    const model = target === undefined ? undefined : snapshot.byId.get(target);
    if (model?.type === type) return { model, via: trait === undefined ? 'mapping' : 'trait' };
    return { model: undefined, otherType: direct?.type };
  }

  private current(): Promise<Snapshot> {
    return (this.snapshot ??= this.load().catch((error: unknown) => {
      this.snapshot = undefined;
      throw error;
    }));
  }

  private async load(): Promise<Snapshot> {
    const [rows, aliasRows] = await Promise.all([repo.listActiveModels(this.deps.db), repo.listAliases(this.deps.db)]);
    const models = rows.map((row) => deepFreeze(rowToModel(row)));
    const byType = new Map<ModelType, CatalogModel[]>();
    const traits = new Map<ModelType, Record<string, string>>();
    for (const model of models) {
      byType.set(model.type, [...(byType.get(model.type) ?? []), model]);
      const typeTraits = traits.get(model.type) ?? {};
      for (const trait of model.traits) if (!Object.hasOwn(typeTraits, trait)) typeTraits[trait] = model.id;
      traits.set(model.type, typeTraits);
    }
    const aliases = new Map<ModelType, Record<string, string>>();
    for (const row of aliasRows) {
      const type = row.type as ModelType;
      const names = aliases.get(type) ?? {};
      names[row.name] = row.model_id;
      aliases.set(type, names);
    }
    return { models, byId: new Map(models.map((model) => [model.id, model])), byType, traits, aliases };
  }
}

/** Own properties only: a model named "constructor" or "__proto__" must not resolve through the prototype. */
const own = (record: Readonly<Record<string, string>> | undefined, key: string): string | undefined =>
  record && Object.hasOwn(record, key) ? record[key] : undefined;

/** Snapshot models are shared by every caller; freezing turns an accidental mutation into an error. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Date) && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
