import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatNano, parseNano } from '../../src/billing/money.ts';
import { startChatServer, upstreamOperatorConfig, writeOperatorConfig, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';
import { startSearxng, type FakeUpstream } from '../helpers/search-upstreams.ts';
import { creditWallet, newWallet, offerTopUps, signInHeader } from '../helpers/wallets.ts';

/*
 * A wallet caller's minimum balance (docs/api.md, Wallet callers; LAGOON_X402_MIN_BALANCE_USD, default 0.10 USD):
 * below it every paid route answers the low-credit 402 before any engine call, with balance leases on (the credit
 * is checked at every call, not only when a lease is taken) and off.
 */

const RECEIVER = '0x2222222222222222222222222222222222222222';
const CHAT = { model: 'up-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 };

let upstream: OpenAIUpstream;
let searxng: FakeUpstream;
let config: Awaited<ReturnType<typeof writeOperatorConfig>>;

beforeAll(async () => {
  [upstream, searxng] = await Promise.all([startOpenAIUpstream(), startSearxng()]);
  // Every call reports more tokens than its hold covers: each is charged exactly its hold.
  upstream.setBehavior({ kind: 'reply', usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 } });
  const yaml = upstreamOperatorConfig(upstream.url, { searxngUrl: searxng.url });
  config = await writeOperatorConfig(`${yaml}\nsearch:\n  google: searx\n`);
});
afterAll(async () => {
  await Promise.all([upstream?.close(), searxng?.close(), config?.remove()]);
});

describe.each([
  { leases: true, minimum: undefined, minimumUsd: 0.1 },
  { leases: false, minimum: '0.25', minimumUsd: 0.25 },
])(`REST: wallet minimum balance (${testDatabaseKind}, leases $leases, minimum $minimumUsd)`, (setup) => {
  let server: ChatServer;
  let host: string;

  beforeAll(async () => {
    server = await startChatServer({
      LAGOON_CONFIG: config.path,
      ...offerTopUps(RECEIVER),
      LAGOON_BALANCE_LEASES: String(setup.leases),
      ...(setup.minimum !== undefined && { LAGOON_X402_MIN_BALANCE_USD: setup.minimum }),
    });
    host = new URL(server.url).host;
  });
  afterAll(async () => {
    await server?.close();
  });

  const post = (path: string, header: string, body: unknown) =>
    fetch(`${server.url}/api/v1${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'SIGN-IN-WITH-X': header },
      body: JSON.stringify(body),
    });

  /** The low-credit 402 (docs/api.md#wallet-callers-x402) for a wallet holding `balanceUsd`, with a fresh challenge. */
  async function expectTopUpRequired(response: Response, balanceUsd: number): Promise<string> {
    expect(response.status).toBe(402);
    expect(response.headers.get('payment-required')).toBeTruthy();
    const body = (await response.json()) as { siwxChallenge: { info: { nonce: string } } };
    expect(body).toMatchObject({
      error: 'Payment required',
      code: 'PAYMENT_REQUIRED',
      reason: 'insufficient_balance',
      currentBalanceUsd: balanceUsd,
      minimumBalanceUsd: setup.minimumUsd,
      suggestedTopUpUsd: 10,
      minimumTopUpUsd: 5,
      topUpInstructions: { receiverWallet: RECEIVER, tokenDecimals: 6, network: 'eip155:8453', minimumAmountUsd: 5 },
      siwxChallenge: { info: { domain: host, version: '1' } },
    });
    expect(body.siwxChallenge.info.nonce).toMatch(/^[0-9a-f]{16}$/);
    return body.siwxChallenge.info.nonce;
  }

  it('below the minimum: chat and search answer the top-up 402 and never reach their engine', async () => {
    const wallet = newWallet();
    const balanceUsd = setup.minimumUsd / 2;
    await creditWallet(server.t.app, wallet.address, String(balanceUsd));
    const header = await signInHeader(wallet, { domain: host });
    const [chats, searches] = [upstream.chatRequests().length, searxng.requests.length];
    const first = await expectTopUpRequired(await post('/chat/completions', header, CHAT), balanceUsd);
    const second = await expectTopUpRequired(await post('/augment/search', header, { query: 'lagoon' }), balanceUsd);
    expect(second).not.toBe(first);
    expect(upstream.chatRequests()).toHaveLength(chats);
    expect(searxng.requests).toHaveLength(searches);
  });

  it('a call that takes the credit below the minimum is served; the next one is refused', async () => {
    // What one call costs (its hold): a probe wallet with plenty of credit pays one.
    const probe = newWallet();
    await creditWallet(server.t.app, probe.address, '5');
    const probeResponse = await post('/chat/completions', await signInHeader(probe, { domain: host }), CHAT);
    expect(probeResponse.status).toBe(200);
    await probeResponse.json();
    const cost = parseNano('5') - parseNano(probeResponse.headers.get('x-balance-usd') ?? '5');
    const minimum = parseNano(String(setup.minimumUsd));
    expect(cost).toBeGreaterThan(0n);
    expect(cost * 2n).toBeLessThan(minimum);

    // minimum + half a call: the first call is served, and leaves the credit half a call below the minimum.
    const wallet = newWallet();
    await creditWallet(server.t.app, wallet.address, formatNano(minimum + cost / 2n));
    const header = await signInHeader(wallet, { domain: host });
    const served = await post('/chat/completions', header, CHAT);
    expect(served.status).toBe(200);
    await served.json();
    const left = minimum + cost / 2n - cost;
    expect(parseNano(served.headers.get('x-balance-usd') ?? '')).toBe(left);
    const chats = upstream.chatRequests().length;
    await expectTopUpRequired(await post('/chat/completions', header, CHAT), Number(formatNano(left)));
    expect(upstream.chatRequests()).toHaveLength(chats);
  });
});
