import { createServer, type IncomingMessage } from 'node:http';
import { createWalletClient, getAddress, http, parseSignature, type Hex } from 'viem';
import { USDC_ABI } from '../../src/wallets/top-up-chain.ts';
import type { UsdcChain } from './usdc-chain.ts';

/*
 * A small x402 facilitator for tests: `POST /verify` answers `{isValid, payer}` and `POST /settle` really settles
 * on the local chain (its own key calls the token's transferWithAuthorization) and answers
 * `{success, transaction, network, payer}`, as the x402 v2 facilitator API does.
 */

export interface FakeFacilitator {
  readonly url: string;
  /** Bodies of the requests received, with their path. */
  readonly requests: { path: string; body: Record<string, unknown> }[];
  /** Make /verify refuse with this reason (undefined: accept). */
  refuseWith: string | undefined;
  /** While set, /settle waits for this promise before settling (a settlement in progress). */
  holdSettle: Promise<void> | undefined;
  /** While true, /settle settles on chain but drops the connection instead of answering. */
  dropSettleAnswer: boolean;
  /** While true, /settle settles on chain but answers that it failed (a facilitator that got it wrong). */
  failSettleAnswer: boolean;
  /** Resolves when the next /settle request arrives. */
  nextSettle(): Promise<void>;
  close(): Promise<void>;
}

interface PaymentBody {
  paymentPayload?: {
    payload?: {
      signature?: Hex;
      authorization?: Record<string, string>;
    };
  };
  paymentRequirements?: { asset?: string };
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

export async function startFakeFacilitator(chain: UsdcChain): Promise<FakeFacilitator> {
  const wallet = createWalletClient({ account: chain.account('facilitator'), transport: http(chain.url) });
  const settleWaiters: (() => void)[] = [];
  const state: FakeFacilitator = {
    url: '',
    requests: [],
    refuseWith: undefined,
    holdSettle: undefined,
    dropSettleAnswer: false,
    failSettleAnswer: false,
    nextSettle: () => new Promise<void>((resolve) => settleWaiters.push(resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = createServer((request, response) => {
    void (async () => {
      const body = await readJson(request);
      const path = request.url ?? '';
      state.requests.push({ path, body });
      const { paymentPayload, paymentRequirements } = body as PaymentBody;
      const authorization = paymentPayload?.payload?.authorization ?? {};
      const payer = authorization.from ?? '';
      const reply = (status: number, value: unknown) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (path === '/verify') {
        return reply(
          200,
          state.refuseWith ? { isValid: false, invalidReason: state.refuseWith, payer } : { isValid: true, payer },
        );
      }
      if (path !== '/settle') return reply(404, { error: 'not found' });
      for (const waiter of settleWaiters.splice(0)) waiter();
      if (state.holdSettle) await state.holdSettle;
      try {
        const { r, s, v } = parseSignature(paymentPayload?.payload?.signature ?? '0x');
        const hash = await wallet.writeContract({
          chain: null,
          address: getAddress(paymentRequirements?.asset ?? ''),
          abi: USDC_ABI,
          functionName: 'transferWithAuthorization',
          args: [
            getAddress(payer),
            getAddress(authorization.to ?? ''),
            BigInt(authorization.value ?? '0'),
            BigInt(authorization.validAfter ?? '0'),
            BigInt(authorization.validBefore ?? '0'),
            (authorization.nonce ?? '0x') as Hex,
            Number(v),
            r,
            s,
          ],
          gas: 200_000n,
        });
        const receipt = await chain.client.waitForTransactionReceipt({ hash });
        if (state.dropSettleAnswer) return void request.socket.destroy();
        if (state.failSettleAnswer)
          return reply(200, { success: false, errorReason: 'unexpected_settle_error', transaction: '', payer });
        reply(200, {
          success: receipt.status === 'success',
          ...(receipt.status === 'success' ? {} : { errorReason: 'transaction_reverted' }),
          transaction: hash,
          network: 'eip155:8453',
          payer,
        });
      } catch (error) {
        reply(200, { success: false, errorReason: String(error).slice(0, 100), transaction: '', payer });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, { url: `http://127.0.0.1:${(server.address() as { port: number }).port}` });
}
