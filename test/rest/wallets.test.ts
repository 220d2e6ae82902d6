import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseNano } from '../../src/billing/money.ts';
import { runCli } from '../../src/cli/program.ts';
import { ADMIN_KEY } from '../helpers/app.ts';
import { startChatServer, upstreamOperatorConfig, writeOperatorConfig, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';
import {
  creditWallet,
  newWallet,
  offerTopUps,
  signInHeader,
  testNonce,
  type SignInOptions,
} from '../helpers/wallets.ts';

/*
 * Wallet callers over HTTP (docs/api.md#wallet-callers-x402): real EIP-4361 messages signed by viem local accounts, every
 * sign-in refusal code, 402 bodies, the balance and ledger routes, and wallet-paid chat through the money core.
 */

const RECEIVER = '0x2222222222222222222222222222222222222222';

describe(`REST: wallet callers (${testDatabaseKind})`, () => {
  let upstream: OpenAIUpstream;
  let config: Awaited<ReturnType<typeof writeOperatorConfig>>;
  let server: ChatServer;
  let host: string;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream();
    config = await writeOperatorConfig(upstreamOperatorConfig(upstream.url));
    server = await startChatServer({
      LAGOON_CONFIG: config.path,
      ...offerTopUps(RECEIVER),
      LAGOON_X402_MIN_BALANCE_USD: '0',
    });
    host = new URL(server.url).host;
  });
  afterAll(async () => {
    await server?.close();
    await Promise.all([upstream?.close(), config?.remove()]);
  });

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}/api/v1${path}`, { headers });
  const signIn = (wallet = newWallet(), options: Partial<SignInOptions> = {}) =>
    signInHeader(wallet, { domain: host, ...options });

  it('a valid sign-in creates the wallet account and reads its own balance', async () => {
    const wallet = newWallet();
    const header = await signIn(wallet);
    const response = await get(`/x402/balance/${wallet.address}`, { 'SIGN-IN-WITH-X': header });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      success: true,
      data: {
        walletAddress: wallet.address.toLowerCase(),
        balanceUsd: 0,
        canConsume: false,
        minimumTopUpUsd: 5,
        suggestedTopUpUsd: 10,
        diemBalanceUsd: 0,
      },
    });
    // The same header again (stateless clients reuse it), and the legacy header name.
    const again = await get(`/x402/balance/${wallet.address.toLowerCase()}`, { 'X-Sign-In-With-X': header });
    expect(again.status).toBe(200);
  });

  it.each<[string, (wallet: ReturnType<typeof newWallet>) => Promise<string>]>([
    ['SIWX_PARSE_ERROR', async () => 'not base64 json!'],
    ['SIWX_PARSE_ERROR', async () => Buffer.from('[1,2]').toString('base64')],
    ['SIWX_INVALID_PAYLOAD', async () => Buffer.from(JSON.stringify({ address: '0x12' })).toString('base64')],
    ['SIWX_INVALID_MESSAGE', (w) => signIn(w, { message: () => 'hello, sign me in' })],
    ['SIWX_ADDRESS_MISMATCH', (w) => signIn(w, { address: newWallet().address })],
    ['SIWX_UNSUPPORTED_CHAIN', (w) => signIn(w, { payloadChainId: 1, chainId: 1 })],
    ['SIWX_CHAIN_MISMATCH', (w) => signIn(w, { chainId: 1 })],
    ['SIWX_DOMAIN_MISMATCH', (w) => signIn(w, { domain: 'evil.example' })],
    ['SIWX_MISSING_NONCE', (w) => signIn(w, { message: (text) => text.replace(/\nNonce: .*/, '') })],
    ['SIWX_MISSING_NONCE', (w) => signIn(w, { message: (text) => text.replace(/Nonce: \w+/, 'Nonce: abc123') })],
    [
      'SIWX_EXPIRED',
      (w) => signIn(w, { issuedAt: new Date(Date.now() - 120_000), expirationTime: new Date(Date.now() - 60_000) }),
    ],
    ['SIWX_EXPIRED', (w) => signIn(w, { issuedAt: new Date(Date.now() - 11 * 60_000), expirationTime: null })],
    ['SIWX_FUTURE_TIMESTAMP', (w) => signIn(w, { issuedAt: new Date(Date.now() + 120_000) })],
    ['SIWX_NOT_BEFORE', (w) => signIn(w, { notBefore: new Date(Date.now() + 60_000) })],
    ['SIWX_INVALID_SIGNATURE', (w) => signIn(w, { signer: newWallet() })],
  ])('refuses with 401 %s', async (code, make) => {
    const wallet = newWallet();
    const response = await get(`/x402/balance/${wallet.address}`, { 'SIGN-IN-WITH-X': await make(wallet) });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code });
  });

  it('refuses a nonce seen with another message (SIWX_NONCE_REUSED), in any process sharing the database', async () => {
    const wallet = newWallet();
    const nonce = testNonce();
    const first = await signIn(wallet, { nonce });
    expect((await get(`/x402/balance/${wallet.address}`, { 'SIGN-IN-WITH-X': first })).status).toBe(200);
    const second = await signIn(wallet, { nonce, issuedAt: new Date(Date.now() - 1000) });
    const response = await get(`/x402/balance/${wallet.address}`, { 'SIGN-IN-WITH-X': second });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 'SIWX_NONCE_REUSED' });
  });

  it('wallet A reading wallet B is 403; a key on the wallet routes is 401', async () => {
    const [a, b] = [newWallet(), newWallet()];
    const header = await signIn(a);
    for (const path of [`/x402/balance/${b.address}`, `/x402/transactions/${b.address}`]) {
      const response = await get(path, { 'SIGN-IN-WITH-X': header });
      expect(response.status).toBe(403);
    }
    const keyed = await get(`/x402/transactions/${a.address}`, { authorization: `Bearer ${ADMIN_KEY}` });
    expect(keyed.status).toBe(401);
    const bad = await get(`/x402/transactions/0x1234`, { 'SIGN-IN-WITH-X': header });
    expect(bad.status).toBe(400);
  });

  it('an ADMIN route with a wallet is 401, even beside an ADMIN key (the wallet wins)', async () => {
    const header = await signIn();
    const both: Record<string, string>[] = [
      { 'SIGN-IN-WITH-X': header },
      { 'SIGN-IN-WITH-X': header, authorization: `Bearer ${ADMIN_KEY}` },
    ];
    for (const headers of both) {
      const response = await get('/billing/balance', headers);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { code: string }).code).toBe('AUTHENTICATION_FAILED');
    }
  });

  it('no credentials: 402 discovery body with a fresh nonce on wallet routes, 401 on admin routes', async () => {
    const response = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'up-chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(402);
    const body = (await response.json()) as Record<string, unknown> & {
      extensions: Record<string, { info: Record<string, string> }>;
    };
    expect(body).toMatchObject({
      x402Version: 2,
      error: 'Payment required',
      resource: { url: `${server.url}/api/v1/chat/completions`, mimeType: 'application/json' },
      accepts: [
        {
          scheme: 'exact',
          network: 'eip155:8453',
          amount: '5000000',
          payTo: RECEIVER,
          maxTimeoutSeconds: 300,
          extra: { name: 'USD Coin', version: '2' },
        },
      ],
      authOptions: {
        x402Wallet: { header: 'SIGN-IN-WITH-X', legacyHeader: 'X-Sign-In-With-X', topUp: 'POST /api/v1/x402/top-up' },
      },
    });
    const info = body.extensions['sign-in-with-x']!.info;
    expect(info).toMatchObject({ domain: host, uri: server.url, version: '1' });
    expect(info.nonce).toMatch(/^[0-9a-f]{16}$/);
    const header = JSON.parse(Buffer.from(response.headers.get('payment-required')!, 'base64').toString()) as unknown;
    expect(header).toMatchObject({ x402Version: 2, accepts: body.accepts });
    expect((await get('/billing/balance')).status).toBe(401);

    const nonce = (await (await get('/x402/nonce')).json()) as { nonce: string; info: { nonce: string } };
    expect(nonce.nonce).toMatch(/^[0-9a-f]{16}$/);
    expect(nonce.nonce).not.toBe(info.nonce);
  });

  it('a wallet without credit gets the top-up 402 body with a fresh challenge', async () => {
    const wallet = newWallet();
    const response = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'SIGN-IN-WITH-X': await signIn(wallet) },
      body: JSON.stringify({ model: 'up-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 }),
    });
    expect(response.status).toBe(402);
    expect(response.headers.get('payment-required')).toBeTruthy();
    expect(await response.json()).toMatchObject({
      error: 'Payment required',
      code: 'PAYMENT_REQUIRED',
      reason: 'insufficient_balance',
      currentBalanceUsd: 0,
      minimumBalanceUsd: 0,
      suggestedTopUpUsd: 10,
      minimumTopUpUsd: 5,
      supportedTokens: ['USDC'],
      supportedChains: ['base'],
      topUpInstructions: { receiverWallet: RECEIVER, tokenDecimals: 6, network: 'eip155:8453', minimumAmountUsd: 5 },
      siwxChallenge: {
        info: { domain: host, version: '1' },
        supportedChains: [{ chainId: 'eip155:8453', type: 'eip191' }],
      },
    });
  });

  it('50 concurrent wallet-paid chat calls on a credit covering 10: exactly 10 served, balance and ledger exact', async () => {
    // Every call reports more tokens than its hold covers, so each is charged exactly its hold.
    upstream.setBehavior({ kind: 'reply', usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 } });
    const request = { model: 'up-chat', messages: [{ role: 'user' as const, content: 'hi' }], max_tokens: 50 };
    const probe = newWallet();
    await creditWallet(server.t.app, probe.address, '5');
    const probeHeader = await signIn(probe);
    await walletClient(probeHeader).chat.completions.create(request);
    const probeLedger = await ledger(probe.address, probeHeader);
    const cost = -parseNano(String(probeLedger.transactions[0]!.amount));
    expect(cost).toBeGreaterThan(0n);

    const wallet = newWallet();
    const accountId = await creditWallet(server.t.app, wallet.address, formatUsd(cost * 10n));
    const client = walletClient(await signIn(wallet));
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => client.chat.completions.create(request)));
    const served = results.filter((result) => result.status === 'fulfilled');
    const refused = results.flatMap((result) =>
      result.status === 'rejected' ? [result.reason as InstanceType<typeof OpenAI.APIError>] : [],
    );
    expect(served).toHaveLength(10);
    // The wallet's 402 (`error: "Payment required"`), not a key caller's INSUFFICIENT_BALANCE message.
    expect(refused.map((error) => [error.status, error.error])).toEqual(
      Array.from({ length: 40 }, () => [402, 'Payment required']),
    );
    const usd = (await server.t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
    expect(usd).toMatchObject({ amount: 0n, reserved: 0n });

    const page = await ledger(wallet.address, await signIn(wallet), 'limit=100');
    const charges = page.transactions.filter((entry) => entry.type === 'CHARGE');
    expect(charges).toHaveLength(10);
    expect(page.transactions).toHaveLength(11);
    expect(page.currentBalance).toBe(0);
    // Newest first in the order written (the ledger's sequence), though charges of one batch share a timestamp:
    // each charge's balanceAfter is the one before it less this charge.
    const oldestFirst = [...page.transactions].reverse();
    expect(oldestFirst[0]).toMatchObject({ type: 'TOP_UP', balanceAfter: Number(formatUsd(cost * 10n)) });
    oldestFirst.slice(1).forEach((entry, index) => {
      expect(parseNano(String(entry.amount))).toBe(-cost);
      expect(parseNano(String(entry.balanceAfter))).toBe(cost * BigInt(9 - index));
      expect(entry).toMatchObject({ modelId: 'up-chat' });
      expect(entry.requestId).toMatch(/\S/);
    });
    upstream.setBehavior({ kind: 'reply' });
  });

  it('charges settled in the same millisecond list in settle order, each balanceAfter following the one before', async () => {
    upstream.setBehavior({ kind: 'reply', usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 } });
    const wallet = newWallet();
    await creditWallet(server.t.app, wallet.address, '5');
    const client = walletClient(await signIn(wallet));
    // Every charge (and the ledger rows written for them) gets the same time: only the sequence orders them.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      // Each call holds a little more than the one before, and is charged its hold: the amounts tell the calls apart.
      for (let call = 0; call < 12; call += 1)
        await client.chat.completions.create({
          model: 'up-chat',
          messages: [{ role: 'user', content: 'hi' }],
          max_tokens: 20 + call,
        });
      const page = await ledger(wallet.address, await signIn(wallet), 'limit=100');
      const [topUp, ...charges] = [...page.transactions].reverse();
      expect(new Set(charges.map((entry) => entry.createdAt)).size).toBe(1);
      expect(topUp).toMatchObject({ type: 'TOP_UP', balanceAfter: 5 });
      expect(charges).toHaveLength(12);
      const amounts = charges.map((entry) => -parseNano(String(entry.amount)));
      expect(amounts).toEqual([...amounts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      expect(new Set(amounts).size).toBe(12);
      let balance = parseNano('5');
      for (const [index, entry] of charges.entries()) {
        balance -= amounts[index]!;
        expect(parseNano(String(entry.balanceAfter))).toBe(balance);
      }
    } finally {
      vi.useRealTimers();
      upstream.setBehavior({ kind: 'reply' });
    }
  });

  it('a wallet pays other inference routes too (image generation on the simulator), in USD', async () => {
    const wallet = newWallet();
    await creditWallet(server.t.app, wallet.address, '1');
    const header = await signIn(wallet);
    const response = await fetch(`${server.url}/api/v1/image/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'SIGN-IN-WITH-X': header },
      body: JSON.stringify({ model: 'lagoon-sim-image', prompt: 'a lighthouse', format: 'png' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-balance-remaining')).toMatch(/^0\.\d{6}$/);
    await response.arrayBuffer();
    const page = await ledger(wallet.address, header);
    const [charge] = page.transactions;
    expect(charge).toMatchObject({ type: 'CHARGE', modelId: 'lagoon-sim-image' });
    expect(charge!.amount).toBeLessThan(0);
    expect(page.currentBalance).toBe(charge!.balanceAfter);
  });

  it('the OpenAPI document names the wallet header where it is accepted', async () => {
    const doc = (await (await get('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    expect(doc.components.securitySchemes.signInWithX).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'SIGN-IN-WITH-X',
    });
    expect(doc.paths['/api/v1/x402/balance/{walletAddress}']?.get?.security).toEqual([{ signInWithX: [] }]);
    expect(doc.paths['/api/v1/chat/completions']?.post?.security).toEqual([{ bearerAuth: [] }, { signInWithX: [] }]);
    expect(doc.paths['/api/v1/x402/nonce']?.get?.security).toEqual([]);
  });

  it('pages the ledger as the contract says (limit 1 to 100, offset, hasMore)', async () => {
    const wallet = newWallet();
    const accountId = await creditWallet(server.t.app, wallet.address, '1');
    for (const usd of ['2', '3'])
      await server.t.app.services.wallets.refund(operatorAuth(), wallet.address, parseNano(usd));
    const header = await signIn(wallet);
    const first = await ledger(wallet.address, header, 'limit=2');
    expect(first.pagination).toEqual({ limit: 2, offset: 0, hasMore: true });
    expect(first.transactions.map((entry) => [entry.type, entry.amount, entry.balanceAfter])).toEqual([
      ['REFUND', 3, 6],
      ['REFUND', 2, 3],
    ]);
    const second = await ledger(wallet.address, header, 'limit=2&offset=2');
    expect(second.pagination).toEqual({ limit: 2, offset: 2, hasMore: false });
    expect(second.transactions.map((entry) => entry.type)).toEqual(['TOP_UP']);
    expect(second.walletAddress).toBe(wallet.address.toLowerCase());
    expect(accountId).toMatch(/-/);
    for (const query of ['limit=0', 'limit=101', 'offset=-1', 'limit=x']) {
      const response = await get(`/x402/transactions/${wallet.address}?${query}`, { 'SIGN-IN-WITH-X': header });
      expect(response.status).toBe(400);
    }
  });

  it('operator CLI: wallets list, show and refund', async () => {
    const wallet = newWallet();
    await creditWallet(server.t.app, wallet.address, '1.5');
    const run = async (...argv: string[]) => {
      let out = '';
      let err = '';
      const code = await runCli(argv, server.t.app.services, {
        out: (text) => (out += text),
        err: (text) => (err += text),
      });
      return { code, out, err };
    };
    const refund = await run('wallets', 'refund', wallet.address, '0.25', '--json');
    expect(refund.code).toBe(0);
    expect(JSON.parse(refund.out)).toMatchObject({
      walletAddress: wallet.address.toLowerCase(),
      amount: '0.25',
      balance: '1.75',
    });
    const list = await run('wallets', 'list', '--json');
    expect(JSON.parse(list.out)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ walletAddress: wallet.address.toLowerCase(), balanceUsd: '1.75' }),
      ]),
    );
    const show = await run('wallets', 'show', wallet.address, '--json');
    const shown = JSON.parse(show.out) as {
      balance: { balanceUsd: number };
      ledger: { transactions: { type: string; amount: number }[] };
    };
    expect(shown.balance.balanceUsd).toBe(1.75);
    expect(shown.ledger.transactions.map((e) => [e.type, e.amount])).toEqual([
      ['REFUND', 0.25],
      ['TOP_UP', 1.5],
    ]);
    expect((await run('wallets', 'refund', wallet.address, '0')).code).toBe(1);
    expect((await run('wallets', 'show', '0x0000000000000000000000000000000000000001')).err).toMatch(
      /No wallet account/,
    );
  });

  function walletClient(header: string): OpenAI {
    // The key is never looked at: the wallet header wins.
    return new OpenAI({
      apiKey: 'unused',
      baseURL: `${server.url}/api/v1`,
      maxRetries: 0,
      defaultHeaders: { 'SIGN-IN-WITH-X': header },
    });
  }

  async function ledger(address: string, header: string, query = '') {
    const response = await get(`/x402/transactions/${address}?${query}`, { 'SIGN-IN-WITH-X': header });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      data: {
        walletAddress: string;
        currentBalance: number;
        transactions: {
          id: string;
          amount: number;
          balanceAfter: number;
          type: string;
          createdAt: string;
          requestId: string;
          modelId: string;
        }[];
        pagination: { limit: number; offset: number; hasMore: boolean };
      };
    };
    return body.data;
  }
});

const operatorAuth = () => ({ kind: 'operator', requestId: 'test' }) as const;
const formatUsd = (nano: bigint): string => {
  const whole = nano / 1_000_000_000n;
  const fraction = (nano % 1_000_000_000n).toString().padStart(9, '0');
  return `${whole}.${fraction}`;
};
