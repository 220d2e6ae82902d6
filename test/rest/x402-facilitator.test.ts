import { afterAll, describe, expect, it } from 'vitest';
import { parseNano } from '../../src/billing/money.ts';
import { startFakeFacilitator, type FakeFacilitator } from '../helpers/fake-facilitator.ts';
import { useX402App } from '../helpers/x402-app.ts';
import { signPayment, usdc } from '../helpers/x402-payment.ts';

/* POST /x402/top-up settled through a facilitator (LAGOON_X402_FACILITATOR_URL) that settles on a real local chain. */

let facilitator: FakeFacilitator;
const x402 = useX402App({
  payers: ['payer'],
  env: async (chain) => {
    facilitator = await startFakeFacilitator(chain);
    return { LAGOON_X402_FACILITATOR_URL: facilitator.url };
  },
});
afterAll(async () => {
  await facilitator?.close();
});

const topUp = (header: string) => x402.topUp(header);
/** An authorization of `usd` from the payer to the receiver. */
const pay = (usd: number) =>
  signPayment(x402.chain.account('payer'), x402.chain.token, { to: x402.receiver, value: usdc(usd) });
const creditOf = (address: string) => x402.creditOf(address);

describe('POST /x402/top-up through a facilitator', () => {
  it('verifies, settles through /verify and /settle, and credits once', async () => {
    const payer = x402.chain.account('payer');
    const receiver = x402.chain.account('receiver').address;
    const payment = await pay(8);
    const response = await topUp(payment.header);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true, data: { amountCredited: 8, newBalance: 8 } });
    expect(facilitator.requests.map((request) => request.path)).toEqual(['/verify', '/settle']);
    expect(facilitator.requests[0]?.body).toMatchObject({
      x402Version: 2,
      paymentRequirements: { scheme: 'exact', payTo: receiver, asset: x402.chain.token },
      paymentPayload: { payload: { signature: payment.signature } },
    });
    expect(await x402.chain.balanceOf(receiver)).toBe(usdc(8));
    expect(await creditOf(payer.address)).toBe(parseNano('8'));
    const settlement = JSON.parse(Buffer.from(response.headers.get('payment-response') ?? '', 'base64').toString());
    const row = await x402.paymentRow(payment);
    expect(row?.tx_hash).toBe((settlement as { transaction: string }).transaction);
  });

  it('answers 409 PAYMENT_IN_PROGRESS to a duplicate while the first is settling, and credits once', async () => {
    const payer = x402.chain.account('payer');
    const before = await creditOf(payer.address);
    const payment = await pay(5);
    let release = () => {};
    facilitator.holdSettle = new Promise<void>((resolve) => (release = resolve));
    try {
      const settling = facilitator.nextSettle();
      const first = topUp(payment.header);
      await settling;
      const duplicate = await topUp(payment.header);
      expect(duplicate.status).toBe(409);
      expect(await duplicate.json()).toMatchObject({ code: 'PAYMENT_IN_PROGRESS' });
      facilitator.holdSettle = undefined;
      release();
      expect((await first).status).toBe(200);
    } finally {
      facilitator.holdSettle = undefined;
      release();
    }
    expect(await creditOf(payer.address)).toBe(before + parseNano('5'));
    const replay = await topUp(payment.header);
    expect(await replay.json()).toMatchObject({ details: { reason: 'nonce_already_used' } });
  });

  it('keeps the payment pending when /settle goes unanswered (it may have settled), and never fails it early', async () => {
    const { receiver } = x402;
    const onChain = await x402.chain.balanceOf(receiver);
    const payment = await pay(5);
    facilitator.dropSettleAnswer = true;
    try {
      const response = await topUp(payment.header);
      expect(response.status).toBe(402);
      expect(await response.json()).toMatchObject({ code: 'SETTLEMENT_FAILED' });
    } finally {
      facilitator.dropSettleAnswer = false;
    }
    // The facilitator did move the funds; Lagoon keeps the row pending for recover(), not failed.
    expect(await x402.chain.balanceOf(receiver)).toBe(onChain + usdc(5));
    expect((await x402.paymentRow(payment))?.status).toBe('pending');
    const duplicate = await topUp(payment.header);
    expect(duplicate.status).toBe(409);
  });

  it('answers 402 SETTLEMENT_FAILED without credit when the facilitator refuses', async () => {
    const payer = x402.chain.account('payer');
    facilitator.refuseWith = 'insufficient_funds';
    try {
      const before = await creditOf(payer.address);
      const payment = await pay(6);
      const response = await topUp(payment.header);
      expect(response.status).toBe(402);
      expect(await response.json()).toMatchObject({ code: 'SETTLEMENT_FAILED' });
      expect(await creditOf(payer.address)).toBe(before);
    } finally {
      facilitator.refuseWith = undefined;
    }
  });

  it('answers 402 SETTLEMENT_FAILED when the facilitator settlement reverts on chain', async () => {
    const payer = x402.chain.account('payer');
    await x402.chain.setBlocked(payer.address, true);
    try {
      const before = await creditOf(payer.address);
      const payment = await pay(6);
      const response = await topUp(payment.header);
      expect(response.status).toBe(402);
      expect(await creditOf(payer.address)).toBe(before);
      expect((await x402.paymentRow(payment))?.status).toBe('failed');
    } finally {
      await x402.chain.setBlocked(payer.address, false);
    }
  });
});
