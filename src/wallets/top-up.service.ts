import type { Hex } from 'viem';
import { findOrCreateWalletAccount } from '../accounts/account.repository.ts';
import type { AuthContext } from '../auth/auth-context.ts';
import { nanoToNumber } from '../billing/money.ts';
import type { X402Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import {
  BASE_NETWORK,
  paymentRequiredHeader,
  paymentRequirements,
  X402_VERSION,
  type PaymentRequirement,
} from './payment-requirements.ts';
import { invalidPayment, paymentInProgress, settlementFailed, TopUpFailure } from './top-up-errors.ts';
import { parsePaymentHeader } from './top-up-payload.ts';
import * as repo from './top-up.repository.ts';
import { ChainReader, DirectSettler, FacilitatorSettler, type Settler } from './top-up-settlement.ts';
import { verifyPayment } from './top-up-verify.ts';

export interface TopUpResult {
  readonly walletAddress: string;
  readonly amountCredited: number;
  readonly newBalance: number;
  readonly paymentId: string;
  /** The `PAYMENT-RESPONSE` header's object. */
  readonly settlement: { success: true; network: string; payer: string; transaction: string };
}

export interface TopUpPaymentRequired {
  readonly x402Version: typeof X402_VERSION;
  readonly error: 'Payment required';
  readonly code: 'PAYMENT_REQUIRED';
  readonly accepts: PaymentRequirement[];
}

export interface TopUpServiceDeps {
  readonly db: Database;
  readonly logger: Logger;
  readonly x402: X402Config;
  /** Told after a credit committed (the wallet balance subscription); optional. */
  readonly onCredited?: (accountId: string) => void;
  /** Current Unix time in seconds (tests move it). */
  readonly nowSeconds?: () => bigint;
}

/**
 * POST /x402/top-up (decisions in docs/api.md, Top-up): verify an EIP-3009 authorization, record it (its nonce
 * unique per token), settle it on chain or through a facilitator, then credit the payer's wallet account once.
 */
export class TopUpService {
  private readonly settler: Settler | undefined;
  private readonly reader: ChainReader | undefined;
  private readonly now: () => bigint;

  constructor(private readonly deps: TopUpServiceDeps) {
    const { x402 } = deps;
    this.reader = x402.baseRpcUrl ? new ChainReader(x402.baseRpcUrl) : undefined;
    if (x402.facilitatorUrl) this.settler = new FacilitatorSettler(x402.facilitatorUrl);
    else if (this.reader && x402.baseRpcUrl && x402.settlementKey)
      this.settler = new DirectSettler(this.reader, x402.baseRpcUrl, x402.settlementKey as Hex);
    this.now = deps.nowSeconds ?? (() => BigInt(Math.floor(Date.now() / 1000)));
  }

  /** The `accepts` list a 402 answer offers (empty while top-ups are off). */
  requirements(): PaymentRequirement[] {
    return paymentRequirements(this.deps.x402);
  }

  /**
   * The 402 of a top-up without a payment (docs/api.md, Wallet top-up): decisions' `{x402Version, accepts}` plus the
   * error and code every error body carries, and the PAYMENT-REQUIRED header (base64 of `{x402Version, accepts}`).
   */
  paymentRequired(): { body: TopUpPaymentRequired; header: string } {
    const accepts = this.requirements();
    const body = { x402Version: X402_VERSION, error: 'Payment required', code: 'PAYMENT_REQUIRED', accepts } as const;
    return { body, header: paymentRequiredHeader(this.deps.x402, accepts) };
  }

  /** Anyone may top up any wallet: the payer is whoever signed the authorization, and the credit goes to it. */
  async topUp(auth: AuthContext, paymentHeaderValue: string): Promise<TopUpResult> {
    const [requirement] = this.requirements();
    if (!requirement || !this.settler)
      throw new TopUpFailure(503, { error: 'Top-ups are not configured on this server', code: 'SERVICE_UNAVAILABLE' });
    const payment = parsePaymentHeader(paymentHeaderValue);
    const verified = await verifyPayment(this.deps.x402, payment, this.now());
    const { db } = this.deps;
    const account = await findOrCreateWalletAccount(db, verified.payer);
    const nonce = payment.authorization.nonce;
    const paymentId = await repo.insertPending(db, {
      asset: requirement.asset,
      nonce,
      payer: verified.payer,
      accountId: account.id,
      amountUnits: verified.amountUnits,
      amountNano: verified.amountNano,
      validBefore: verified.validBefore,
    });
    if (!paymentId) {
      const existing = await repo.findByNonce(db, requirement.asset, nonce);
      if (existing?.status === 'pending') throw paymentInProgress();
      throw invalidPayment('nonce_already_used', 'This authorization nonce was already used');
    }
    // An authorization used elsewhere on chain (not through this server) would only revert: refuse it now.
    if (this.reader && (await this.nonceUsedOnChain(requirement.asset, payment.authorization.from, nonce))) {
      await repo.markFailed(db, paymentId, 'nonce already used on chain');
      throw invalidPayment('nonce_already_used', 'This authorization nonce was already used on chain');
    }
    const outcome = await this.settler
      .settle(payment, requirement, (txHash) => repo.recordTxHash(db, paymentId, txHash))
      .catch((error: unknown) => ({ ok: false as const, reason: error instanceof Error ? error.message : 'error' }));
    if (!outcome.ok && 'uncertain' in outcome && outcome.uncertain === true) {
      // Left pending: recover() credits it once the chain shows the transfer, or fails it after validBefore.
      this.deps.logger.warn({ paymentId, reason: outcome.reason }, 'x402 top-up settlement outcome unknown');
      throw settlementFailed(`${outcome.reason}; it is credited later if the transfer went through`);
    }
    if (!outcome.ok) {
      await repo.markFailed(db, paymentId, outcome.reason);
      this.deps.logger.warn({ paymentId, reason: outcome.reason }, 'x402 top-up settlement failed');
      throw settlementFailed(outcome.reason);
    }
    const credit = await repo.creditSettled(db, paymentId, outcome.txHash, auth.requestId ?? null);
    if (credit.credited) this.deps.onCredited?.(account.id);
    const balance = credit.balanceAfter ?? (await repo.usdBalance(db, account.id));
    return {
      walletAddress: verified.payer,
      amountCredited: nanoToNumber(verified.amountNano),
      newBalance: nanoToNumber(balance),
      paymentId,
      settlement: { success: true, network: BASE_NETWORK, payer: verified.payer, transaction: outcome.txHash },
    };
  }

  /**
   * Finishes what a crash left pending: a row with a transaction hash is credited once if that transaction moved
   * the funds, or marked failed if it reverted; a row without one whose authorization expired is credited if the
   * chain says the authorization was used (the hash was lost), otherwise marked failed. Other rows may still be
   * settling in another process and are left alone.
   */
  async recover(): Promise<{ credited: number; failed: number }> {
    const { db, logger } = this.deps;
    let credited = 0;
    let failed = 0;
    const nowMs = Number(this.now()) * 1000;
    for (const row of await repo.listPending(db)) {
      const verdict = await this.recoveryVerdict(row, nowMs).catch((error: unknown) => {
        logger.warn({ err: error, paymentId: row.id }, 'x402 top-up recovery could not check the chain');
        return 'unknown' as const;
      });
      if (verdict === 'settled') {
        if ((await repo.creditSettled(db, row.id, row.tx_hash, null)).credited) {
          credited += 1;
          this.deps.onCredited?.(row.account_id);
        }
      } else if (verdict === 'failed') {
        await repo.markFailed(db, row.id, 'not settled (found on restart)');
        failed += 1;
      }
    }
    if (credited + failed > 0) logger.info({ credited, failed }, 'x402 top-ups recovered');
    return { credited, failed };
  }

  private async recoveryVerdict(
    row: Awaited<ReturnType<typeof repo.listPending>>[number],
    nowMs: number,
  ): Promise<'settled' | 'failed' | 'unknown'> {
    const expired = row.valid_before.getTime() <= nowMs;
    if (row.tx_hash) {
      // Without a node to ask, a hash can only have come from a facilitator's successful /settle.
      if (!this.reader) return this.deps.x402.facilitatorUrl ? 'settled' : 'unknown';
      const outcome = await this.reader.transferOutcome(row.tx_hash as Hex, {
        asset: row.asset,
        from: row.payer,
        to: this.deps.x402.receiver ?? '',
        value: row.amount_units,
      });
      return outcome === 'unknown' && expired ? this.usedVerdict(row) : outcome;
    }
    if (!expired) return 'unknown';
    return this.usedVerdict(row);
  }

  /** After validBefore nobody can use the authorization any more: used means it paid us (its `to` is signed). */
  private async usedVerdict(row: { asset: string; payer: string; nonce: string }): Promise<'settled' | 'failed'> {
    if (!this.reader) return 'failed';
    return (await this.nonceUsedOnChain(row.asset, row.payer, row.nonce)) ? 'settled' : 'failed';
  }

  private nonceUsedOnChain(asset: string, authorizer: string, nonce: string): Promise<boolean> {
    if (!this.reader) return Promise.resolve(false);
    return this.reader.authorizationUsed(asset, authorizer, nonce as Hex);
  }
}
