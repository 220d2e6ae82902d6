import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { ChainReader, ExpectedTransfer } from './top-up-chain.ts';
import * as repo from './top-up.repository.ts';

/*
 * The top-up sweep (at start-up and every minute, src/services.ts): every payment row that is not credited, `failed`
 * ones included, is checked against the chain until the chain has decided it for good. A transfer to the receiver
 * that nobody reported (an answer lost, someone else's copy of the transaction mined first, a crash before the
 * credit) is credited once; a row is closed when its authorization can no longer pay: cancelled or its nonce spent
 * on another transfer, or validBefore passed in a block `confirmations` deep while it was unused.
 */

/** Rows checked per run; more wait for the next run (least recently checked first). */
const SWEEP_BATCH = 200;

export interface SweepDeps {
  readonly db: Database;
  readonly logger: Logger;
  readonly receiver: string;
  readonly confirmations: number;
  /** Unset: no node to ask (facilitator only), so only what the facilitator said can be acted on. */
  readonly reader: ChainReader | undefined;
  readonly nowSeconds: () => bigint;
  readonly onCredited: (accountId: string, credit: repo.CreditedTopUp) => void;
}

export interface SweepResult {
  readonly credited: number;
  readonly failed: number;
}

export async function sweepTopUps(deps: SweepDeps): Promise<SweepResult> {
  const { db, logger, reader } = deps;
  const rows = await repo.takeOpen(db, SWEEP_BATCH);
  if (rows.length === 0) return { credited: 0, failed: 0 };
  let credited = 0;
  let failed = 0;
  const credit = async (row: repo.PaymentRow, txHash: string | null) => {
    const done = await repo.creditSettled(db, row.id, txHash, null);
    if (done.credited) {
      credited += 1;
      deps.onCredited(row.account_id, {
        paymentId: row.id,
        amount: row.amount_nano,
        balanceAfter: done.balanceAfter ?? null,
        payer: row.payer,
        transaction: txHash ?? row.tx_hash,
      });
    }
  };
  const close = async (row: repo.PaymentRow, reason: string) => {
    await repo.close(db, row.id, reason);
    failed += 1;
  };
  if (!reader) {
    const now = deps.nowSeconds();
    for (const row of rows) {
      // Without a node, a recorded hash can only be a facilitator's successful /settle (top-up-settlement.ts).
      if (row.status === 'pending' && row.tx_hash) await credit(row, row.tx_hash);
      else if (secondsOf(row.valid_before) <= now) await close(row, 'not settled before validBefore');
    }
    return report(logger, { credited, failed });
  }
  const finalAt = await reader.finalTimestamp(deps.confirmations).catch((error: unknown) => {
    logger.warn({ err: error }, 'x402 top-up sweep could not read the latest block');
    return undefined;
  });
  for (const row of rows) {
    const evidence = await reader
      .evidence(expectedOfRow(row, deps.receiver), row.tx_hash ? [row.tx_hash] : [])
      .catch((error: unknown) => {
        logger.warn({ err: error, paymentId: row.id }, 'x402 top-up sweep could not check the chain');
        return undefined;
      });
    if (!evidence) continue;
    if (evidence.state === 'paid') await credit(row, evidence.txHash);
    else if (evidence.state === 'spent') await close(row, evidence.reason);
    else if (finalAt !== undefined && secondsOf(row.valid_before) <= finalAt) {
      if (evidence.state === 'untraced')
        logger.error(
          { paymentId: row.id, payer: row.payer, nonce: row.nonce },
          'x402 top-up: the authorization was used on chain but its transaction was not found; check it by hand',
        );
      await close(
        row,
        evidence.state === 'unused' ? 'the authorization expired unused' : 'used; transaction not found',
      );
    }
  }
  return report(logger, { credited, failed });
}

/** What a row's authorization must have done on chain to be credited (rows older than `pay_to` paid `receiver`). */
export function expectedOfRow(row: repo.PaymentRow, receiver: string): ExpectedTransfer {
  return { asset: row.asset, from: row.payer, to: row.pay_to ?? receiver, value: row.amount_units, nonce: row.nonce };
}

function secondsOf(date: Date): bigint {
  return BigInt(Math.floor(date.getTime() / 1000));
}

function report(logger: Logger, result: SweepResult): SweepResult {
  if (result.credited + result.failed > 0) logger.info(result, 'x402 top-ups recovered');
  return result;
}
