import { agentOnFirstUse, undici } from '../undici.ts';
import { literalAddress, type AddressPolicy } from '../augment/scrape/address-policy.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { guardedLookup, RefusedAddressError } from './webhook-address.ts';
import { signatureHeaders } from './webhook-signing.ts';
import * as repo from './webhook.repository.ts';

/*
 * One attempt at one delivery (webhook-queue.ts runs it; pg-boss hands a failed one out again with exponential
 * backoff). The body is the stored payload, signed anew at each attempt (a fresh webhook-timestamp) under the same
 * webhook-id. 2xx: delivered. Anything else (another status, a redirect, a timeout, a refused address): recorded,
 * then retried until the retry window has passed.
 */

export interface DeliveryAttempt {
  readonly retryCount: number;
  /** pg-boss will not hand it out again after this one. */
  readonly lastAttempt: boolean;
}

export class DeliveryFailedError extends Error {}

const ERROR_MAX_CHARS = 300;

export class WebhookDeliverer {
  private readonly agent = agentOnFirstUse(() => ({
    connect: { lookup: guardedLookup(this.deps.policy), timeout: this.deps.timeoutMs },
    keepAliveTimeout: 4_000,
    maxRedirections: 0,
  }));

  constructor(
    private readonly deps: {
      readonly db: Database;
      readonly logger: Logger;
      readonly policy: AddressPolicy;
      readonly timeoutMs: number;
      readonly retryWindowSeconds: number;
      /** Current time (tests move it). */
      readonly now?: () => Date;
    },
  ) {}

  /** Throws DeliveryFailedError when the attempt failed and should be tried again. */
  async deliver(deliveryId: string, attempt: DeliveryAttempt): Promise<void> {
    const { db } = this.deps;
    const delivery = await repo.deliveryById(db, deliveryId);
    if (!delivery || delivery.status === 'SUCCEEDED' || delivery.status === 'FAILED') return;
    const secret = await this.secretFor(delivery);
    const started = Date.now();
    const outcome = secret
      ? await this.post(delivery, secret)
      : { statusCode: null, error: 'the account has no webhook endpoint whose secret signs job webhooks' };
    const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const now = this.deps.now?.() ?? new Date();
    const windowOver = now.getTime() - delivery.created_at.getTime() >= this.deps.retryWindowSeconds * 1000;
    const final = ok || !secret || attempt.lastAttempt || windowOver;
    const status = ok ? 'SUCCEEDED' : final ? 'FAILED' : 'RETRYING';
    await repo.recordAttempt(db, delivery.id, { ...outcome, durationMs: Date.now() - started, status });
    if (!final) throw new DeliveryFailedError(outcome.error ?? `HTTP ${outcome.statusCode}`);
    if (!ok) this.deps.logger.warn({ deliveryId, error: outcome.error }, 'a webhook delivery was given up on');
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  /** An endpoint's own secret; a job's webhook_url is signed with the account's oldest endpoint's (docs). */
  private async secretFor(delivery: repo.DeliveryRow): Promise<string | undefined> {
    const endpoints = await repo.listEndpoints(this.deps.db, delivery.account_id);
    const own = delivery.endpoint_id ? endpoints.find((row) => row.id === delivery.endpoint_id) : endpoints[0];
    return own?.secret;
  }

  private async post(
    delivery: repo.DeliveryRow,
    secret: string,
  ): Promise<{ statusCode: number | null; error: string | null }> {
    const { timeoutMs, policy } = this.deps;
    try {
      const url = new URL(delivery.url);
      const literal = literalAddress(url.hostname);
      if (literal !== undefined && !policy.allows(literal))
        throw new RefusedAddressError(`${literal} is not a public address`);
      const signal = AbortSignal.timeout(timeoutMs);
      const timestampSeconds = Math.floor((this.deps.now?.() ?? new Date()).getTime() / 1000);
      const headers = signatureHeaders(secret, { id: delivery.event_id, timestampSeconds, body: delivery.payload });
      const response = await undici().request(url, {
        method: 'POST',
        dispatcher: this.agent.get(),
        signal,
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Lagoon-Webhooks/1' },
        body: delivery.payload,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      response.body.on('error', () => undefined);
      response.body.destroy();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { statusCode: response.statusCode, error: ok ? null : `HTTP ${response.statusCode}` };
    } catch (error) {
      return { statusCode: null, error: describe(error, timeoutMs) };
    }
  }
}

function describe(error: unknown, timeoutMs: number): string {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    if (cause instanceof RefusedAddressError) return `refused: ${cause.message}`;
    if (cause.name === 'TimeoutError' || cause.name === 'AbortError' || cause.name === 'HeadersTimeoutError')
      return `no answer within ${timeoutMs} ms`;
  }
  const text =
    error instanceof Error ? `${(error as NodeJS.ErrnoException).code ?? error.name}: ${error.message}` : String(error);
  return text.slice(0, ERROR_MAX_CHARS);
}
