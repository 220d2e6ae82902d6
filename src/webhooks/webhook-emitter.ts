import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { WebhookQueue } from './webhook-queue.ts';
import * as repo from './webhook.repository.ts';

/*
 * Turns a domain event into deliveries: one per enabled endpoint of the account subscribed to its type (plus a job's
 * own webhook_url), inserted and queued in one transaction. The event id is the `webhook-id` of every attempt at
 * every target; events with a natural identity (a job's end, a key's crossing in a period) get an id derived from
 * it, so telling the same event twice makes no second delivery.
 */

export interface WebhookEvent {
  readonly accountId: string;
  readonly type: string;
  readonly data: Record<string, unknown>;
  /** Default: a fresh one. */
  readonly eventId?: string;
  /** A target besides the endpoints (a job's webhook_url). */
  readonly extraUrl?: string | null | undefined;
  /** Only this endpoint (the test event), whatever its subscriptions. */
  readonly onlyEndpoint?: repo.EndpointRow;
}

export class WebhookEmitter {
  constructor(
    private readonly deps: { readonly db: Database; readonly logger: Logger; readonly queue: WebhookQueue },
  ) {}

  /** Returns the deliveries made (none when nobody listens). */
  async emit(event: WebhookEvent): Promise<repo.DeliveryRow[]> {
    const { db, queue } = this.deps;
    const endpoints = event.onlyEndpoint
      ? [event.onlyEndpoint]
      : await repo.subscribers(db, event.accountId, event.type);
    const targets = endpoints.map((endpoint) => ({ endpointId: endpoint.id as string | null, url: endpoint.url }));
    if (event.extraUrl) targets.push({ endpointId: null, url: event.extraUrl });
    if (targets.length === 0) return [];
    const eventId = event.eventId ?? `evt_${randomUUID().replaceAll('-', '')}`;
    const payload = JSON.stringify({ type: event.type, timestamp: new Date().toISOString(), data: event.data });
    // On PGlite the one connection is the transaction's: pg-boss must be ready before it opens.
    const boss = await queue.ready();
    const made = await db.transaction().execute(async (trx) => {
      const rows = await repo.insertDeliveries(
        trx,
        targets.map((target) => ({ ...target, eventId, accountId: event.accountId, eventType: event.type, payload })),
      );
      await queue.send(
        boss,
        rows.map((row) => row.id),
        trx,
      );
      return rows;
    });
    queue.wake(boss);
    return made;
  }

  /** For hooks on paths that must not fail or wait: the event is queued in the background, a failure logged. */
  emitLater(event: WebhookEvent): void {
    this.emit(event).catch((error: unknown) =>
      this.deps.logger.error({ err: error, type: event.type, accountId: event.accountId }, 'a webhook event was lost'),
    );
  }
}
