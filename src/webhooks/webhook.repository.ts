import { sql, type Selectable } from 'kysely';
import type { Database } from '../db/database.ts';
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from '../db/types.generated.ts';

/* The Kysely queries of the webhook tables (migrations/0022_webhooks.ts). */

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

export interface AttemptRow {
  readonly delivery_id: string;
  readonly attempt: number;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
  readonly created_at: Date;
}

export const eventsOf = (row: Pick<EndpointRow, 'events'>): string[] => row.events.split(',').filter(Boolean);

export function listEndpoints(db: Database, accountId: string): Promise<EndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findEndpoint(db: Database, accountId: string, id: string): Promise<EndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Inserts unless the account already has `max` endpoints (counted under a lock on the account's row). */
export async function insertEndpoint(
  db: Database,
  row: { accountId: string; url: string; description: string; events: string[]; secret: string; enabled: boolean },
  max: number,
): Promise<EndpointRow | undefined> {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom('accounts').select('id').where('id', '=', row.accountId).forUpdate().execute();
    const { n } = await trx
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', row.accountId)
      .executeTakeFirstOrThrow();
    if (Number(n) >= max) return undefined;
    return trx
      .insertInto('webhook_endpoints')
      .values({
        account_id: row.accountId,
        url: row.url,
        description: row.description,
        events: row.events.join(','),
        secret: row.secret,
        enabled: row.enabled,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

export function updateEndpoint(
  db: Database,
  accountId: string,
  id: string,
  changes: { url?: string; description?: string; events?: string[]; enabled?: boolean },
): Promise<EndpointRow | undefined> {
  return db
    .updateTable('webhook_endpoints')
    .set({
      ...(changes.url !== undefined && { url: changes.url }),
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.events !== undefined && { events: changes.events.join(',') }),
      ...(changes.enabled !== undefined && { enabled: changes.enabled }),
      updated_at: new Date(),
    })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteEndpoint(db: Database, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The account's enabled endpoints subscribed to `eventType`. */
export function subscribers(db: Database, accountId: string, eventType: string): Promise<EndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('enabled', '=', true)
    .where(sql<boolean>`${eventType} = any(string_to_array(events, ','))`)
    .orderBy('created_at')
    .execute();
}

export interface NewDelivery {
  readonly eventId: string;
  readonly accountId: string;
  readonly endpointId: string | null;
  readonly url: string;
  readonly eventType: string;
  readonly payload: string;
}

/** The deliveries inserted (one already made for the same event and target is left as it is: at most one each). */
export async function insertDeliveries(db: Database, rows: readonly NewDelivery[]): Promise<DeliveryRow[]> {
  if (rows.length === 0) return [];
  return db
    .insertInto('webhook_deliveries')
    .values(
      rows.map((row) => ({
        event_id: row.eventId,
        account_id: row.accountId,
        endpoint_id: row.endpointId,
        url: row.url,
        event_type: row.eventType,
        payload: row.payload,
      })),
    )
    .onConflict((oc) => oc.doNothing())
    .returningAll()
    .execute();
}

export function deliveryById(db: Database, id: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

/** One attempt's outcome: the attempt row and the delivery's summary, together. */
export async function recordAttempt(
  db: Database,
  deliveryId: string,
  outcome: { statusCode: number | null; error: string | null; durationMs: number; status: string },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('webhook_deliveries')
      .set({
        attempts: sql<number>`attempts + 1`,
        status: outcome.status,
        last_status_code: outcome.statusCode,
        last_error: outcome.error,
        last_attempt_at: new Date(),
        ...(outcome.status === 'SUCCEEDED' && { delivered_at: new Date() }),
      })
      .where('id', '=', deliveryId)
      .returning('attempts')
      .executeTakeFirst();
    if (!updated) return;
    await trx
      .insertInto('webhook_attempts')
      .values({
        delivery_id: deliveryId,
        attempt: updated.attempts,
        status_code: outcome.statusCode,
        error: outcome.error,
        duration_ms: outcome.durationMs,
      })
      .execute();
  });
}

export function markDelivery(db: Database, id: string, status: string): Promise<unknown> {
  return db.updateTable('webhook_deliveries').set({ status }).where('id', '=', id).execute();
}

export function listDeliveries(
  db: Database,
  accountId: string,
  filter: { endpointId?: string | undefined; limit: number },
): Promise<DeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', accountId);
  if (filter.endpointId) query = query.where('endpoint_id', '=', filter.endpointId);
  return query.orderBy('created_at', 'desc').orderBy('id').limit(filter.limit).execute();
}

export async function attemptsOf(db: Database, deliveryIds: readonly string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_attempts')
    .select(['delivery_id', 'attempt', 'status_code', 'error', 'duration_ms', 'created_at'])
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('attempt')
    .execute();
}
