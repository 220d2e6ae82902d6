import { Webhook } from 'standardwebhooks';
import { createWalletClient, http, parseSignature, type Hex } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { formatNano, parseNano } from '../../src/billing/money.ts';
import * as repo from '../../src/wallets/top-up.repository.ts';
import { BASE } from '../helpers/app.ts';
import { writeOperatorConfig } from '../helpers/chat.ts';
import { KEYS } from '../helpers/usdc-chain.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';
import { useX402App } from '../helpers/x402-app.ts';
import { signPayment, usdc } from '../helpers/x402-payment.ts';
import { newWallet, signInHeader } from '../helpers/wallets.ts';

/*
 * POST /x402/top-up against a real local chain (ganache, chain id 8453) and a USDC-like EIP-3009 token compiled
 * from test/fixtures/contracts/TestUsdc.sol: settled directly with the settlement key.
 */

/** The host of the in-process requests (t.call): the sign-in domain this app is configured for. */
const DOMAIN = new URL(BASE).host;

/** Where a wallet's webhook endpoint is told of its top-ups (a local address: the operator file allows it). */
let hooks: Awaited<ReturnType<typeof startWebhookReceiver>> | undefined;
let operatorConfig: Awaited<ReturnType<typeof writeOperatorConfig>> | undefined;
afterAll(async () => {
  await hooks?.close();
  await operatorConfig?.remove();
});

const x402 = useX402App({
  payers: ['payer', 'payer2'],
  env: async (chain) => {
    hooks = await startWebhookReceiver();
    operatorConfig = await writeOperatorConfig('chat:\n  webScraping: { allowNetworks: ["127.0.0.1"] }');
    return {
      LAGOON_SIWE_DOMAINS: DOMAIN,
      LAGOON_BASE_RPC_URL: chain.url,
      LAGOON_X402_SETTLEMENT_KEY: KEYS.settler,
      // ganache mines only when asked: the newest block is final here.
      LAGOON_X402_CONFIRMATIONS: '0',
      LAGOON_CONFIG: operatorConfig.path,
      // Webhook deliveries run where the job workers run.
      LAGOON_JOB_WORKERS: 'true',
    };
  },
});
const topUp = (header: string, name?: string) => x402.topUp(header, name);

async function walletState(address: string) {
  const id = await x402.accountOf(address);
  if (!id) return { usd: 0n, topUps: 0 };
  const ledger = await x402.t.app.database.db
    .selectFrom('account_ledger')
    .select(['amount', 'type'])
    .where('account_id', '=', id)
    .where('type', '=', 'TOP_UP')
    .execute();
  return { usd: await x402.creditOf(address), topUps: ledger.length, ledger };
}

const receiver = () => x402.receiver;

/** transferWithAuthorization sent by the settlement key outside Lagoon (what a crashed settlement left on chain). */
async function settleDirectly(payment: Awaited<ReturnType<typeof signPayment>>): Promise<Hex> {
  const { authorization, signature } = payment;
  const { r, s, v } = parseSignature(signature);
  const settler = createWalletClient({ account: x402.chain.account('settler'), transport: http(x402.chain.url) });
  const hash = await settler.writeContract({
    chain: null,
    address: x402.chain.token,
    abi: x402.chain.abi,
    functionName: 'transferWithAuthorization',
    args: [
      authorization.from,
      authorization.to,
      BigInt(authorization.value ?? 0),
      BigInt(authorization.validAfter ?? 0),
      BigInt(authorization.validBefore ?? 0),
      authorization.nonce,
      Number(v),
      r,
      s,
    ],
  });
  const receipt = await x402.chain.client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error('the direct settlement reverted');
  return hash;
}

describe('POST /x402/top-up', () => {
  it('answers 402 with the requirements (body and PAYMENT-REQUIRED) without a payment', async () => {
    const response = await topUp('', 'x-unused');
    expect(response.status).toBe(402);
    const body = (await response.json()) as { x402Version: number; accepts: Record<string, unknown>[] };
    // Only the fields x402 v2 defines for a PaymentRequired body: x402 clients of the original read it as is.
    expect(Object.keys(body).sort()).toEqual(['accepts', 'error', 'x402Version']);
    expect(body).toMatchObject({ x402Version: 2, error: 'Payment required' });
    expect(body.accepts).toEqual([
      {
        scheme: 'exact',
        network: 'eip155:8453',
        amount: '5000000',
        asset: x402.chain.token,
        payTo: receiver(),
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2' },
      },
    ]);
    const header = response.headers.get('payment-required') ?? '';
    expect(JSON.parse(Buffer.from(header, 'base64').toString('utf8'))).toEqual(body);
  });

  it('settles on chain, credits exactly the amount once, and refuses a replay', async () => {
    const payer = x402.chain.account('payer');
    const before = {
      payer: await x402.chain.balanceOf(payer.address),
      receiver: await x402.chain.balanceOf(receiver()),
    };
    const payment = await signPayment(payer, x402.chain.token, { to: receiver(), value: usdc(12.5) });
    const response = await topUp(payment.header);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { success: boolean; data: Record<string, unknown> };
    expect(body.success).toBe(true);
    expect(body.data).toMatchObject({ walletAddress: payer.address, amountCredited: 12.5, newBalance: 12.5 });
    expect(typeof body.data.paymentId).toBe('string');
    const settlement = JSON.parse(
      Buffer.from(response.headers.get('payment-response') ?? '', 'base64').toString('utf8'),
    ) as Record<string, unknown>;
    expect(settlement).toMatchObject({ success: true, network: 'eip155:8453', payer: payer.address });
    expect(settlement.transaction).toMatch(/^0x[0-9a-f]{64}$/);

    expect(await x402.chain.balanceOf(payer.address)).toBe(before.payer - usdc(12.5));
    expect(await x402.chain.balanceOf(receiver())).toBe(before.receiver + usdc(12.5));
    const state = await walletState(payer.address);
    expect(state.usd).toBe(parseNano('12.5'));
    expect(state.topUps).toBe(1);

    const replay = await topUp(payment.header, 'x-payment');
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({
      error: 'X402_INVALID_PAYMENT',
      details: { reason: 'nonce_already_used' },
    });
    expect((await walletState(payer.address)).usd).toBe(parseNano('12.5'));
    expect(await x402.chain.balanceOf(receiver())).toBe(before.receiver + usdc(12.5));
  });

  it('accepts the flat payload form under X-402-Payment', async () => {
    const payer = x402.chain.account('payer');
    const before = (await walletState(payer.address)).usd;
    const payment = await signPayment(payer, x402.chain.token, { to: receiver(), value: usdc(5) }, 'flat');
    const response = await topUp(payment.header, 'x-402-payment');
    expect(response.status).toBe(200);
    expect((await walletState(payer.address)).usd).toBe(before + parseNano('5'));
  });

  it('credits one of two identical top-ups sent at once and answers the other 409', async () => {
    const payer = x402.chain.account('payer');
    const before = await walletState(payer.address);
    const payment = await signPayment(payer, x402.chain.token, { to: receiver(), value: usdc(7) });
    const answers = await Promise.all([topUp(payment.header), topUp(payment.header)]);
    const statuses = answers.map((answer) => answer.status).sort();
    // The second either finds the first settling (409) or, if the first already finished, the nonce used (400).
    expect(statuses[0]).toBe(200);
    expect([400, 409]).toContain(statuses[1]);
    const loser = answers.find((answer) => answer.status !== 200);
    const loserBody = (await loser?.json()) as Record<string, unknown>;
    if (loser?.status === 409) expect(loserBody.code).toBe('PAYMENT_IN_PROGRESS');
    const after = await walletState(payer.address);
    expect(after.usd).toBe(before.usd + parseNano('7'));
    expect(after.topUps).toBe(before.topUps + 1);
  });

  it.each([
    ['recipient_mismatch', { to: '0x000000000000000000000000000000000000dEaD' as const, value: usdc(10) }],
    ['expired', { value: usdc(10), validBefore: BigInt(Math.floor(Date.now() / 1000) - 10) }],
    ['not_yet_valid', { value: usdc(10), validAfter: BigInt(Math.floor(Date.now() / 1000) + 3600) }],
    ['amount_too_small', { value: usdc(4.99) }],
    ['amount_too_large', { value: usdc(10_000.01) }],
  ])('refuses %s with 400 and no transfer', async (reason, fields) => {
    const payer = x402.chain.account('payer2');
    const onChain = await x402.chain.balanceOf(payer.address);
    const payment = await signPayment(payer, x402.chain.token, { to: receiver(), ...fields });
    const response = await topUp(payment.header);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'X402_INVALID_PAYMENT', details: { reason } });
    expect(await x402.chain.balanceOf(payer.address)).toBe(onChain);
    expect((await walletState(payer.address)).usd).toBe(0n);
  });

  it('refuses a forged signature, a wrong asset and malformed headers with 400 and a reason', async () => {
    const victim = x402.chain.account('payer2');
    const forged = await signPayment(x402.chain.account('payer'), x402.chain.token, {
      to: receiver(),
      value: usdc(10),
      from: victim.address,
    });
    const forgedAnswer = await topUp(forged.header);
    expect(forgedAnswer.status).toBe(400);
    expect(await forgedAnswer.json()).toMatchObject({ details: { reason: 'invalid_signature' } });

    const otherToken = await signPayment(victim, '0x000000000000000000000000000000000000bEEF', {
      to: receiver(),
      value: usdc(10),
    });
    // Signed for another token's domain: the claimed asset is wrong (v2 form names it).
    const assetAnswer = await topUp(otherToken.header);
    expect(await assetAnswer.json()).toMatchObject({ details: { reason: 'asset_mismatch' } });

    for (const header of ['not base64 json!', Buffer.from('{"x402Version":2}').toString('base64')]) {
      const answer = await topUp(header);
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({
        error: 'X402_INVALID_PAYMENT',
        details: { reason: 'invalid_payload' },
      });
    }
    expect((await walletState(victim.address)).usd).toBe(0n);
  });

  it('answers 402 SETTLEMENT_FAILED and credits nothing when the transfer reverts on chain', async () => {
    const payer = x402.chain.account('payer2');
    await x402.chain.setBlocked(payer.address, true);
    try {
      const onChain = await x402.chain.balanceOf(payer.address);
      const payment = await signPayment(payer, x402.chain.token, { to: receiver(), value: usdc(20) });
      const response = await topUp(payment.header);
      expect(response.status).toBe(402);
      expect(await response.json()).toMatchObject({ code: 'SETTLEMENT_FAILED' });
      expect(await x402.chain.balanceOf(payer.address)).toBe(onChain);
      expect((await walletState(payer.address)).usd).toBe(0n);
      const row = await x402.paymentRow(payment);
      expect(row?.status).toBe('failed');
      expect(row?.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    } finally {
      await x402.chain.setBlocked(payer.address, false);
    }
  });

  it('recovers a transfer whose credit a crash lost: credited once from the recorded hash', async () => {
    const payer = x402.chain.account('payer2');
    const db = x402.t.app.database.db;
    const payment = await signPayment(payer, x402.chain.token, { to: receiver(), value: usdc(9) });
    // The crash: the row is pending with its hash, the transfer is on chain, no credit was written.
    const id = await x402.insertPending(payment, 9, new Date(Date.now() + 300_000));
    const hash = await settleDirectly(payment);
    await repo.recordTxHash(db, id, hash);

    expect(await x402.t.app.services.topUps.recover()).toEqual({ credited: 1, failed: 0 });
    expect(await x402.t.app.services.topUps.recover()).toEqual({ credited: 0, failed: 0 });
    const state = await walletState(payer.address);
    expect(state.usd).toBe(parseNano('9'));
    expect(state.topUps).toBe(1);
    expect((await x402.paymentRow(payment))?.status).toBe('settled');
  });

  it('credits an expired pending row without a hash when the chain says its authorization was used', async () => {
    const payer = x402.chain.account('payer2');
    const payment = await signPayment(payer, x402.chain.token, { to: receiver(), value: usdc(11) });
    // The crash came after the transfer was sent and before its hash was written; the window has passed since.
    await x402.insertPending(payment, 11, new Date(Date.now() - 1000));
    await settleDirectly(payment);
    const before = (await walletState(payer.address)).usd;
    expect(await x402.t.app.services.topUps.recover()).toEqual({ credited: 1, failed: 0 });
    expect((await walletState(payer.address)).usd).toBe(before + parseNano('11'));
  });

  it('marks failed a pending row whose authorization expired unused', async () => {
    const payer = x402.chain.account('payer2');
    const payment = await signPayment(payer, x402.chain.token, { to: receiver(), value: usdc(6) });
    await x402.insertPending(payment, 6, new Date(Date.now() - 1000));
    // The chain decides when validBefore has passed: its newest block must be at or after it.
    await x402.chain.mine();
    const before = (await walletState(payer.address)).usd;
    expect(await x402.t.app.services.topUps.recover()).toEqual({ credited: 0, failed: 1 });
    expect((await walletState(payer.address)).usd).toBe(before);
  });

  it('tells the wallet’s webhook endpoint of a credited top-up, signed, named by the payment', async () => {
    const payer = x402.chain.account('payer');
    const signIn = { 'SIGN-IN-WITH-X': await signInHeader(payer, { domain: DOMAIN }) };
    const created = await x402.t.call('/api/v1/webhooks', {
      key: null,
      headers: signIn,
      body: { url: `${hooks!.url}/wallet`, events: ['wallet.top_up.credited'] },
    });
    const createdBody = (await created.json()) as { data: { secret: string } };
    expect(created.status, JSON.stringify(createdBody)).toBe(200);
    const { secret } = createdBody.data;
    const before = await x402.creditOf(payer.address);

    const payment = await signPayment(payer, x402.chain.token, { to: receiver(), value: usdc(6) });
    const response = await topUp(payment.header);
    expect(response.status).toBe(200);
    const { paymentId } = ((await response.json()) as { data: { paymentId: string } }).data;

    await expect.poll(() => hooks!.at('/wallet').length).toBe(1);
    const [hook] = hooks!.at('/wallet');
    const event = new Webhook(secret).verify(hook!.body, {
      'webhook-id': String(hook!.headers['webhook-id']),
      'webhook-timestamp': String(hook!.headers['webhook-timestamp']),
      'webhook-signature': String(hook!.headers['webhook-signature']),
    }) as { type: string; data: Record<string, unknown> };
    expect(hook!.headers['webhook-id']).toBe(`evt_topup_${paymentId.replaceAll('-', '')}`);
    expect(event.type).toBe('wallet.top_up.credited');
    expect(event.data).toMatchObject({
      paymentId,
      currency: 'USD',
      amount: formatNano(parseNano('6')),
      balance: formatNano(before + parseNano('6')),
    });
    expect(String(event.data.payer).toLowerCase()).toBe(payer.address.toLowerCase());
    expect(String(event.data.transaction)).toMatch(/^0x[0-9a-f]{64}$/);
  });
});

describe('sign-in of a contract wallet (EIP-1271) through LAGOON_BASE_RPC_URL', () => {
  const balanceOf = async (address: string, header: string) =>
    x402.t.call(`/api/v1/x402/balance/${address}`, { key: null, headers: { 'SIGN-IN-WITH-X': header } });

  it('accepts a message in the contract’s name signed by its owner, and refuses another signer', async () => {
    const owner = newWallet();
    const contract = await x402.chain.deployContractWallet(owner.address);
    const header = await signInHeader(owner, { domain: DOMAIN, account: contract });
    const response = await balanceOf(contract, header);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true, data: { walletAddress: contract.toLowerCase() } });

    const forged = await signInHeader(owner, { domain: DOMAIN, account: contract, signer: newWallet() });
    const refused = await balanceOf(contract, forged);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'SIWX_INVALID_SIGNATURE' });
  });
});
