import { sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { ConflictError, ValidationError } from '../errors.ts';

/** What a replay gives back: the stored response with its billing figures (docs/api.md, Idempotency). */
export interface StoredRpcResponse {
  readonly status: number;
  readonly body: string;
  readonly credits: number;
  readonly costNano: bigint;
}

export type IdempotencyClaim =
  { readonly kind: 'owner' } | { readonly kind: 'replay'; readonly response: StoredRpcResponse };

export interface IdempotencyOptions {
  /** How long a finished response is replayed (24 hours, as documented in docs/api.md). */
  readonly retentionMs: number;
  /** How long a claim may stay pending before another request may take it over (a crashed owner). */
  readonly leaseMs: number;
  readonly pollMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number) => ms / 1000;

/**
 * Idempotency-Key handling of the crypto proxy, in PostgreSQL so that every API process shares it. The first
 * request of a key inserts a 'pending' row (ON CONFLICT DO NOTHING decides the race) and alone reaches the node;
 * an identical request arriving meanwhile waits for the row to turn 'done' (in-process: on the owner's promise;
 * across processes: by polling) and replays it. A claim whose request failed is deleted, so a retry proceeds.
 */
export class IdempotencyStore {
  private readonly inFlight = new Map<string, { done: Promise<void>; resolve: () => void }>();

  constructor(private readonly deps: { db: Database; options: IdempotencyOptions }) {}

  async claim(
    accountId: string,
    key: string,
    requestHash: string,
    network: string,
    signal?: AbortSignal,
  ): Promise<IdempotencyClaim> {
    const { options } = this.deps;
    const giveUpAt = Date.now() + options.leaseMs + 5_000;
    let pollMs = options.pollMs ?? 20;
    for (;;) {
      if (await this.insertPending(accountId, key, requestHash, network)) return this.owned(accountId, key);

      const row = await this.read(accountId, key);
      if (!row) continue; // deleted in between (an abandoned claim): try to claim again
      if (row.expired) {
        if (await this.takeExpired(accountId, key, requestHash, network)) return this.owned(accountId, key);
        continue;
      }
      if (row.request_hash !== requestHash) {
        throw new ValidationError(
          'This Idempotency-Key was already used with a different request (body or network); use a new key for a new request',
          [{ path: ['Idempotency-Key'], message: 'Reused with a different request' }],
        );
      }
      if (row.state === 'done') {
        return {
          kind: 'replay',
          response: {
            status: row.status ?? 200,
            body: row.response_body ?? '',
            credits: row.credits ?? 0,
            costNano: row.cost_nano ?? 0n,
          },
        };
      }
      if (Date.now() > giveUpAt || signal?.aborted)
        throw new ConflictError('A request with this Idempotency-Key is still in progress; retry shortly');
      const local = this.inFlight.get(`${accountId}\n${key}`);
      if (local) await local.done;
      else {
        await sleep(pollMs);
        pollMs = Math.min(pollMs * 2, 200);
      }
    }
  }

  /** A new pending claim; false when the key already has a row. */
  private async insertPending(accountId: string, key: string, requestHash: string, network: string): Promise<boolean> {
    const { options } = this.deps;
    const inserted = await this.deps.db
      .insertInto('rpc_idempotency')
      .values({
        account_id: accountId,
        idempotency_key: key,
        request_hash: requestHash,
        network,
        state: 'pending',
        expires_at: sql<Date>`now() + make_interval(secs => ${seconds(options.leaseMs)})`,
      })
      .onConflict((conflict) => conflict.columns(['account_id', 'idempotency_key']).doNothing())
      .returning('account_id')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  private read(accountId: string, key: string) {
    return this.deps.db
      .selectFrom('rpc_idempotency')
      .select([
        'request_hash',
        'state',
        'status',
        'response_body',
        'credits',
        'cost_nano',
        sql<boolean>`expires_at <= now()`.as('expired'),
      ])
      .where('account_id', '=', accountId)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
  }

  /** Takes over a claim whose lease ran out (its owner died); false when another caller took it first. */
  private async takeExpired(accountId: string, key: string, requestHash: string, network: string): Promise<boolean> {
    const { options } = this.deps;
    const taken = await this.deps.db
      .updateTable('rpc_idempotency')
      .set({
        request_hash: requestHash,
        network,
        state: 'pending',
        status: null,
        response_body: null,
        credits: null,
        cost_nano: null,
        created_at: sql<Date>`now()`,
        expires_at: sql<Date>`now() + make_interval(secs => ${seconds(options.leaseMs)})`,
      })
      .where('account_id', '=', accountId)
      .where('idempotency_key', '=', key)
      .where(sql<boolean>`expires_at <= now()`)
      .returning('account_id')
      .executeTakeFirst();
    return taken !== undefined;
  }

  /** Stores the owner's response for replays (24 hours) and wakes the waiters. */
  async complete(accountId: string, key: string, response: StoredRpcResponse): Promise<void> {
    try {
      await this.deps.db
        .updateTable('rpc_idempotency')
        .set({
          state: 'done',
          status: response.status,
          response_body: response.body,
          credits: response.credits,
          cost_nano: response.costNano,
          expires_at: sql<Date>`now() + make_interval(secs => ${seconds(this.deps.options.retentionMs)})`,
        })
        .where('account_id', '=', accountId)
        .where('idempotency_key', '=', key)
        .execute();
    } finally {
      this.release(accountId, key);
    }
  }

  /** Drops the owner's claim (its request failed before an answer worth replaying), so a retry can proceed. */
  async abandon(accountId: string, key: string): Promise<void> {
    try {
      await this.deps.db
        .deleteFrom('rpc_idempotency')
        .where('account_id', '=', accountId)
        .where('idempotency_key', '=', key)
        .where('state', '=', 'pending')
        .execute();
    } finally {
      this.release(accountId, key);
    }
  }

  /** Deletes expired rows; returns how many. */
  async sweep(): Promise<number> {
    const result = await this.deps.db
      .deleteFrom('rpc_idempotency')
      .where(sql<boolean>`expires_at < now()`)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  private owned(accountId: string, key: string): IdempotencyClaim {
    let resolve = () => undefined as void;
    const done = new Promise<void>((r) => (resolve = r));
    this.inFlight.set(`${accountId}\n${key}`, { done, resolve });
    return { kind: 'owner' };
  }

  private release(accountId: string, key: string): void {
    const id = `${accountId}\n${key}`;
    this.inFlight.get(id)?.resolve();
    this.inFlight.delete(id);
  }
}
