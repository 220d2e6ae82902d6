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
  aliases: readonly { type: string; name: string; modelId: string }[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await CATALOG_LOCK.execute(trx);
    for (const [position, model] of models.entries()) {
      await trx
        .insertInto('models')
        .values({
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
        })
        .onConflict((oc) =>
          oc.column('id').doUpdateSet((eb) => ({
            type: eb.ref('excluded.type'),
            owned_by: eb.ref('excluded.owned_by'),
            created_at: model.created ? eb.ref('excluded.created_at') : eb.ref('models.created_at'),
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
              ${model.created ? sql`or models.created_at <> excluded.created_at` : sql``}
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

/** Active models in config order. */
export async function listActiveModels(db: Database): Promise<ModelRow[]> {
  return db
    .selectFrom('models')
    .select(modelColumns)
    .where('active', '=', true)
    .orderBy('position')
    .orderBy('id')
    .execute();
}

export async function listAliases(db: Database): Promise<ModelAliasRow[]> {
  return db.selectFrom('model_aliases').select(['type', 'name', 'model_id']).orderBy('type').orderBy('name').execute();
}
