import { createServer } from 'node:http';
import { sql } from 'kysely';
import { createWalletClient, getAddress, http, parseSignature, type Address, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.ts';
import { parseNano, type Nano } from '../../src/billing/money.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import * as repo from '../../src/wallets/top-up.repository.ts';
import { USDC_ABI } from '../../src/wallets/top-up-chain.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASE_URL, testDatabaseKind } from '../helpers/db.ts';
import { withDatabase } from '../helpers/db-template.ts';
import { startFakeFacilitator, type FakeFacilitator } from '../helpers/fake-facilitator.ts';
import { listenLocally } from '../helpers/local-server.ts';
import { KEYS } from '../helpers/usdc-chain.ts';
import { newWallet } from '../helpers/wallets.ts';
import { useX402App } from '../helpers/x402-app.ts';
import { signPayment, usdc, type SignedPayment } from '../helpers/x402-payment.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * x402 top-ups decided on the chain's evidence (docs/api.md, Wallet top-up): USDC that reached the receiver is
 * credited exactly once however Lagoon learnt of it — the node's answer to eth_sendRawTransaction lost, another
 * account's copy of the transaction mined first, the authorization used before it reached Lagoon, a `failed` row
 * the sweep finds paid — and nonces are per payer. On a real local chain (ganache, the TestUsdc token), with
 * Lagoon's node behind a proxy that can cut the connection after forwarding a transaction.
 */

/** An HTTP proxy to the node that, when told, forwards the next eth_sendRawTransaction and then drops the socket. */
interface CuttingProxy {
  readonly url: string;
  cutNextSend: boolean;
  /** Transactions forwarded whose answer was then cut. */
  cuts: number;
  close(): Promise<void>;
}

async function startCuttingProxy(upstream: string): Promise<CuttingProxy> {
  const state = { url: '', cutNextSend: false, cuts: 0, close: async () => {} };
  const server = createServer((request, response) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const text = await answer.text();
      if (state.cutNextSend && body.includes('"eth_sendRawTransaction"')) {
        // The node has the transaction (it answered us); the caller never hears so.
        state.cutNextSend = false;
        state.cuts += 1;
        request.socket.destroy();
        return;
      }
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
    })();
  });
  const { url, close } = await listenLocally(server);
  return Object.assign(state, { url, close });
}

let proxy: CuttingProxy;
const x402 = useX402App({
  payers: ['payer', 'payer2'],
  env: async (chain) => {
    proxy = await startCuttingProxy(chain.url);
    return {
      LAGOON_BASE_RPC_URL: proxy.url,
      LAGOON_X402_SETTLEMENT_KEY: KEYS.settler,
      // Two blocks deep is final here (ganache mines only when asked).
      LAGOON_X402_CONFIRMATIONS: '2',
    };
  },
});
afterAll(async () => {
  await proxy?.close();
});

const db = () => x402.t.app.database.db;
const pay = (signer: PrivateKeyAccount, usd: number, nonce?: Hex) =>
  signPayment(signer, x402.chain.token, { to: x402.receiver, value: usdc(usd), ...(nonce ? { nonce } : {}) });

/** A wallet's credit, the sum of its ledger and its TOP_UP entries: balance = ledger always. */
async function books(address: string): Promise<{ balance: Nano; ledger: Nano; topUps: number }> {
  const id = await x402.accountOf(address);
  if (!id) return { balance: 0n, ledger: 0n, topUps: 0 };
  const entries = await db()
    .selectFrom('account_ledger')
    .select(['amount', 'type'])
    .where('account_id', '=', id)
    .where('currency', '=', 'USD')
    .execute();
  return {
    balance: await repo.usdBalance(db(), id),
    ledger: entries.reduce((sum, entry) => sum + BigInt(entry.amount), 0n),
    topUps: entries.filter((entry) => entry.type === 'TOP_UP').length,
  };
}

/** Expects exactly one more TOP_UP of `usd` than `before`, and balance = ledger. */
async function expectCreditedOnce(address: string, before: { balance: Nano; topUps: number }, usd: string) {
  const after = await books(address);
  expect(after.balance).toBe(before.balance + parseNano(usd));
  expect(after.ledger).toBe(after.balance);
  expect(after.topUps).toBe(before.topUps + 1);
}

/** The authorization submitted on chain by `submitter` (not Lagoon's settlement key): its transaction hash. */
async function submitCopy(payment: SignedPayment, submitter: PrivateKeyAccount, tipGwei = 1n): Promise<Hex> {
  const { authorization: a, signature } = payment;
  const { r, s, v } = parseSignature(signature);
  const wallet = createWalletClient({ account: submitter, transport: http(x402.chain.url) });
  return wallet.writeContract({
    chain: null,
    address: x402.chain.token,
    abi: USDC_ABI,
    functionName: 'transferWithAuthorization',
    args: [
      getAddress(a.from ?? ''),
      getAddress(a.to ?? ''),
      BigInt(a.value ?? 0),
      BigInt(a.validAfter ?? 0),
      BigInt(a.validBefore ?? 0),
      a.nonce as Hex,
      Number(v),
      r,
      s,
    ],
    gas: 200_000n,
    maxPriorityFeePerGas: tipGwei * 1_000_000_000n,
    maxFeePerGas: tipGwei * 2_000_000_000n + 2_000_000_000n,
  });
}

/** Runs `refused` while the chain refuses the payer's transfers (so Lagoon's settlement fails), then lifts that. */
async function whileBlocked(address: Hex, refused: () => Promise<void>): Promise<void> {
  await x402.chain.setBlocked(address, true);
  try {
    await refused();
  } finally {
    await x402.chain.setBlocked(address, false);
  }
}

async function expectMined(hash: Hex) {
  expect((await x402.chain.client.waitForTransactionReceipt({ hash })).status).toBe('success');
}

function settlementOf(response: Response): { success: boolean; transaction: string } {
  return JSON.parse(Buffer.from(response.headers.get('payment-response') ?? '', 'base64').toString('utf8')) as {
    success: boolean;
    transaction: string;
  };
}

/** Waits (polling) until `check` is true; start-ups on a busy machine get generous room. */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + scaled(timeoutMs);
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe(`x402 top-ups decided on the chain's evidence (${testDatabaseKind})`, () => {
  it('(a) credits a transfer whose eth_sendRawTransaction answer was lost, from the hash recorded before sending', async () => {
    const payer = x402.chain.account('payer');
    const before = await books(payer.address);
    const onChain = await x402.chain.balanceOf(x402.receiver);
    const payment = await pay(payer, 5);
    proxy.cutNextSend = true;
    const response = await x402.topUp(payment.header);
    expect(proxy.cuts).toBe(1);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true, data: { amountCredited: 5 } });
    const row = await x402.paymentRow(payment);
    expect(row?.status).toBe('settled');
    expect(settlementOf(response).transaction).toBe(row?.tx_hash);
    await expectMined(row?.tx_hash as Hex);
    expect(await x402.chain.balanceOf(x402.receiver)).toBe(onChain + usdc(5));
    await expectCreditedOnce(payer.address, before, '5');
    expect(await x402.t.app.services.topUps.recover()).toMatchObject({ credited: 0 });
    await expectCreditedOnce(payer.address, before, '5');
  });

  it('(b) credits a payment whose authorization another account submitted first with more gas', async () => {
    const payer = x402.chain.account('payer');
    const settler = x402.chain.account('settler').address.toLowerCase();
    const before = await books(payer.address);
    const payment = await pay(payer, 5);
    let copy: Hex | undefined;
    let answer: Promise<Response> | undefined;
    await x402.chain.setMining(false);
    try {
      answer = x402.topUp(payment.header);
      // Lagoon's transaction waits in the pool; then a copy from another account outbids it.
      await until(async () => {
        const pool = (await x402.chain.client.request({ method: 'txpool_content' as never })) as {
          pending: Record<string, unknown>;
        };
        return settler in pool.pending;
      }, "Lagoon's transaction in the pool");
      copy = await submitCopy(payment, x402.chain.account('payer2'), 10n);
    } finally {
      await x402.chain.setMining(true);
    }
    const response = await answer;
    expect(response.status).toBe(200);
    expect(settlementOf(response).transaction).toBe(copy);
    await expectMined(copy);
    const row = await x402.paymentRow(payment);
    expect(row?.status).toBe('settled');
    expect(row?.tx_hash).toBe(copy);
    await expectCreditedOnce(payer.address, before, '5');
  });

  it('(c) credits an authorization already used on chain to the receiver before it reached Lagoon, and only once', async () => {
    const payer = x402.chain.account('payer');
    const before = await books(payer.address);
    const payment = await pay(payer, 6);
    const copy = await submitCopy(payment, x402.chain.account('payer2'));
    await expectMined(copy);
    const response = await x402.topUp(payment.header);
    expect(response.status).toBe(200);
    expect(settlementOf(response).transaction).toBe(copy);
    await expectCreditedOnce(payer.address, before, '6');

    const replay = await x402.topUp(payment.header, 'x-payment');
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ details: { reason: 'nonce_already_used' } });
    expect(await x402.t.app.services.topUps.recover()).toMatchObject({ credited: 0 });
    await expectCreditedOnce(payer.address, before, '6');
  });

  it('the sweep credits a `failed` row whose authorization was used afterwards, once', async () => {
    const payer = x402.chain.account('payer2');
    const before = await books(payer.address);
    const payment = await pay(payer, 7);
    await whileBlocked(payer.address, async () => {
      const response = await x402.topUp(payment.header);
      expect(response.status).toBe(402);
      expect(await response.json()).toMatchObject({ code: 'SETTLEMENT_FAILED' });
    });
    expect((await x402.paymentRow(payment))?.status).toBe('failed');
    // The authorization is still valid: someone who saw it submits it once the payer is no longer blocked.
    await expectMined(await submitCopy(payment, x402.chain.account('facilitator')));

    expect(await x402.t.app.services.topUps.recover()).toMatchObject({ credited: 1 });
    expect(await x402.t.app.services.topUps.recover()).toMatchObject({ credited: 0 });
    expect((await x402.paymentRow(payment))?.status).toBe('settled');
    await expectCreditedOnce(payer.address, before, '7');
  });

  it('a replay of a `failed` row the chain shows paid is credited once, then refused', async () => {
    const payer = x402.chain.account('payer2');
    const before = await books(payer.address);
    const payment = await pay(payer, 8);
    await whileBlocked(payer.address, async () => {
      expect((await x402.topUp(payment.header)).status).toBe(402);
    });
    await expectMined(await submitCopy(payment, x402.chain.account('facilitator')));
    const replay = await x402.topUp(payment.header);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ data: { amountCredited: 8 } });
    const again = await x402.topUp(payment.header);
    expect(again.status).toBe(400);
    expect(await x402.t.app.services.topUps.recover()).toMatchObject({ credited: 0 });
    await expectCreditedOnce(payer.address, before, '8');
  });

  it("another wallet's failed authorization with the same nonce does not block the payer's own", async () => {
    const payer = x402.chain.account('payer');
    const griefer = newWallet(); // no USDC: its transfer reverts
    const before = await books(payer.address);
    const nonce = (await pay(payer, 5)).nonce;
    const bad = await x402.topUp((await pay(griefer, 5, nonce)).header);
    expect(bad.status).toBe(402);
    const good = await x402.topUp((await pay(payer, 5, nonce)).header);
    expect(good.status).toBe(200);
    await expectCreditedOnce(payer.address, before, '5');
    expect((await books(griefer.address)).balance).toBe(0n);
  });

  it('keeps watching an unused `failed` row until validBefore is confirmations deep, then closes it', async () => {
    const payer = x402.chain.account('payer2');
    const before = await books(payer.address);
    const payment = await pay(payer, 9);
    const validBefore = new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000);
    const id = await x402.insertPending(payment, 9, validBefore);
    await repo.markFailed(db(), id, 'the transfer reverted');
    while (Date.now() <= validBefore.getTime() + 1000) await new Promise((resolve) => setTimeout(resolve, 100));
    await x402.chain.mine(); // the first block at or after validBefore: not final yet
    expect(await x402.t.app.services.topUps.recover()).toEqual({ credited: 0, failed: 0 });
    expect((await x402.paymentRow(payment))?.closed_at).toBeNull();
    await x402.chain.mine();
    await x402.chain.mine(); // now two blocks deep
    expect(await x402.t.app.services.topUps.recover()).toEqual({ credited: 0, failed: 1 });
    const row = await x402.paymentRow(payment);
    expect(row).toMatchObject({ status: 'failed', failure_reason: 'the authorization expired unused' });
    expect(row?.closed_at).toBeInstanceOf(Date);
    expect(await x402.t.app.services.topUps.recover()).toEqual({ credited: 0, failed: 0 });
    expect(await books(payer.address)).toMatchObject({ balance: before.balance, topUps: before.topUps });
  });

  it('credits once when requests and sweeps of two processes finish the same payment at once', async () => {
    const payer = x402.chain.account('payer2');
    const database = x402.t.app.database;
    // A second API process on the same database: its own services and pool (PGlite has one connection to share).
    const name = TEST_DATABASE_URL
      ? (await sql<{ name: string }>`select current_database() as name`.execute(database.db)).rows[0]?.name
      : undefined;
    const handle =
      TEST_DATABASE_URL && name
        ? await openDatabase({ url: withDatabase(TEST_DATABASE_URL, name), poolSize: 4 })
        : { ...database, close: async () => undefined };
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      LAGOON_JOB_WORKERS: 'false',
      LAGOON_X402_RECEIVER: x402.receiver,
      LAGOON_X402_USDC_ADDRESS: x402.chain.token,
      LAGOON_BASE_RPC_URL: x402.chain.url,
      LAGOON_X402_SETTLEMENT_KEY: KEYS.settler,
    });
    const second: App = await createApp(config, { database: handle, logger: createLogger('silent') });
    try {
      for (let round = 0; round < 3; round += 1) {
        const before = await books(payer.address);
        const payment = await pay(payer, 5);
        await whileBlocked(payer.address, async () => {
          expect((await x402.topUp(payment.header)).status).toBe(402);
        });
        await expectMined(await submitCopy(payment, x402.chain.account('facilitator')));
        const replayOn = (app: App) =>
          app.fetch(
            new Request('http://lagoon.test/api/v1/x402/top-up', {
              method: 'POST',
              headers: { 'payment-signature': payment.header },
            }),
          );
        const results = await Promise.all([
          x402.t.app.services.topUps.recover(),
          second.services.topUps.recover(),
          replayOn(x402.t.app),
          replayOn(second),
          x402.t.app.services.topUps.recover(),
          second.services.topUps.recover(),
        ]);
        const statuses = results.filter((result) => result instanceof Response).map((response) => response.status);
        const swept = results.filter((result) => !(result instanceof Response)) as { credited: number }[];
        // One of the six credits it: a replay that did answers 200, every other replay 400.
        const credits =
          swept.reduce((sum, result) => sum + result.credited, 0) + statuses.filter((s) => s === 200).length;
        expect(credits).toBe(1);
        expect(statuses.every((status) => status === 200 || status === 400)).toBe(true);
        await expectCreditedOnce(payer.address, before, '5');
      }
    } finally {
      await second.close();
      await handle.close();
    }
  });
});

describe(`x402 top-ups through a facilitator, decided on the chain's evidence (${testDatabaseKind})`, () => {
  let facilitator: FakeFacilitator;
  let t: TestApp;
  const topUp = (header: string) =>
    t.call('/api/v1/x402/top-up', { method: 'POST', key: null, headers: { 'payment-signature': header } });
  const creditOf = async (address: Address) => {
    const id = (
      await t.app.database.db
        .selectFrom('accounts')
        .select('id')
        .where('wallet_address', '=', address.toLowerCase())
        .executeTakeFirst()
    )?.id;
    return id ? repo.usdBalance(t.app.database.db, id) : 0n;
  };

  beforeAll(async () => {
    facilitator = await startFakeFacilitator(x402.chain);
    t = await createTestApp({
      LAGOON_X402_RECEIVER: x402.receiver,
      LAGOON_X402_USDC_ADDRESS: x402.chain.token,
      LAGOON_X402_FACILITATOR_URL: facilitator.url,
      LAGOON_BASE_RPC_URL: x402.chain.url,
      LAGOON_X402_CONFIRMATIONS: '0',
    });
  });
  afterAll(async () => {
    await t?.close();
    await facilitator?.close();
  });

  it.each([
    ['its /settle answer is lost', 'dropSettleAnswer'],
    ['it says /settle failed', 'failSettleAnswer'],
  ] as const)('credits a transfer the facilitator made when %s', async (_case, knob) => {
    const payer = x402.chain.account('payer');
    const before = await creditOf(payer.address);
    const onChain = await x402.chain.balanceOf(x402.receiver);
    const payment = await pay(payer, 5);
    facilitator[knob] = true;
    try {
      const response = await topUp(payment.header);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ success: true, data: { amountCredited: 5 } });
    } finally {
      facilitator[knob] = false;
    }
    expect(await x402.chain.balanceOf(x402.receiver)).toBe(onChain + usdc(5));
    expect(await creditOf(payer.address)).toBe(before + parseNano('5'));
    expect(await t.app.services.topUps.recover()).toMatchObject({ credited: 0 });
    expect(await creditOf(payer.address)).toBe(before + parseNano('5'));
  });

  it('answers 402 and credits nothing when the facilitator refuses and the chain shows no transfer', async () => {
    const payer = x402.chain.account('payer');
    const before = await creditOf(payer.address);
    facilitator.refuseWith = 'insufficient_funds';
    try {
      const response = await topUp((await pay(payer, 5)).header);
      expect(response.status).toBe(402);
      expect(await response.json()).toMatchObject({ code: 'SETTLEMENT_FAILED' });
    } finally {
      facilitator.refuseWith = undefined;
    }
    expect(await creditOf(payer.address)).toBe(before);
  });
});
