import { sql } from 'kysely';
import type { Database } from '../db/database.ts';
import type { CatalogModelDraft, ModelRow } from './model.ts';

export interface ModelAliasRow {
  type: string;
  name: string;
  model_id: string;
}

const modelColumns = [
  'id',
  'type',
  'owned_by',
  'created_at',
  'privacy',
  'offline',
  'context_length',
  'spec',
  'providers',
] as const;

interface CatalogAlias {
  readonly type: string;
  readonly name: string;
  readonly modelId: string;
}

/** Each model with its position; an id listed twice (an upstream's list may repeat one) as its last listing says. */
function positioned(models: readonly CatalogModelDraft[]): { model: CatalogModelDraft; position: number }[] {
  return [...new Map(models.map((model, position) => [model.id, { model, position }])).values()];
}

/** JSON with object keys sorted: a jsonb column gives its keys back in its own order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

/** True when the active stored models are exactly `models` (fields, order) and the aliases exactly `aliases`. */
async function catalogMatches(
  db: Database,
  models: readonly CatalogModelDraft[],
  aliases: readonly CatalogAlias[],
): Promise<boolean> {
  const [rows, storedAliases] = await Promise.all([listActiveModels(db), listAliases(db)]);
  const wanted = positioned(models).sort((a, b) => a.position - b.position);
  const sameModels =
    rows.length === wanted.length &&
    rows.every((row, index) => {
      const { model, position } = wanted[index]!;
      return (
        row.id === model.id &&
        row.position === position &&
        row.type === model.type &&
        row.owned_by === model.ownedBy &&
        row.privacy === model.privacy &&
        row.offline === model.offline &&
        row.context_length === model.contextLength &&
        (model.created === null || row.created_at.getTime() === model.created.getTime()) &&
        canonicalJson(row.spec) === canonicalJson(model.spec) &&
        canonicalJson(row.providers) === canonicalJson(model.providers)
      );
    });
  if (!sameModels) return false;
  const aliasKey = (type: string, name: string, modelId: string) => JSON.stringify([type, name, modelId]);
  const stored = new Set(storedAliases.map((alias) => aliasKey(alias.type, alias.name, alias.model_id)));
  return (
    stored.size === aliases.length &&
    aliases.every((alias) => stored.has(aliasKey(alias.type, alias.name, alias.modelId)))
  );
}

// Serialises concurrent syncs (several API processes starting at once) so alias replacement cannot collide.
const CATALOG_LOCK = sql`select pg_advisory_xact_lock(hashtext('lagoon.catalog'))`;

/**
 * Makes the stored catalog match `models` (in config order) and `aliases`, in one transaction: upserts every
 * model as active at its position, deactivates models no longer configured, and replaces the aliases.
 * `updated_at` moves only when a model's stored fields change; `created_at` is kept when the config leaves it open.
 */
export async function replaceCatalog(
  db: Database,
  models: readonly CatalogModelDraft[],
  aliases: readonly CatalogAlias[],
): Promise<void> {
  // A start with an unchanged config writes nothing: two reads instead of a transaction of seven statements, the
  // first writes of a cold embedded database among them (0.4 s of its start on a 2-core host).
  if (await catalogMatches(db, models, aliases)) return;
  await db.transaction().execute(async (trx) => {
    await CATALOG_LOCK.execute(trx);
    // One statement for the models whose config dates them and one for the rest (the date is kept): a start
    // writes the catalog in two statements, not one per model (each a first, slow, plan on a cold embedded database).
    const rows = positioned(models);
    for (const dated of [true, false]) {
      const group = rows.filter(({ model }) => (model.created !== null) === dated);
      if (group.length === 0) continue;
      await trx
        .insertInto('models')
        .values(
          group.map(({ model, position }) => ({
            id: model.id,
            type: model.type,
            owned_by: model.ownedBy,
            created_at: model.created ?? sql<Date>`now()`,
            privacy: model.privacy,
            offline: model.offline,
            context_length: model.contextLength,
            spec: JSON.stringify(model.spec),
            providers: JSON.stringify(model.providers),
            position,
            active: true,
          })),
        )
        .onConflict((oc) =>
          oc.column('id').doUpdateSet((eb) => ({
            type: eb.ref('excluded.type'),
            owned_by: eb.ref('excluded.owned_by'),
            created_at: dated ? eb.ref('excluded.created_at') : eb.ref('models.created_at'),
            privacy: eb.ref('excluded.privacy'),
            offline: eb.ref('excluded.offline'),
            context_length: eb.ref('excluded.context_length'),
            spec: eb.ref('excluded.spec'),
            providers: eb.ref('excluded.providers'),
            position: eb.ref('excluded.position'),
            active: true,
            updated_at: sql<Date>`case when
              (models.type, models.owned_by, models.privacy, models.offline, models.context_length, models.spec, models.providers, models.active)
              is distinct from
              (excluded.type, excluded.owned_by, excluded.privacy, excluded.offline, excluded.context_length, excluded.spec, excluded.providers, true)
              ${dated ? sql`or models.created_at <> excluded.created_at` : sql``}
              then now() else models.updated_at end`,
          })),
        )
        .execute();
    }
    let deactivate = trx
      .updateTable('models')
      .set({ active: false, updated_at: sql`now()` })
      .where('active', '=', true);
    if (models.length > 0)
      deactivate = deactivate.where(
        'id',
        'not in',
        models.map((model) => model.id),
      );
    await deactivate.execute();

    await trx.deleteFrom('model_aliases').execute();
    if (aliases.length > 0) {
      await trx
        .insertInto('model_aliases')
        .values(aliases.map((alias) => ({ type: alias.type, name: alias.name, model_id: alias.modelId })))
        .execute();
    }
  });
}

/** Active models in config order (with their stored position, which the catalog's sync compares). */
export async function listActiveModels(db: Database): Promise<(ModelRow & { position: number })[]> {
  return db
    .selectFrom('models')
    .select([...modelColumns, 'position'])
    .where('active', '=', true)
    .orderBy('position')
    .orderBy('id')
    .execute();
}

export async function listAliases(db: Database): Promise<ModelAliasRow[]> {
  return db.selectFrom('model_aliases').select(['type', 'name', 'model_id']).orderBy('type').orderBy('name').execute();
}
