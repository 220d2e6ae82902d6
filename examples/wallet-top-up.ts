/*
 * A wallet caller from start to finish, all on this machine (npm run example:wallet):
 *   1. a local Base chain (ganache, chain id 8453) with a USDC-like EIP-3009 token
 *      (test/fixtures/contracts/TestUsdc.sol, compiled with solc-js) and a funded wallet;
 *   2. Lagoon in-process on a free port (in-memory database) with that token and a settlement key;
 *   3. the wallet signs in (SIGN-IN-WITH-X, EIP-4361 signed with viem), gets 402, tops up 5 USD with an x402
 *      payment (an EIP-3009 authorization), chats with the built-in simulator, and reads its ledger.
 * Every request goes over HTTP, as any x402 client would send it (docs/api.md#wallet-top-up-x402).
 */
import { createServer } from 'node:http';
import OpenAI from 'openai';
import { createSiweMessage, generateSiweNonce } from 'viem/siwe';
import type { PrivateKeyAccount } from 'viem/accounts';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { KEYS, startUsdcChain } from '../test/helpers/usdc-chain.ts';
import { signPayment, usdc } from '../test/helpers/x402-payment.ts';

const log = (step: string, value: unknown) => console.log(`\n# ${step}\n${JSON.stringify(value, null, 2)}`);

async function signInHeader(wallet: PrivateKeyAccount, origin: URL): Promise<string> {
  // A fresh challenge from Lagoon: the domain and URI it names are the ones it accepts (its configured site), and
  // its nonce will do (any 16 hex characters would).
  const challenge = (await (await fetch(new URL('/api/v1/x402/nonce', origin))).json()) as {
    nonce?: string;
    info?: { domain?: string; uri?: string };
  };
  const now = new Date();
  const message = createSiweMessage({
    address: wallet.address,
    chainId: 8453,
    domain: challenge.info?.domain ?? origin.host,
    uri: challenge.info?.uri ?? origin.origin,
    version: '1',
    nonce: challenge.nonce ?? generateSiweNonce().slice(0, 16),
    issuedAt: now,
    expirationTime: new Date(now.getTime() + 10 * 60_000),
    statement: 'Sign in to the Lagoon API with your wallet.',
  });
  const signature = await wallet.signMessage({ message });
  const value = { address: wallet.address, message, signature, timestamp: now.getTime(), chainId: 8453 };
  return Buffer.from(JSON.stringify(value)).toString('base64');
}

async function main() {
  const chain = await startUsdcChain();
  const wallet = chain.account('payer');
  const receiver = chain.account('receiver').address;
  await chain.mint(wallet.address, usdc(50));
  log('local chain', { rpc: chain.url, token: chain.token, wallet: wallet.address, usdc: '50' });

  const config = loadConfig({
    LOG_LEVEL: 'warn',
    LAGOON_DATA_DIR: 'memory://',
    LAGOON_X402_RECEIVER: receiver,
    LAGOON_X402_USDC_ADDRESS: chain.token,
    LAGOON_BASE_RPC_URL: chain.url,
    LAGOON_X402_SETTLEMENT_KEY: KEYS.settler,
  });
  const app = await createApp(config);
  const server = createServer(app.nodeListener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  // As src/main.ts does: sign-ins are for the listen address (no LAGOON_PUBLIC_URL here), on the port just bound.
  app.listening(port);
  const origin = new URL(`http://127.0.0.1:${port}`);
  const api = (path: string) => new URL(`/api/v1${path}`, origin);

  try {
    const signIn = await signInHeader(wallet, origin);
    const balance = await fetch(api(`/x402/balance/${wallet.address}`), { headers: { 'SIGN-IN-WITH-X': signIn } });
    log(`balance before (${balance.status})`, await balance.json());

    const required = await fetch(api('/x402/top-up'), { method: 'POST' });
    const { accepts } = (await required.json()) as { accepts: { amount: string; payTo: `0x${string}` }[] };
    log(`top-up requirements (${required.status})`, accepts);

    const payment = await signPayment(wallet, chain.token, { to: accepts[0]?.payTo ?? receiver, value: usdc(5) });
    const topUp = await fetch(api('/x402/top-up'), {
      method: 'POST',
      headers: { 'PAYMENT-SIGNATURE': payment.header },
    });
    const settlement = Buffer.from(topUp.headers.get('payment-response') ?? '', 'base64').toString();
    log(`top-up (${topUp.status}); PAYMENT-RESPONSE ${settlement}`, await topUp.json());
    log('USDC on chain', {
      wallet: String(await chain.balanceOf(wallet.address)),
      receiver: String(await chain.balanceOf(receiver)),
    });

    const openai = new OpenAI({
      baseURL: api('').href,
      apiKey: 'unused',
      defaultHeaders: { 'SIGN-IN-WITH-X': await signInHeader(wallet, origin) },
    });
    // The wallet header wins over the (unused) Bearer key the OpenAI client always sends.
    const chat = await openai.chat.completions
      .create({ model: 'default', messages: [{ role: 'user', content: 'Hello' }] })
      .catch((error: unknown) => ({ error: String(error) }));
    log(
      'chat',
      'error' in chat ? chat : { model: chat.model, content: chat.choices[0]?.message.content, usage: chat.usage },
    );

    const ledger = await fetch(api(`/x402/transactions/${wallet.address}?limit=10`), {
      headers: { 'SIGN-IN-WITH-X': await signInHeader(wallet, origin) },
    });
    log(`ledger (${ledger.status})`, await ledger.json());
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await app.close();
    await chain.close();
  }
}

await main();
