import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerAdapter } from '@whatwg-node/server';
import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { parseNano } from '../../src/billing/money.ts';
import { ADMIN_KEY, createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { creditWallet, newWallet, offerTopUps, signInHeader } from '../helpers/wallets.ts';

const REDIS_URL = process.env.REDIS_URL || undefined;
const RECEIVER = '0x3333333333333333333333333333333333333333';

interface GraphQLBody<T> {
  data?: T;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

describe(`GraphQL: wallet, topUpRequirements, walletBalance (${testDatabaseKind}, ${REDIS_URL ? 'Redis' : 'in-process'} events)`, () => {
  let t: TestApp;
  let server: Server;
  let url: string;
  let host: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await createTestApp({ ...offerTopUps(RECEIVER), ...(REDIS_URL ? { REDIS_URL } : {}) });
    server = createServer(createServerAdapter((request: Request) => t.app.fetch(request)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    t.app.listening(port);
    url = `http://127.0.0.1:${port}`;
    host = `127.0.0.1:${port}`;
  });
  afterAll(async () => {
    for (const client of clients) client.dispose();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await t.close();
  });

  async function graphql<T>(query: string, headers: Record<string, string>): Promise<GraphQLBody<T>> {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
      body: JSON.stringify({ query }),
    });
    return (await response.json()) as GraphQLBody<T>;
  }

  /** A graphql-sse client signed in as `wallet` (disposed after the file). */
  async function streamClient(wallet: ReturnType<typeof newWallet>): Promise<Client> {
    const client = createClient({
      url: `${url}/graphql/stream`,
      headers: { 'SIGN-IN-WITH-X': await signInHeader(wallet, { domain: host }) },
      fetchFn: fetch,
      retryAttempts: 0,
    });
    clients.push(client);
    return client;
  }

  it('topUpRequirements is public', async () => {
    const body = await graphql<{ topUpRequirements: unknown[] }>(
      '{ topUpRequirements { scheme network amount amountUsd asset payTo maxTimeoutSeconds } }',
      {},
    );
    expect(body.data?.topUpRequirements).toEqual([
      {
        scheme: 'exact',
        network: 'eip155:8453',
        amount: '5000000',
        amountUsd: '5',
        asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        payTo: RECEIVER,
        maxTimeoutSeconds: 300,
      },
    ]);
  });

  it('wallet: the signed-in wallet’s balance and ledger; a key gets an authentication error', async () => {
    const wallet = newWallet();
    await creditWallet(t.app, wallet.address, '2');
    await t.app.services.wallets.refund(operator(), wallet.address, parseNano('0.5'));
    const header = await signInHeader(wallet, { domain: host });
    const query =
      '{ wallet { address balance { balanceUsd canConsume } ledger(first: 1) { edges { node { type amount balanceAfter } } pageInfo { hasNextPage endCursor } } } }';
    const body = await graphql<{
      wallet: {
        address: string;
        balance: { balanceUsd: string; canConsume: boolean };
        ledger: { edges: { node: unknown }[]; pageInfo: { hasNextPage: boolean; endCursor: string } };
      };
    }>(query, { 'SIGN-IN-WITH-X': header });
    expect(body.errors).toBeUndefined();
    expect(body.data?.wallet).toMatchObject({
      address: wallet.address.toLowerCase(),
      balance: { balanceUsd: '2.5', canConsume: true },
      ledger: {
        edges: [{ node: { type: 'REFUND', amount: '0.5', balanceAfter: '2.5' } }],
        pageInfo: { hasNextPage: true },
      },
    });
    const after = body.data!.wallet.ledger.pageInfo.endCursor;
    const next = await graphql<{ wallet: { ledger: { edges: { node: { type: string } }[] } } }>(
      `{ wallet { ledger(first: 5, after: "${after}") { edges { node { type } } } } }`,
      { 'SIGN-IN-WITH-X': header },
    );
    expect(next.data?.wallet.ledger.edges.map((edge) => edge.node.type)).toEqual(['TOP_UP']);

    const keyed = await graphql('{ wallet { address } }', { authorization: `Bearer ${ADMIN_KEY}` });
    expect(keyed.errors?.[0]?.extensions?.code).toBe('AUTHENTICATION_FAILED');
  });

  it('below the minimum balance: chatCompletion fails with the REST 402 body in its extensions', async () => {
    const wallet = newWallet();
    await creditWallet(t.app, wallet.address, '0.04');
    const header = await signInHeader(wallet, { domain: host });
    const mutation = `mutation { chatCompletion(input: { model: "default", messages: [{ role: USER, content: "Hi" }] }) {
      __typename ... on Error { code message } } }`;
    const body = await graphql<{ chatCompletion: unknown }>(mutation, { 'SIGN-IN-WITH-X': header });
    expect(body.data?.chatCompletion ?? null).toBeNull();
    expect(body.errors).toHaveLength(1);
    const extensions = body.errors![0]!.extensions!;
    expect(extensions).toMatchObject({
      code: 'PAYMENT_REQUIRED',
      reason: 'insufficient_balance',
      currentBalanceUsd: 0.04,
      minimumBalanceUsd: 0.1,
      suggestedTopUpUsd: 10,
      minimumTopUpUsd: 5,
      supportedTokens: ['USDC'],
      supportedChains: ['base'],
      topUpInstructions: { receiverWallet: RECEIVER, tokenDecimals: 6, network: 'eip155:8453', minimumAmountUsd: 5 },
      siwxChallenge: { info: { domain: host, uri: url, version: '1' } },
      x402Version: 2,
      accepts: [{ scheme: 'exact', network: 'eip155:8453', amount: '5000000', payTo: RECEIVER }],
    });
    // The same data as REST's 402 body for this wallet (all but the fresh nonce and its times).
    const rest = await fetch(`${url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'SIGN-IN-WITH-X': header },
      body: JSON.stringify({ model: 'default', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(rest.status).toBe(402);
    const { siwxChallenge: restChallenge, ...restBody } = (await rest.json()) as Record<string, unknown>;
    const { siwxChallenge, x402Version, accepts, ...graphqlBody } = extensions;
    expect(graphqlBody).toEqual(restBody);
    expect(Object.keys(siwxChallenge as object)).toEqual(Object.keys(restChallenge as object));
    expect({ x402Version, accepts }).toEqual(
      JSON.parse(Buffer.from(rest.headers.get('payment-required')!, 'base64').toString()),
    );
  });

  it('below the minimum balance: chatCompletionStream ends with the same error', async () => {
    const wallet = newWallet();
    await creditWallet(t.app, wallet.address, '0.04');
    const events = (await streamClient(wallet)).iterate({
      query:
        'subscription { chatCompletionStream(input: { model: "default", messages: [{ role: USER, content: "Hi" }] }) { id } }',
    });
    const failure = await events.next().then(
      (event) => event.value as { errors?: GraphQLBody<unknown>['errors'] },
      (error: unknown) => ({ errors: error as GraphQLBody<unknown>['errors'] }),
    );
    expect(failure.errors?.[0]?.extensions).toMatchObject({
      code: 'PAYMENT_REQUIRED',
      currentBalanceUsd: 0.04,
      topUpInstructions: { receiverWallet: RECEIVER },
      siwxChallenge: { info: { domain: host } },
      accepts: [{ payTo: RECEIVER }],
    });
  });

  it('walletBalance pushes the balance now and after a refund', async () => {
    const wallet = newWallet();
    await creditWallet(t.app, wallet.address, '1');
    const events = (await streamClient(wallet)).iterate<{ walletBalance: { balanceUsd: string } }>({
      query: 'subscription { walletBalance { balanceUsd } }',
    });
    const first = await events.next();
    expect(first.value?.data?.walletBalance.balanceUsd).toBe('1');
    await t.app.services.wallets.refund(operator(), wallet.address, parseNano('0.25'));
    const second = await events.next();
    expect(second.value?.data?.walletBalance.balanceUsd).toBe('1.25');
    await events.return?.();
  });
});
