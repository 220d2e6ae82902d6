import type { AddressPolicy } from '../augment/scrape/address-policy.ts';
import type { AccountAuthContext, AuthContext } from '../auth/auth-context.ts';
import { requireAccount } from '../auth/permissions.ts';
import { parseNano } from '../billing/money.ts';
import type { Database } from '../db/database.ts';
import { AdminKeyRequiredError, NotFoundError, ValidationError } from '../errors.ts';
import { parseInput } from '../validation.ts';
import { checkWebhookUrl } from './webhook-address.ts';
import type { WebhookEmitter } from './webhook-emitter.ts';
import { newWebhookSecret } from './webhook-signing.ts';
import {
  CreateWebhookInput,
  DeliveryListInput,
  UpdateWebhookInput,
  WebhookId,
  WebhookSettingsInput,
} from './webhook.inputs.ts';
import * as repo from './webhook.repository.ts';
import * as settingsRepo from './webhook-settings.repository.ts';

/*
 * An account's webhook endpoints, its deliveries and its balance-low threshold. Managed with an ADMIN key or by a
 * signed-in wallet (a wallet account hears of its own top-ups); every endpoint is looked up within the caller's
 * account, so another account's id is simply not found.
 */

export interface WebhookEndpoint {
  readonly id: string;
  readonly url: string;
  readonly description: string;
  readonly events: string[];
  readonly enabled: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface WebhookAttempt {
  readonly attempt: number;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly at: Date;
}

export interface WebhookDelivery {
  readonly id: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly webhookId: string | null;
  readonly url: string;
  readonly status: string;
  readonly attempts: WebhookAttempt[];
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly deliveredAt: Date | null;
}

export interface WebhookSettings {
  readonly balanceLowThreshold: bigint | null;
}

const endpointOf = (row: repo.EndpointRow): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  description: row.description,
  events: repo.eventsOf(row),
  enabled: row.enabled,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const notFound = () => new NotFoundError('Webhook not found');

/** ADMIN keys and wallets manage webhooks; an INFERENCE key may not. */
function requireManager(auth: AuthContext): AccountAuthContext {
  const account = requireAccount(auth);
  if (account.kind === 'apiKey' && account.apiKey.type !== 'ADMIN') throw new AdminKeyRequiredError();
  return account;
}

export class WebhookService {
  constructor(
    private readonly deps: {
      readonly db: Database;
      readonly policy: AddressPolicy;
      readonly emitter: WebhookEmitter;
      readonly maxEndpoints: number;
    },
  ) {}

  /** The new endpoint and its signing secret (shown here only). */
  async create(auth: AuthContext, input: unknown): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const { accountId } = requireManager(auth);
    const body = parseInput(CreateWebhookInput, input);
    await checkWebhookUrl(this.deps.policy, body.url, 'url');
    const secret = newWebhookSecret();
    const row = await repo.insertEndpoint(
      this.deps.db,
      {
        accountId,
        url: body.url,
        description: body.description ?? '',
        events: body.events,
        secret,
        enabled: body.enabled ?? true,
      },
      this.deps.maxEndpoints,
    );
    if (!row)
      throw new ValidationError(`An account may have at most ${this.deps.maxEndpoints} webhook endpoints`, [
        { path: ['url'], message: `At most ${this.deps.maxEndpoints} endpoints per account` },
      ]);
    return { endpoint: endpointOf(row), secret };
  }

  async list(auth: AuthContext): Promise<WebhookEndpoint[]> {
    const { accountId } = requireManager(auth);
    return (await repo.listEndpoints(this.deps.db, accountId)).map(endpointOf);
  }

  async get(auth: AuthContext, id: string): Promise<WebhookEndpoint> {
    return endpointOf(await this.own(auth, id));
  }

  async update(auth: AuthContext, id: string, input: unknown): Promise<WebhookEndpoint> {
    const { accountId } = requireManager(auth);
    const webhookId = this.idOf(id);
    const body = parseInput(UpdateWebhookInput, input);
    if (body.url !== undefined) await checkWebhookUrl(this.deps.policy, body.url, 'url');
    const row = await repo.updateEndpoint(this.deps.db, accountId, webhookId, body);
    if (!row) throw notFound();
    return endpointOf(row);
  }

  async delete(auth: AuthContext, id: string): Promise<void> {
    const { accountId } = requireManager(auth);
    if (!(await repo.deleteEndpoint(this.deps.db, accountId, this.idOf(id)))) throw notFound();
  }

  /** Queues a `webhook.test` event to this endpoint (enabled or not, whatever it subscribes to). */
  async sendTest(auth: AuthContext, id: string): Promise<WebhookDelivery> {
    const endpoint = await this.own(auth, id);
    const [made] = await this.deps.emitter.emit({
      accountId: endpoint.account_id,
      type: 'webhook.test',
      data: { webhookId: endpoint.id, message: 'A test event from Lagoon' },
      onlyEndpoint: endpoint,
    });
    if (!made) throw new Error('the test delivery was not made');
    return deliveryOf(made, []);
  }

  /** The account's most recent deliveries (newest first), each with its attempts. */
  async deliveries(auth: AuthContext, input: unknown): Promise<WebhookDelivery[]> {
    const { accountId } = requireManager(auth);
    const filter = parseInput(DeliveryListInput, input);
    if (filter.webhookId) await this.own(auth, filter.webhookId);
    const rows = await repo.listDeliveries(this.deps.db, accountId, {
      endpointId: filter.webhookId,
      limit: filter.limit,
    });
    const attempts = await repo.attemptsOf(
      this.deps.db,
      rows.map((row) => row.id),
    );
    return rows.map((row) =>
      deliveryOf(
        row,
        attempts.filter((attempt) => attempt.delivery_id === row.id),
      ),
    );
  }

  async settings(auth: AuthContext): Promise<WebhookSettings> {
    const { accountId } = requireManager(auth);
    const row = await settingsRepo.settingsOf(this.deps.db, accountId);
    return { balanceLowThreshold: row?.balance_low_threshold ?? null };
  }

  async updateSettings(auth: AuthContext, input: unknown): Promise<WebhookSettings> {
    const { accountId } = requireManager(auth);
    const body = parseInput(WebhookSettingsInput, input);
    const threshold = body.balanceLowThresholdUsd === null ? null : parseNano(body.balanceLowThresholdUsd);
    await settingsRepo.setThreshold(this.deps.db, accountId, threshold);
    return { balanceLowThreshold: threshold };
  }

  /**
   * A job's webhook_url (POST /audio|video/queue): the same address policy as endpoints, and the account must have an
   * endpoint, whose secret (the oldest endpoint's) signs the job's deliveries.
   */
  async checkJobWebhookUrl(accountId: string, url: string): Promise<void> {
    await checkWebhookUrl(this.deps.policy, url, 'webhook_url');
    if ((await repo.listEndpoints(this.deps.db, accountId)).length === 0)
      throw new ValidationError('webhook_url: register a webhook endpoint first; its secret signs job webhooks', [
        { path: ['webhook_url'], message: 'Register a webhook endpoint first (POST /api/v1/webhooks)' },
      ]);
  }

  private idOf(id: string): string {
    // Not a UUID: no such endpoint (a 404, as for another account's id).
    const parsed = WebhookId.safeParse(id);
    if (!parsed.success) throw notFound();
    return parsed.data;
  }

  private async own(auth: AuthContext, id: string): Promise<repo.EndpointRow> {
    const { accountId } = requireManager(auth);
    const row = await repo.findEndpoint(this.deps.db, accountId, this.idOf(id));
    if (!row) throw notFound();
    return row;
  }
}

function deliveryOf(row: repo.DeliveryRow, attempts: readonly repo.AttemptRow[]): WebhookDelivery {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    webhookId: row.endpoint_id,
    url: row.url,
    status: row.status,
    attempts: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      statusCode: attempt.status_code,
      error: attempt.error,
      durationMs: attempt.duration_ms,
      at: attempt.created_at,
    })),
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
  };
}
