import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNano } from '../../src/billing/money.ts';
import { startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { creditWallet, newWallet, signInHeader } from '../helpers/wallets.ts';

/*
 * Which site a wallet sign-in is for (issue 33, item 9): the domains a SIGN-IN-WITH-X message may name come from
 * configuration only (LAGOON_SIWE_DOMAINS, else LAGOON_PUBLIC_URL's host, else the listen address), never from the
 * Host header, which the caller picks. A phishing site that had a victim sign in "to evil.example" must not be able
 * to spend the victim's credit here by sending `Host: evil.example`. Over HTTP, REST and GraphQL.
 */

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** An HTTP request with a Host header of the caller's choosing (fetch always sends the URL's own). */
function send(
  url: string,
  init: { host?: string; method?: string; headers?: Record<string, string>; body?: unknown },
): Promise<Answer> {
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  const headers: Record<string, string> = {
    ...(body !== undefined && { 'content-type': 'application/json' }),
    ...(init.host !== undefined && { host: init.host }),
    ...init.headers,
  };
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? (body ? 'POST' : 'GET'), headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const CHAT = { model: 'default', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 };
const WALLET_QUERY = { query: '{ wallet { address balance { balanceUsd } } }' };

/** What one server accepts: sign-in attempts against REST (a paid chat call) and GraphQL (`wallet`). */
function signInProbe(server: () => ChatServer) {
  return {
    async rest(header: string, host?: string): Promise<Answer> {
      return send(`${server().url}/api/v1/chat/completions`, {
        ...(host !== undefined && { host }),
        headers: { 'SIGN-IN-WITH-X': header },
        body: CHAT,
      });
    },
    async graphql(header: string, host?: string): Promise<Answer> {
      return send(`${server().url}/graphql`, {
        ...(host !== undefined && { host }),
        headers: { 'SIGN-IN-WITH-X': header, accept: 'application/graphql-response+json' },
        body: WALLET_QUERY,
      });
    },
  };
}

/** A refusal of the sign-in's domain: REST's 401 error body, GraphQL's error with the same code. */
function expectDomainRefused(answer: { rest: Answer; graphql: Answer }, domain: string): void {
  expect(answer.rest.status).toBe(401);
  expect(answer.rest.body).toMatchObject({
    code: 'SIWX_DOMAIN_MISMATCH',
    error: `Wallet sign-in refused: domain "${domain}" is not accepted here`,
  });
  expect(answer.graphql.body.data ?? null).toBeNull();
  expect(answer.graphql.body.errors).toMatchObject([
    {
      message: `Wallet sign-in refused: domain "${domain}" is not accepted here`,
      extensions: { code: 'SIWX_DOMAIN_MISMATCH' },
    },
  ]);
}

describe(`Wallet sign-in domains: the listen address by default (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let listen: string;
  const probe = signInProbe(() => server);

  beforeAll(async () => {
    server = await startChatServer();
    listen = new URL(server.url).host;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses a message signed for another site, even sent with that site as Host, and charges nothing', async () => {
    const victim = newWallet();
    const accountId = await creditWallet(server.t.app, victim.address, '1');
    const phished = await signInHeader(victim, { domain: 'evil.example' });
    expectDomainRefused(
      { rest: await probe.rest(phished, 'evil.example'), graphql: await probe.graphql(phished, 'evil.example') },
      'evil.example',
    );
    expectDomainRefused({ rest: await probe.rest(phished), graphql: await probe.graphql(phished) }, 'evil.example');
    const usd = (await server.t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD');
    expect(usd).toMatchObject({ amount: parseNano('1'), reserved: 0n });
  });

  it('accepts the listen address as local clients name it: 127.0.0.1:port and localhost:port', async () => {
    const port = new URL(server.url).port;
    for (const domain of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const wallet = newWallet();
      await creditWallet(server.t.app, wallet.address, '1');
      const header = await signInHeader(wallet, { domain });
      // Whatever Host the request carries: the domain is judged against the configuration only.
      const [rest, graphql] = [await probe.rest(header, 'evil.example'), await probe.graphql(header)];
      expect(rest.status).toBe(200);
      expect(graphql.body).toEqual({
        data: { wallet: { address: wallet.address.toLowerCase(), balance: { balanceUsd: expect.any(String) } } },
      });
    }
    const elsewhere = await signInHeader(newWallet(), { domain: `127.0.0.1:${Number(port) + 1}` });
    expect((await probe.rest(elsewhere)).body).toMatchObject({ code: 'SIWX_DOMAIN_MISMATCH' });
  });

  it('hands out challenges naming the listen address, whatever the Host header says', async () => {
    const nonce = await send(`${server.url}/api/v1/x402/nonce`, { host: 'evil.example' });
    expect(nonce.body).toMatchObject({ info: { domain: listen, uri: server.url } });
    // No credentials: the discovery 402, its resource and links on the same site.
    const discovery = await send(`${server.url}/api/v1/chat/completions`, { host: 'evil.example', body: CHAT });
    expect(discovery.status).toBe(402);
    expect(discovery.body).toMatchObject({
      resource: { url: `${server.url}/api/v1/chat/completions` },
      extensions: { 'sign-in-with-x': { info: { domain: listen, uri: server.url } } },
      authOptions: { apiKey: { getKey: `${server.url}/api/v1/api_keys` } },
    });
    // A wallet below the minimum balance: the top-up 402 (REST) and error extensions (GraphQL) name it too.
    const wallet = newWallet();
    await creditWallet(server.t.app, wallet.address, '0.01');
    const header = await signInHeader(wallet, { domain: listen });
    const low = await probe.rest(header, 'evil.example');
    expect(low.status).toBe(402);
    expect(low.body).toMatchObject({ siwxChallenge: { info: { domain: listen, uri: server.url } } });
    const mutation = `mutation { chatCompletion(input: { model: "default", messages: [{ role: USER, content: "Hi" }] }) {
      __typename } }`;
    const graphql = await send(`${server.url}/graphql`, {
      host: 'evil.example',
      headers: { 'SIGN-IN-WITH-X': header, accept: 'application/graphql-response+json' },
      body: { query: mutation },
    });
    expect(graphql.body.errors).toMatchObject([
      { extensions: { code: 'PAYMENT_REQUIRED', siwxChallenge: { info: { domain: listen, uri: server.url } } } },
    ]);
  });
});

describe(`Wallet sign-in domains: LAGOON_PUBLIC_URL (${testDatabaseKind})`, () => {
  let server: ChatServer;
  const probe = signInProbe(() => server);

  beforeAll(async () => {
    server = await startChatServer({ LAGOON_PUBLIC_URL: 'https://API.example.com/lagoon' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('accepts only its host: the listen address and the Host header are refused', async () => {
    const wallet = newWallet();
    await creditWallet(server.t.app, wallet.address, '1');
    const header = await signInHeader(wallet, { domain: 'api.example.com' });
    expect((await probe.rest(header)).status).toBe(200);
    expect((await probe.graphql(header)).body.errors).toBeUndefined();

    const listen = new URL(server.url).host;
    const local = await signInHeader(wallet, { domain: listen });
    expectDomainRefused({ rest: await probe.rest(local), graphql: await probe.graphql(local) }, listen);
    const phished = await signInHeader(wallet, { domain: 'evil.example' });
    expectDomainRefused(
      { rest: await probe.rest(phished, 'evil.example'), graphql: await probe.graphql(phished, 'evil.example') },
      'evil.example',
    );
  });

  it('hands out challenges for the public URL', async () => {
    const nonce = await send(`${server.url}/api/v1/x402/nonce`, { host: 'evil.example' });
    expect(nonce.body).toMatchObject({ info: { domain: 'api.example.com', uri: 'https://api.example.com' } });
  });
});

describe(`Wallet sign-in domains: LAGOON_SIWE_DOMAINS over LAGOON_PUBLIC_URL (${testDatabaseKind})`, () => {
  let server: ChatServer;
  const probe = signInProbe(() => server);

  beforeAll(async () => {
    server = await startChatServer({
      LAGOON_SIWE_DOMAINS: 'app.example.com, API.example.com',
      LAGOON_PUBLIC_URL: 'https://api.example.com',
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('accepts each listed domain and nothing else; the challenge names the public URL, which is listed', async () => {
    for (const domain of ['app.example.com', 'api.example.com']) {
      const wallet = newWallet();
      await creditWallet(server.t.app, wallet.address, '1');
      expect((await probe.rest(await signInHeader(wallet, { domain }))).status).toBe(200);
    }
    const phished = await signInHeader(newWallet(), { domain: 'evil.example' });
    expectDomainRefused(
      { rest: await probe.rest(phished, 'evil.example'), graphql: await probe.graphql(phished, 'evil.example') },
      'evil.example',
    );
    const nonce = await send(`${server.url}/api/v1/x402/nonce`, {});
    expect(nonce.body).toMatchObject({ info: { domain: 'api.example.com', uri: 'https://api.example.com' } });
  });
});
