import {
  createPublicClient,
  defineChain,
  encodeEventTopics,
  getAddress,
  http,
  numberToHex,
  parseAbi,
  parseEventLogs,
  toEventSelector,
  type Hex,
  type Log,
  type PublicClient,
} from 'viem';
import { BASE_CHAIN_ID } from './payment-requirements.ts';

/*
 * What the chain says about one EIP-3009 authorization, whoever submitted it and whether any answer arrived: the
 * token's `authorizationState(from, nonce)` says whether it was used, the `AuthorizationUsed(from, nonce)` log says
 * in which transaction, and the token's next log in that transaction is the transfer it made (USDC emits
 * AuthorizationUsed and then Transfer in `transferWithAuthorization` and `receiveWithAuthorization`).
 */

export const USDC_ABI = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
]);

/** The authorization a top-up row stands for: `value` units of `asset` from `from` to `to`, under `nonce`. */
export interface ExpectedTransfer {
  readonly asset: string;
  readonly from: string;
  readonly to: string;
  readonly value: bigint;
  readonly nonce: string;
}

export type AuthorizationEvidence =
  /** This authorization moved this value from the payer to the receiver, in `txHash`. */
  | { readonly state: 'paid'; readonly txHash: Hex }
  /** Its nonce is spent some other way (cancelled, or another authorization under it): it can never pay us. */
  | { readonly state: 'spent'; readonly reason: string }
  /** Not used as of the latest block. */
  | { readonly state: 'unused' }
  /** Used, but the transaction that used it was not found in the blocks searched. */
  | { readonly state: 'untraced' };

/** Blocks per eth_getLogs request: within what public Base nodes serve in one call. */
const LOG_WINDOW = 2_000n;
/** How far back a use is looked for: about 28 hours of Base blocks (one every 2 s). */
const LOG_LOOKBACK = 50_000n;

const USED_TOPIC = toEventSelector('AuthorizationUsed(address,bytes32)');
const CANCELED_TOPIC = toEventSelector('AuthorizationCanceled(address,bytes32)');

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

  /**
   * The evidence on one authorization. `knownTxHashes` (transactions Lagoon sent or was told of) are looked at
   * first, which spares the log search when one of them used it. RPC failures are thrown.
   */
  async evidence(expected: ExpectedTransfer, knownTxHashes: readonly string[] = []): Promise<AuthorizationEvidence> {
    for (const hash of knownTxHashes) {
      const receipt = await this.client.getTransactionReceipt({ hash: hash as Hex }).catch(() => undefined);
      const found = receipt ? useIn(receipt.logs, expected) : undefined;
      if (found) return found;
    }
    const used = await this.client.readContract({
      address: getAddress(expected.asset),
      abi: USDC_ABI,
      functionName: 'authorizationState',
      args: [getAddress(expected.from), expected.nonce as Hex],
    });
    if (!used) return { state: 'unused' };
    const log = await this.findUse(expected);
    if (!log) return { state: 'untraced' };
    if (log.topics[0] === CANCELED_TOPIC) return { state: 'spent', reason: 'the authorization was cancelled' };
    const receipt = await this.client.getTransactionReceipt({ hash: log.transactionHash as Hex });
    return useIn(receipt.logs, expected) ?? { state: 'spent', reason: 'its nonce was used for another transfer' };
  }

  /** Our own transaction's fate: 'unknown' while it has no receipt (after waiting up to `waitMs`). */
  async receiptStatus(txHash: Hex, waitMs: number): Promise<'success' | 'reverted' | 'unknown'> {
    const receipt = await this.client
      .waitForTransactionReceipt({ hash: txHash, timeout: waitMs })
      .catch(() => undefined);
    return receipt?.status ?? 'unknown';
  }

  /** Whether the node knows the transaction (pending or mined). */
  async knowsTransaction(txHash: Hex): Promise<boolean> {
    return this.client.getTransaction({ hash: txHash }).then(
      () => true,
      () => false,
    );
  }

  /**
   * The timestamp (Unix seconds) of the newest block at least `confirmations` deep. No block at or after an
   * authorization's validBefore can use it, so once this passes validBefore, its evidence can no longer change.
   */
  async finalTimestamp(confirmations: number): Promise<bigint | undefined> {
    const latest = await this.client.getBlockNumber({ cacheTime: 0 });
    const depth = BigInt(confirmations);
    if (latest < depth) return undefined;
    return (await this.client.getBlock({ blockNumber: latest - depth })).timestamp;
  }

  /** The AuthorizationUsed or AuthorizationCanceled log of (from, nonce), newest blocks first. */
  private async findUse(expected: ExpectedTransfer): Promise<Log | undefined> {
    const [, authorizer, nonce] = encodeEventTopics({
      abi: USDC_ABI,
      eventName: 'AuthorizationUsed',
      args: { authorizer: getAddress(expected.from), nonce: expected.nonce as Hex },
    });
    const latest = await this.client.getBlockNumber({ cacheTime: 0 });
    const oldest = latest > LOG_LOOKBACK ? latest - LOG_LOOKBACK : 0n;
    for (let to = latest; to >= oldest; to -= LOG_WINDOW) {
      const from = to - LOG_WINDOW + 1n > oldest ? to - LOG_WINDOW + 1n : oldest;
      const logs = await this.client.request({
        method: 'eth_getLogs',
        params: [
          {
            address: getAddress(expected.asset),
            topics: [[USED_TOPIC, CANCELED_TOPIC], authorizer ?? null, nonce ?? null],
            fromBlock: numberToHex(from),
            toBlock: numberToHex(to),
          },
        ],
      });
      const log = logs.find((entry) => !entry.removed);
      if (log) return log as unknown as Log;
      if (from === oldest) break;
    }
    return undefined;
  }
}

/**
 * 'paid' if these logs hold AuthorizationUsed(from, nonce) from the token followed by the token's Transfer(from, to,
 * value); 'spent' if they hold the use but its transfer is another; undefined if they do not hold the use.
 */
function useIn(logs: readonly Log[], expected: ExpectedTransfer): AuthorizationEvidence | undefined {
  const asset = getAddress(expected.asset);
  const fromToken = logs.filter((log) => !log.removed && getAddress(log.address) === asset);
  const index = fromToken.findIndex(
    (log) =>
      log.topics[0] === USED_TOPIC &&
      parseEventLogs({ abi: USDC_ABI, eventName: 'AuthorizationUsed', logs: [log] }).some(
        (used) =>
          used.args.authorizer.toLowerCase() === expected.from.toLowerCase() &&
          used.args.nonce.toLowerCase() === expected.nonce.toLowerCase(),
      ),
  );
  if (index < 0) return undefined;
  const next = fromToken[index + 1];
  const [transfer] = next ? parseEventLogs({ abi: USDC_ABI, eventName: 'Transfer', logs: [next] }) : [];
  const paid =
    transfer !== undefined &&
    transfer.args.from.toLowerCase() === expected.from.toLowerCase() &&
    transfer.args.to.toLowerCase() === expected.to.toLowerCase() &&
    transfer.args.value === expected.value;
  if (!paid) return { state: 'spent', reason: 'its nonce was used for another transfer' };
  return { state: 'paid', txHash: fromToken[index]?.transactionHash as Hex };
}

export function baseChain(rpcUrl: string) {
  return defineChain({
    id: BASE_CHAIN_ID,
    name: 'Base',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}
