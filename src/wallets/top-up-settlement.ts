import {
  createWalletClient,
  encodeFunctionData,
  getAddress,
  http,
  keccak256,
  parseSignature,
  RpcRequestError,
  type Hex,
  type TransactionSerializable,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createNonceManager, jsonRpc } from 'viem/nonce';
import type { ParsedPayment } from './top-up-payload.ts';
import { X402_VERSION, type PaymentRequirement } from './payment-requirements.ts';
import { baseChain, USDC_ABI, type ChainReader } from './top-up-chain.ts';

/*
 * Settling a verified top-up: on chain with the configured settlement key (the token's `transferWithAuthorization`),
 * or through an x402 facilitator (`POST /verify`, then `POST /settle`). What a settler reports is only its side of
 * the story; where a node is configured, the service asks the chain what happened (top-up-chain.ts).
 */

/** Enough for USDC's transferWithAuthorization (about 80k); fixed so a reverting call is mined, not guessed at. */
const SETTLEMENT_GAS = 200_000n;
const RECEIPT_TIMEOUT_MS = 120_000;

export type SettlementOutcome =
  | { readonly ok: true; readonly txHash: Hex }
  | {
      readonly ok: false;
      readonly reason: string;
      readonly txHash?: Hex;
      /** The transfer may still happen (no receipt in time, an answer that never came): keep it pending. */
      readonly uncertain?: boolean;
    };

export interface Settler {
  /** `recordTxHash` is called with the transaction's hash before it can reach the chain (direct) or once known. */
  settle(
    payment: ParsedPayment,
    requirement: PaymentRequirement,
    recordTxHash: (txHash: Hex) => Promise<void>,
  ): Promise<SettlementOutcome>;
}

/**
 * Submits `transferWithAuthorization` from the settlement key and waits for its receipt. The transaction is signed
 * here and its hash (keccak256 of the signed bytes) recorded before it is sent, so a node whose answer is lost
 * cannot leave a transfer Lagoon has no trace of.
 */
export class DirectSettler implements Settler {
  private readonly account: PrivateKeyAccount;
  private readonly wallet;

  constructor(
    private readonly reader: ChainReader,
    rpcUrl: string,
    settlementKey: Hex,
  ) {
    // The nonce manager keeps concurrent settlements from one key from reusing a transaction nonce. It is this
    // settler's own: viem's shared one remembers the last nonce per (address, chain id) for the whole process, and
    // would carry it over to another node of the same chain id (a restarted or replaced node, another test chain).
    this.account = privateKeyToAccount(settlementKey, { nonceManager: createNonceManager({ source: jsonRpc() }) });
    // No retries: a resent transaction whose first answer was lost would only be refused as known.
    this.wallet = createWalletClient({
      account: this.account,
      chain: baseChain(rpcUrl),
      transport: http(rpcUrl, { retryCount: 0 }),
    });
  }

  async settle(
    payment: ParsedPayment,
    requirement: PaymentRequirement,
    recordTxHash: (txHash: Hex) => Promise<void>,
  ): Promise<SettlementOutcome> {
    let serializedTransaction: Hex;
    try {
      serializedTransaction = await this.sign(payment, requirement);
    } catch (error) {
      this.resetNonce();
      return { ok: false, reason: `the transaction could not be prepared: ${shortMessage(error)}` };
    }
    const txHash = keccak256(serializedTransaction);
    await recordTxHash(txHash);
    try {
      await this.wallet.sendRawTransaction({ serializedTransaction });
    } catch (error) {
      this.resetNonce();
      // The node may have taken it and the answer been lost: unless it knows nothing of it, wait for it as usual.
      if (!(await this.reader.knowsTransaction(txHash)))
        return {
          ok: false,
          txHash,
          reason: `the transaction was not accepted: ${shortMessage(error)}`,
          uncertain: !(error instanceof RpcRequestError),
        };
    }
    const status = await this.reader.receiptStatus(txHash, RECEIPT_TIMEOUT_MS);
    if (status === 'success') return { ok: true, txHash };
    if (status === 'unknown') return { ok: false, txHash, reason: 'no receipt in time', uncertain: true };
    return { ok: false, txHash, reason: 'the transfer reverted' };
  }

  private async sign(payment: ParsedPayment, requirement: PaymentRequirement): Promise<Hex> {
    const { authorization } = payment;
    const { r, s, v, yParity } = parseSignature(payment.signature);
    const request = await this.wallet.prepareTransactionRequest({
      account: this.account,
      nonceManager: this.account.nonceManager,
      to: getAddress(requirement.asset),
      data: encodeFunctionData({
        abi: USDC_ABI,
        functionName: 'transferWithAuthorization',
        args: [
          getAddress(authorization.from),
          getAddress(authorization.to),
          authorization.value,
          authorization.validAfter,
          authorization.validBefore,
          authorization.nonce as Hex,
          Number(v ?? BigInt(yParity + 27)),
          r,
          s,
        ],
      }),
      gas: SETTLEMENT_GAS,
    });
    // The prepared request carries the account besides the transaction's fields; the serializer reads only the latter.
    return this.account.signTransaction(request as TransactionSerializable);
  }

  /** After a failed send the next nonce is read from the node again (it counts the transaction if it took it). */
  private resetNonce(): void {
    this.account.nonceManager?.reset({ address: this.account.address, chainId: this.wallet.chain.id });
  }
}

interface FacilitatorVerify {
  isValid?: boolean;
  invalidReason?: string;
}
interface FacilitatorSettle {
  success?: boolean;
  errorReason?: string;
  transaction?: string;
}

/** An x402 facilitator: `POST {url}/verify` then `POST {url}/settle`, each `{x402Version, paymentPayload, paymentRequirements}`. */
export class FacilitatorSettler implements Settler {
  constructor(
    private readonly baseUrl: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async settle(
    payment: ParsedPayment,
    requirement: PaymentRequirement,
    recordTxHash: (txHash: Hex) => Promise<void>,
  ): Promise<SettlementOutcome> {
    const body = JSON.stringify({
      x402Version: X402_VERSION,
      paymentPayload: payment.raw,
      paymentRequirements: requirement,
    });
    const verified = await this.post<FacilitatorVerify>('/verify', body);
    if ('failed' in verified) return { ok: false, reason: verified.failed };
    if (verified.isValid !== true)
      return { ok: false, reason: `the facilitator refused it: ${verified.invalidReason ?? 'invalid'}` };
    const settled = await this.post<FacilitatorSettle>('/settle', body);
    // Unanswered, the facilitator may still have settled it.
    if ('failed' in settled) return { ok: false, reason: settled.failed, uncertain: true };
    const txHash = /^0x[0-9a-fA-F]{64}$/.test(settled.transaction ?? '') ? (settled.transaction as Hex) : undefined;
    if (settled.success !== true || !txHash)
      return {
        ok: false,
        reason: `the facilitator did not settle it: ${settled.errorReason ?? 'no transaction'}`,
        ...(txHash ? { txHash } : {}),
      };
    // Recorded on success only: without a node, a recorded hash is what the sweep credits (top-up-sweep.ts).
    await recordTxHash(txHash);
    return { ok: true, txHash };
  }

  private async post<T>(path: string, body: string): Promise<T | { failed: string }> {
    try {
      const response = await this.fetchImpl(`${this.baseUrl.replace(/\/+$/, '')}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(RECEIPT_TIMEOUT_MS),
      });
      const parsed = (await response.json().catch(() => undefined)) as T | undefined;
      if (!parsed) return { failed: `the facilitator answered ${response.status} without JSON` };
      return parsed;
    } catch (error) {
      return { failed: `the facilitator could not be reached: ${shortMessage(error)}` };
    }
  }
}

function shortMessage(error: unknown): string {
  const message =
    error && typeof error === 'object' && 'shortMessage' in error && typeof error.shortMessage === 'string'
      ? error.shortMessage
      : error instanceof Error
        ? error.message
        : String(error);
  return message.slice(0, 200);
}
