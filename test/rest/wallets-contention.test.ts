import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNano } from '../../src/billing/money.ts';
import { startChatServer, upstreamOperatorConfig, writeOperatorConfig, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';
import { creditWallet, newWallet, signInHeader } from '../helpers/wallets.ts';

/*
 * Wallet-paid chat without balance leases (two transactions per call) and with the minimum balance on: a call starts
 * only while the free credit reaches the minimum (and its hold), so a credit of the minimum plus 9 holds serves
 * exactly 10 of 30 concurrent calls and refuses the rest with the top-up 402.
 */
const MINIMUM = '0.10';

describe(`REST: wallet-paid chat, per-call holds, minimum balance ${MINIMUM} (${testDatabaseKind})`, () => {
  let upstream: OpenAIUpstream;
  let config: Awaited<ReturnType<typeof writeOperatorConfig>>;
  let server: ChatServer;

  beforeAll(async () => {
    // Every call reports more tokens than its hold covers, so each is charged exactly its hold.
    upstream = await startOpenAIUpstream({
      behavior: { kind: 'reply', usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 } },
    });
    config = await writeOperatorConfig(upstreamOperatorConfig(upstream.url));
    server = await startChatServer({
      LAGOON_CONFIG: config.path,
      LAGOON_BALANCE_LEASES: 'false',
      LAGOON_X402_MIN_BALANCE_USD: MINIMUM,
    });
  });
  afterAll(async () => {
    await server?.close();
    await Promise.all([upstream?.close(), config?.remove()]);
  });

  it('serves exactly the calls the credit covers above the minimum', async () => {
    const host = new URL(server.url).host;
    const request = { model: 'up-chat', messages: [{ role: 'user' as const, content: 'hi' }], max_tokens: 50 };
    const client = async (wallet: ReturnType<typeof newWallet>) =>
      new OpenAI({
        apiKey: 'unused',
        baseURL: `${server.url}/api/v1`,
        maxRetries: 0,
        defaultHeaders: { 'SIGN-IN-WITH-X': await signInHeader(wallet, { domain: host }) },
      });
    const probe = newWallet();
    const probeAccount = await creditWallet(server.t.app, probe.address, '5');
    await (await client(probe)).chat.completions.create(request);
    const probeUsd = (await server.t.app.services.billing.balancesOf(probeAccount)).find((b) => b.currency === 'USD')!;
    const cost = parseNano('5') - probeUsd.amount;
    expect(cost).toBeGreaterThan(0n);
    expect(cost).toBeLessThan(parseNano(MINIMUM));

    const wallet = newWallet();
    // The 10th call starts with exactly the minimum free; the 11th would start below it.
    const credit = cost * 9n + parseNano(MINIMUM);
    const accountId = await creditWallet(server.t.app, wallet.address, formatUsd(credit));
    const walletClient = await client(wallet);
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, () => walletClient.chat.completions.create(request)),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(10);
    const refusals = results.flatMap((result) =>
      result.status === 'rejected' ? [result.reason as InstanceType<typeof OpenAI.APIError>] : [],
    );
    expect(refusals.map((error) => [error.status, error.error])).toEqual(
      Array.from({ length: 20 }, () => [402, 'Payment required']),
    );
    const usd = (await server.t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
    expect(usd).toMatchObject({ amount: parseNano(MINIMUM) - cost, reserved: 0n });
  });
});

const formatUsd = (nano: bigint): string =>
  `${nano / 1_000_000_000n}.${(nano % 1_000_000_000n).toString().padStart(9, '0')}`;
