import {
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  nonceManager,
  parseAbi,
  parseEventLogs,
  parseSignature,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ParsedPayment } from './top-up-payload.ts';
import { BASE_CHAIN_ID, X402_VERSION, type PaymentRequirement } from './payment-requirements.ts';

/*
 * Settling a verified top-up: on chain with the configured settlement key (viem calls the token's
 * `transferWithAuthorization`, waits for the receipt and checks its Transfer event), or through an x402
 * facilitator (`POST /verify`, then `POST /settle`). Either way the transaction hash is handed to `onSubmitted`
 * as soon as it is known, so a crash before the credit can be finished from it on restart.
 */

export const USDC_ABI = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

/** Enough for USDC's transferWithAuthorization (about 80k); fixed so a reverting call is mined, not guessed at. */
const SETTLEMENT_GAS = 200_000n;
const RECEIPT_TIMEOUT_MS = 120_000;

export type SettlementOutcome =
  | { readonly ok: true; readonly txHash: Hex }
  | {
      readonly ok: false;
      readonly reason: string;
      readonly txHash?: Hex;
      /** The transfer may still happen (no receipt in time, the facilitator's /settle unanswered): keep it pending. */
      readonly uncertain?: boolean;
    };

/** What a transfer should have done: `value` units of `asset` from `from` to `to`. */
export interface ExpectedTransfer {
  readonly asset: string;
  readonly from: string;
  readonly to: string;
  readonly value: bigint;
}

export interface Settler {
  settle(
    payment: ParsedPayment,
    requirement: PaymentRequirement,
    onSubmitted: (txHash: Hex) => Promise<void>,
  ): Promise<SettlementOutcome>;
}

/** Reads the chain: a recorded transaction's result, and whether an authorization nonce was used. */
export class ChainReader {
  readonly client: PublicClient;

  constructor(rpcUrl: string) {
    // Base makes a block every 2 s: poll receipts more often than viem's 4 s default.
    this.client = createPublicClient({
      chain: baseChain(rpcUrl),
      transport: http(rpcUrl),
      pollingInterval: 500,
    }) as PublicClient;
  }

  /** 'settled' if mined with the expected Transfer, 'failed' if reverted or without it, 'unknown' if not mined. */
  async transferOutcome(
    txHash: Hex,
    expected: ExpectedTransfer,
    waitMs = 0,
  ): Promise<'settled' | 'failed' | 'unknown'> {
    const receipt =
      waitMs > 0
        ? await this.client.waitForTransactionReceipt({ hash: txHash, timeout: waitMs }).catch(() => undefined)
        : await this.client.getTransactionReceipt({ hash: txHash }).catch(() => undefined);
    if (!receipt) return 'unknown';
    if (receipt.status !== 'success') return 'failed';
    const asset = getAddress(expected.asset);
    const transfers = parseEventLogs({ abi: USDC_ABI, eventName: 'Transfer', logs: receipt.logs });
    const found = transfers.some(
      (log) =>
        getAddress(log.address) === asset &&
        log.args.from.toLowerCase() === expected.from.toLowerCase() &&
        log.args.to.toLowerCase() === expected.to.toLowerCase() &&
        log.args.value === expected.value,
    );
    return found ? 'settled' : 'failed';
  }

  async authorizationUsed(asset: string, authorizer: string, nonce: Hex): Promise<boolean> {
    return this.client.readContract({
      address: getAddress(asset),
      abi: USDC_ABI,
      functionName: 'authorizationState',
      args: [getAddress(authorizer), nonce],
    });
  }
}

/** Submits `transferWithAuthorization` from the settlement key and waits for its receipt. */
export class DirectSettler implements Settler {
  private readonly wallet;

  constructor(
    private readonly reader: ChainReader,
    rpcUrl: string,
    settlementKey: Hex,
  ) {
    // The nonce manager keeps concurrent settlements from one key from reusing a transaction nonce.
    const account = privateKeyToAccount(settlementKey, { nonceManager });
    this.wallet = createWalletClient({ account, chain: baseChain(rpcUrl), transport: http(rpcUrl) });
  }

  async settle(
    payment: ParsedPayment,
    requirement: PaymentRequirement,
    onSubmitted: (txHash: Hex) => Promise<void>,
  ): Promise<SettlementOutcome> {
    const { authorization } = payment;
    const { r, s, v, yParity } = parseSignature(payment.signature);
    let txHash: Hex;
    try {
      txHash = await this.wallet.writeContract({
        address: getAddress(requirement.asset),
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
        gas: SETTLEMENT_GAS,
      });
    } catch (error) {
      return { ok: false, reason: `the transaction was not accepted: ${shortMessage(error)}` };
    }
    await onSubmitted(txHash);
    const outcome = await this.reader.transferOutcome(txHash, expectedOf(payment, requirement), RECEIPT_TIMEOUT_MS);
    if (outcome === 'settled') return { ok: true, txHash };
    if (outcome === 'unknown') return { ok: false, txHash, reason: 'no receipt in time', uncertain: true };
    return { ok: false, txHash, reason: 'the transfer reverted or moved other funds' };
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
    onSubmitted: (txHash: Hex) => Promise<void>,
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
    if (txHash) await onSubmitted(txHash);
    if (settled.success !== true || !txHash)
      return {
        ok: false,
        reason: `the facilitator did not settle it: ${settled.errorReason ?? 'no transaction'}`,
        ...(txHash ? { txHash } : {}),
      };
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

export function expectedOf(payment: ParsedPayment, requirement: PaymentRequirement): ExpectedTransfer {
  return {
    asset: requirement.asset,
    from: payment.authorization.from,
    to: payment.authorization.to,
    value: payment.authorization.value,
  };
}

function baseChain(rpcUrl: string) {
  return defineChain({
    id: BASE_CHAIN_ID,
    name: 'Base',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
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
