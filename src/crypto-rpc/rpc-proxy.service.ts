import { createHash } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3';
import { keyOf, type AccountAuthContext, type AuthContext } from '../auth/auth-context.ts';
import { requireAccount, requireOperator } from '../auth/permissions.ts';
import type { BillingService } from '../billing/billing.service.ts';
import type { SettledCharge, Usage } from '../billing/billing.types.ts';
import type { Nano } from '../billing/money.ts';
import type { PaidCall } from '../billing/paid-call.ts';
import type { Database } from '../db/database.ts';
import { clip, NotFoundError, ValidationError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { AccountTiers } from './account-tier.ts';
import { RPC_TIERS, type CreditHold, type RpcCaps, type RpcTier } from './caps.ts';
import type { ChainFamily } from './chains.ts';
import { chargedCredits, costOfCredits, maxCredits } from './credits.ts';
import type { IdempotencyStore } from './idempotency.ts';
import type { RpcNetwork, RpcSetup } from './networks.ts';
import { insertRawTransactions, type RawTransactionLogEntry } from './raw-transaction.repository.ts';
import { analyzeResponse } from './rpc-response.ts';
import { parseIdempotencyKey, parseRpcRequest, type ParsedRpcRequest } from './rpc.inputs.ts';

export interface RpcCallRequest {
  readonly network: string;
  /** The JSON-RPC request or batch as sent (bytes or text). */
  readonly body: Uint8Array | string;
  readonly idempotencyKey?: string | null | undefined;
}

export interface RpcCallOutcome {
  readonly status: number;
  /** The node's answer, byte for byte (or the stored one for a replay). */
  readonly body: Uint8Array<ArrayBuffer>;
  readonly credits: number;
  readonly costNano: Nano;
  readonly replayed: boolean;
  /** Resolves when the charge is written (undefined for a replay, or if writing it failed: logged). */
  readonly settlement: Promise<SettledCharge | undefined>;
}

export interface RpcNetworkInfo {
  readonly slug: string;
  readonly family: ChainFamily;
  readonly baseCredits: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const IDEMPOTENCY_SWEEP_MS = 10 * 60_000;

/**
 * The metered crypto JSON-RPC proxy (docs/api.md, Crypto JSON-RPC proxy): validates against the
 * allowlist, replays idempotent requests, enforces the per-account caps, holds the most the call can cost, forwards
 * to the network's nodes with failover, and charges the credits actually used as one usage entry. The charge is
 * settled right after the answer is handed back (the hold guarantees the funds), so the database write of the
 * settlement is not on the caller's critical path. Talks to billing, the caps, the idempotency store and the
 * network's JSON-RPC upstreams.
 */
export class CryptoRpcService {
  private readonly pending = new Set<Promise<unknown>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly deps: {
      db: Database;
      billing: BillingService;
      logger: Logger;
      setup: RpcSetup;
      caps: RpcCaps;
      tiers: AccountTiers;
      idempotency: IdempotencyStore;
    },
  ) {
    this.sweeper = setInterval(() => {
      this.deps.idempotency
        .sweep()
        .catch((error: unknown) => this.deps.logger.error({ err: error }, 'idempotency sweep failed'));
    }, IDEMPOTENCY_SWEEP_MS);
    this.sweeper.unref();
  }

  /** The served networks, sorted by slug (public). */
  networks(): RpcNetworkInfo[] {
    return [...this.deps.setup.networks.values()]
      .map(({ slug, family, baseCredits }) => ({ slug, family, baseCredits }))
      .sort((a, b) => (a.slug < b.slug ? -1 : 1));
  }

  /** The prefixes of the cost headers each answer carries (`<prefix>-rpc-credits`, `<prefix>-rpc-cost-usd`). */
  get costHeaderPrefixes(): readonly string[] {
    return this.deps.setup.costHeaderPrefixes;
  }

  get pricePerCreditUsd(): string {
    return this.deps.setup.pricePerCreditUsd;
  }

  async call(
    auth: AuthContext,
    request: RpcCallRequest,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<RpcCallOutcome> {
    const caller = requireRpcCaller(auth);
    const network = this.network(request.network);
    const idempotencyKey = parseIdempotencyKey(request.idempotencyKey);
    const bytes = typeof request.body === 'string' ? encoder.encode(request.body) : request.body;
    const parsed = parseRpcRequest(network.family, readJson(bytes));
    if (!idempotencyKey) return this.forward(caller, network, parsed, options.signal);

    const requestHash = createHash('sha256').update(network.slug).update('\n').update(bytes).digest('hex');
    const claim = await this.deps.idempotency.claim(
      caller.accountId,
      idempotencyKey,
      requestHash,
      network.slug,
      options.signal,
    );
    if (claim.kind === 'replay') {
      const { status, body, credits, costNano } = claim.response;
      return {
        status,
        body: encoder.encode(body),
        credits,
        costNano,
        replayed: true,
        settlement: Promise.resolve(undefined),
      };
    }
    try {
      const outcome = await this.forward(caller, network, parsed, options.signal);
      await this.deps.idempotency.complete(caller.accountId, idempotencyKey, {
        status: outcome.status,
        body: decoder.decode(outcome.body),
        credits: outcome.credits,
        costNano: outcome.costNano,
      });
      return outcome;
    } catch (error) {
      await this.deps.idempotency
        .abandon(caller.accountId, idempotencyKey)
        .catch((abandonError: unknown) =>
          this.deps.logger.error(
            { err: abandonError, reqId: caller.requestId },
            'dropping an idempotency claim failed',
          ),
        );
      throw error;
    }
  }

  /** Sets an account's caps tier (operator CLI). */
  async setTier(auth: AuthContext, accountId: string, tier: string): Promise<RpcTier> {
    requireOperator(auth);
    if (!(RPC_TIERS as readonly string[]).includes(tier))
      throw new ValidationError(`The tier is one of ${RPC_TIERS.join(', ')}`);
    const ok = /^[0-9a-f-]{36}$/i.test(accountId) && (await this.deps.tiers.set(accountId, tier as RpcTier));
    if (!ok) throw new NotFoundError(`Account ${accountId} not found`);
    return tier as RpcTier;
  }

  /** Waits for charges and logs still being written (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.flush();
    await Promise.all([
      this.deps.caps.close(),
      ...[...this.deps.setup.networks.values()].map((network) => network.upstreams.close()),
    ]);
  }

  private network(slug: string): RpcNetwork {
    const network = this.deps.setup.networks.get(slug);
    if (network) return network;
    const served = [...this.deps.setup.networks.keys()].sort();
    throw new ValidationError(
      `Unknown network "${clip(slug)}"; served networks: ${served.join(', ') || 'none (the operator configured no RPC upstream)'}`,
      [{ path: ['network'], message: 'Unknown network' }],
    );
  }

  private async forward(
    caller: AccountAuthContext,
    network: RpcNetwork,
    parsed: ParsedRpcRequest,
    signal: AbortSignal | undefined,
  ): Promise<RpcCallOutcome> {
    const { billing, caps, logger, setup } = this.deps;
    const tier = await this.deps.tiers.get(caller.accountId);
    const heldCredits = maxCredits(network.baseCredits, parsed.items);
    const hold = await caps.admit(caller.accountId, tier, heldCredits);
    const maxCost = costOfCredits(heldCredits, setup.pricePerCreditAtto);
    try {
      // An upstream failure releases the hold (nothing is charged) and gives the cap's credits back.
      return await billing.paidCall(caller, { usd: maxCost, diem: maxCost }, async (paid) => {
        const started = performance.now();
        const answer = await network.upstreams.send(parsed.forwardBody, {
          signal,
          accept: ({ body }) => {
            const analysis = analyzeResponse(parsed.items, parsed.batch, body);
            return analysis.ok ? { ok: true, value: analysis } : { ok: false, reason: analysis.reason };
          },
          onFailure: (upstream, reason) =>
            logger.warn({ reqId: caller.requestId, network: network.slug, upstream, reason }, 'rpc upstream failed'),
        });
        const ms = Math.round(performance.now() - started);
        const { errored, answered, body } = answer.value;
        const credits = chargedCredits(network.baseCredits, parsed.items, errored);
        const costNano = costOfCredits(credits, setup.pricePerCreditAtto);
        const usage = rpcUsage(network.slug, setup.pricePerCreditUsd, credits, costNano, {
          calls: parsed.items.length,
          errors: errored.filter(Boolean).length,
          requestId: caller.requestId,
          executionTimeMs: ms,
          providerId: answer.upstreamId,
        });
        const rawTransactions = parsed.items.flatMap((item, index): RawTransactionLogEntry[] =>
          item.rawTransaction
            ? [
                {
                  accountId: caller.accountId,
                  apiKeyId: keyOf(caller)?.id ?? null,
                  network: network.slug,
                  requestId: caller.requestId,
                  txHash: transactionHash(item.rawTransaction),
                  outcome: !answered[index] ? 'unanswered' : errored[index] ? 'rejected' : 'accepted',
                },
              ]
            : [],
        );
        if (rawTransactions.length > 0) this.logRawTransactions(rawTransactions);
        // Settled after the answer is handed back (the hold guarantees the funds): the settlement owns the call.
        const settlement = this.track(this.settle(paid.handOff(), usage, hold, credits, caller));
        return { status: 200, body, credits, costNano, replayed: false, settlement };
      });
    } catch (error) {
      await this.giveBack(hold, caller);
      throw error;
    }
  }

  private async settle(
    paid: PaidCall,
    usage: Usage,
    hold: CreditHold,
    credits: number,
    caller: AccountAuthContext,
  ): Promise<SettledCharge | undefined> {
    const [charge] = await Promise.all([
      paid.settle(usage).catch(async (error: unknown) => {
        this.deps.logger.error(
          { err: error, reqId: caller.requestId, reservationId: paid.reservation.id },
          'settling an rpc charge failed; its hold is released',
        );
        await paid.release();
        return undefined;
      }),
      this.deps.caps
        .settle(hold, credits)
        .catch((error: unknown) =>
          this.deps.logger.warn({ err: error, reqId: caller.requestId }, 'adjusting the rpc credit cap failed'),
        ),
    ]);
    return charge;
  }

  /** Traceable: hash, network, request id and account in the log and the table; never the signed payload. */
  private logRawTransactions(entries: RawTransactionLogEntry[]): void {
    for (const entry of entries) {
      this.deps.logger.info(
        {
          reqId: entry.requestId,
          network: entry.network,
          accountId: entry.accountId,
          apiKeyId: entry.apiKeyId,
          txHash: entry.txHash,
          outcome: entry.outcome,
        },
        'eth_sendRawTransaction',
      );
    }
    this.track(
      insertRawTransactions(this.deps.db, entries).catch((error: unknown) =>
        this.deps.logger.error(
          { err: error, txHashes: entries.map((e) => e.txHash) },
          'writing the raw transaction log failed',
        ),
      ),
    );
  }

  private async giveBack(hold: CreditHold, caller: AccountAuthContext): Promise<void> {
    await this.deps.caps
      .settle(hold, 0)
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: error, reqId: caller.requestId }, 'returning rpc cap credits failed'),
      );
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work)).catch(() => undefined);
    return work;
  }
}

/** The hash an Ethereum node gives a signed raw transaction: keccak-256 of its bytes, as 0x-prefixed hex. */
function transactionHash(raw: `0x${string}`): string {
  return `0x${Buffer.from(keccak_256(Buffer.from(raw.slice(2), 'hex'))).toString('hex')}`;
}

/**
 * Who may call the proxy: an API-key account today. Wallet sign-in (a Bearer key or a wallet header)
 * arrives with the wallets issue: its AuthContext kind is accepted here and billed from the wallet's balance.
 */
function requireRpcCaller(auth: AuthContext): AccountAuthContext {
  return requireAccount(auth);
}

function readJson(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) throw new ValidationError('Request body is empty; send a JSON-RPC 2.0 request or batch');
  try {
    return JSON.parse(decoder.decode(bytes));
  } catch {
    throw new ValidationError('Request body is not valid JSON');
  }
}

/** One usage entry per request or batch: credits at the price per credit, the sku naming the network. */
function rpcUsage(
  slug: string,
  pricePerCreditUsd: string,
  credits: number,
  cost: Nano,
  details: { calls: number; errors: number; requestId: string; executionTimeMs: number; providerId: string },
): Usage {
  const { calls, errors } = details;
  const sku = `crypto-rpc-${slug}`;
  return {
    modelId: sku,
    providerId: details.providerId,
    modelType: 'RPC',
    unitType: 'credits',
    notes: `JSON-RPC on ${slug}: ${calls} call${calls === 1 ? '' : 's'}${errors > 0 ? `, ${errors} answered with an error` : ''}`,
    lines: [
      {
        sku,
        lineType: 'Credits',
        units: String(credits),
        pricePerUnitUsd: pricePerCreditUsd,
        cost: { usd: cost, diem: cost },
      },
    ],
    inferenceDetails: { requestId: details.requestId, inferenceExecutionTime: details.executionTimeMs },
  };
}
