import { getAddress, type Hex } from 'viem';
import { findOrCreateWalletAccount } from '../accounts/account.repository.ts';
import type { AuthContext } from '../auth/auth-context.ts';
import { nanoToNumber } from '../billing/money.ts';
import type { X402Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { TopUpMetrics } from '../observability/app-metrics.ts';
import { BASE_NETWORK, paymentRequirements, X402_VERSION, type PaymentRequirement } from './payment-requirements.ts';
import { ChainReader, type AuthorizationEvidence, type ExpectedTransfer } from './top-up-chain.ts';
import { invalidPayment, paymentInProgress, settlementFailed, TopUpFailure } from './top-up-errors.ts';
import { parsePaymentHeader } from './top-up-payload.ts';
import * as repo from './top-up.repository.ts';
import { DirectSettler, FacilitatorSettler, type Settler } from './top-up-settlement.ts';
import { expectedOfRow, sweepTopUps } from './top-up-sweep.ts';
import { verifyPayment } from './top-up-verify.ts';

export interface TopUpResult {
  readonly walletAddress: string;
  readonly amountCredited: number;
  readonly newBalance: number;
  readonly paymentId: string;
  /** The `PAYMENT-RESPONSE` header's object. */
  readonly settlement: { success: true; network: string; payer: string; transaction: string };
}

/** An x402 v2 PaymentRequired body: only the fields v2 defines, as x402 clients read it unchanged. */
export interface TopUpPaymentRequired {
  readonly x402Version: typeof X402_VERSION;
  readonly error: 'Payment required';
  readonly accepts: PaymentRequirement[];
}

export interface TopUpServiceDeps {
  readonly db: Database;
  readonly logger: Logger;
  readonly x402: X402Config;
  /** Told after a credit committed (the wallet balance subscription); optional. */
  readonly onCredited?: (accountId: string, credit: repo.CreditedTopUp) => void;
  /** Current Unix time in seconds (tests move it). */
  readonly nowSeconds?: () => bigint;
  /** Counts top-ups by outcome (the app's metrics). */
  readonly metrics?: TopUpMetrics | undefined;
}

/** The row a credit moves to `settled`, and what the answer reports. */
interface Creditable {
  readonly id: string;
  readonly accountId: string;
  readonly payer: string;
  readonly amountNano: bigint;
}

/**
 * POST /x402/top-up (docs/api.md#wallet-top-up-x402): verify an EIP-3009 authorization, record it (unique per
 * token, payer and nonce), settle it on chain or through a facilitator, then credit the payer's wallet account once.
 * Where a node is configured, whether the authorization paid the receiver is decided on the chain's evidence
 * (top-up-chain.ts), not on who submitted it or whether an answer arrived.
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
   * The 402 of a top-up without a payment (docs/api.md#wallet-top-up-x402): x402 v2's PaymentRequired body
   * `{x402Version, error, accepts}` (no Lagoon `code`), and the same object base64 in the PAYMENT-REQUIRED header.
   */
  paymentRequired(): { body: TopUpPaymentRequired; header: string } {
    const accepts = this.requirements();
    const body: TopUpPaymentRequired = { x402Version: X402_VERSION, error: 'Payment required', accepts };
    // The header carries the same object as the body, base64.
    return { body, header: Buffer.from(JSON.stringify(body), 'utf8').toString('base64') };
  }

  /**
   * Anyone may top up any wallet: the payer is whoever signed the authorization, and the credit goes to it. Counted
   * by outcome: credited, refused (a bad or used payment, 4xx), failed (not configured, or the settlement failed).
   */
  async topUp(auth: AuthContext, paymentHeaderValue: string): Promise<TopUpResult> {
    try {
      const result = await this.settleTopUp(auth, paymentHeaderValue);
      this.deps.metrics?.observeTopUp('credited');
      return result;
    } catch (error) {
      const refused = error instanceof TopUpFailure && error.status < 500 && error.status !== 402;
      this.deps.metrics?.observeTopUp(refused ? 'refused' : 'failed');
      throw error;
    }
  }

  private async settleTopUp(auth: AuthContext, paymentHeaderValue: string): Promise<TopUpResult> {
    const [requirement] = this.requirements();
    if (!requirement || !this.settler)
      throw new TopUpFailure(503, { error: 'Top-ups are not configured on this server', code: 'SERVICE_UNAVAILABLE' });
    const payment = parsePaymentHeader(paymentHeaderValue);
    const verified = await verifyPayment(this.deps.x402, payment, this.now());
    const { db, logger } = this.deps;
    const account = await findOrCreateWalletAccount(db, verified.payer);
    const expected: ExpectedTransfer = {
      asset: requirement.asset,
      from: verified.payer,
      to: payment.authorization.to,
      value: verified.amountUnits,
      nonce: payment.authorization.nonce,
    };
    const paymentId = await repo.insertPending(db, {
      asset: requirement.asset,
      nonce: expected.nonce,
      payer: verified.payer,
      payTo: expected.to,
      accountId: account.id,
      amountUnits: verified.amountUnits,
      amountNano: verified.amountNano,
      validBefore: verified.validBefore,
    });
    if (!paymentId) return this.replay(auth, expected);
    const row: Creditable = {
      id: paymentId,
      accountId: account.id,
      payer: verified.payer,
      amountNano: verified.amountNano,
    };

    // Used before it reached us: if that use paid us, it is this top-up; otherwise the nonce is gone.
    const before = await this.evidence(expected, []);
    if (before?.state === 'paid') return this.credit(auth, row, before.txHash);
    if (before && before.state !== 'unused') {
      if (before.state === 'spent') await repo.close(db, paymentId, before.reason);
      else await repo.markFailed(db, paymentId, 'nonce already used on chain');
      throw invalidPayment('nonce_already_used', 'This authorization nonce was already used on chain');
    }

    const outcome = await this.settler
      .settle(payment, requirement, (txHash) => repo.recordTxHash(db, paymentId, txHash))
      .catch((error: unknown) => ({ ok: false as const, reason: error instanceof Error ? error.message : 'error' }));
    if (outcome.ok) return this.credit(auth, row, outcome.txHash);
    // The settler's failure is its own view: the chain says whether the authorization paid us all the same.
    const txHash = 'txHash' in outcome ? outcome.txHash : undefined;
    const after = await this.evidence(expected, txHash ? [txHash] : []);
    if (after?.state === 'paid') return this.credit(auth, row, after.txHash);
    if (after?.state === 'spent') {
      await repo.close(db, paymentId, `${outcome.reason}; ${after.reason}`);
      throw settlementFailed(outcome.reason);
    }
    if (('uncertain' in outcome && outcome.uncertain === true) || after?.state === 'untraced') {
      // Left pending: the sweep credits it once the chain shows the transfer, or closes it after validBefore.
      logger.warn({ paymentId, reason: outcome.reason }, 'x402 top-up settlement outcome unknown');
      throw settlementFailed(`${outcome.reason}; it is credited later if the transfer went through`);
    }
    // Failed, yet still watched by the sweep until validBefore: someone may still use the authorization.
    await repo.markFailed(db, paymentId, outcome.reason, txHash);
    logger.warn({ paymentId, reason: outcome.reason }, 'x402 top-up settlement failed');
    throw settlementFailed(outcome.reason);
  }

  /**
   * Finishes what requests left open (a crash, a lost answer, a transfer made by someone else, a failure that was
   * not one): see top-up-sweep.ts. Safe to run in every process at once: a credit happens once.
   */
  async recover(): Promise<{ credited: number; failed: number }> {
    const { db, logger, x402 } = this.deps;
    const swept = await sweepTopUps({
      db,
      logger,
      receiver: x402.receiver ?? '',
      confirmations: x402.confirmations,
      reader: this.reader,
      nowSeconds: this.now,
      onCredited: (accountId, credit) => this.deps.onCredited?.(accountId, credit),
    });
    for (let i = 0; i < swept.credited; i += 1) this.deps.metrics?.observeTopUp('recovered');
    return swept;
  }

  /**
   * The same authorization again: in progress (409), or used (400). A `failed` row the chain shows paid is
   * credited now, once, instead of waiting for the sweep.
   */
  private async replay(auth: AuthContext, expected: ExpectedTransfer): Promise<TopUpResult> {
    const row = await repo.findPayment(this.deps.db, {
      asset: expected.asset,
      payer: expected.from,
      nonce: expected.nonce,
    });
    if (row?.status === 'pending') throw paymentInProgress();
    if (row?.status === 'failed' && !row.closed_at) {
      const evidence = await this.evidence(
        expectedOfRow(row, this.deps.x402.receiver ?? ''),
        row.tx_hash ? [row.tx_hash] : [],
      );
      const creditable = {
        id: row.id,
        accountId: row.account_id,
        payer: getAddress(row.payer),
        amountNano: row.amount_nano,
      };
      if (evidence?.state === 'paid') {
        const result = await this.credit(auth, creditable, evidence.txHash, true);
        if (result) return result;
      }
    }
    throw invalidPayment('nonce_already_used', 'This authorization nonce was already used');
  }

  /** The chain's evidence, or undefined without a node or when it could not be read. */
  private async evidence(
    expected: ExpectedTransfer,
    knownTxHashes: string[],
  ): Promise<AuthorizationEvidence | undefined> {
    if (!this.reader) return undefined;
    return this.reader.evidence(expected, knownTxHashes).catch((error: unknown) => {
      this.deps.logger.warn({ err: error }, 'x402 top-up could not check the chain');
      return undefined;
    });
  }

  /**
   * Credits the row (once, whoever gets there first) and answers as a top-up does. A row credited meanwhile by the
   * sweep still answers success, with the balance now; with `onlyIfCredited`, it answers undefined instead.
   */
  private async credit(
    auth: AuthContext,
    row: Creditable,
    txHash: string,
    onlyIfCredited: true,
  ): Promise<TopUpResult | undefined>;
  private async credit(auth: AuthContext, row: Creditable, txHash: string): Promise<TopUpResult>;
  private async credit(auth: AuthContext, row: Creditable, txHash: string, onlyIfCredited = false) {
    const { db } = this.deps;
    const credit = await repo.creditSettled(db, row.id, txHash, auth.requestId ?? null);
    if (credit.credited)
      this.deps.onCredited?.(row.accountId, {
        paymentId: row.id,
        amount: row.amountNano,
        balanceAfter: credit.balanceAfter ?? null,
        payer: row.payer,
        transaction: txHash,
      });
    else if (onlyIfCredited) return undefined;
    const balance = credit.balanceAfter ?? (await repo.usdBalance(db, row.accountId));
    return {
      walletAddress: row.payer,
      amountCredited: nanoToNumber(row.amountNano),
      newBalance: nanoToNumber(balance),
      paymentId: row.id,
      settlement: { success: true, network: BASE_NETWORK, payer: row.payer, transaction: txHash },
    } satisfies TopUpResult;
  }
}
