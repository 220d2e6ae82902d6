import { createServer } from 'node:http';
import { cpus } from 'node:os';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { findOrCreateWalletAccount } from '../src/accounts/account.repository.ts';
import { createApp } from '../src/app.ts';
import { operator } from '../src/auth/auth-context.ts';
import { parseNano } from '../src/billing/money.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { createLogger } from '../src/logger.ts';

/**
 * Wallet callers' costs (docs/api.md#wallet-callers-x402):
 * 1. SIGN-IN-WITH-X verification in process (AuthService.authenticate): a header seen for the first time (decode,
 *    EIP-4361 checks, secp256k1 recovery, nonce row, account lookup) against the same header again (SHA-256 + map).
 * 2. POST /api/v1/chat/completions on the built-in simulator over loopback HTTP, one request at a time, alternating a
 *    key-paid and a wallet-paid call (ABAB, so drift hits both alike): the wallet's extra cost per call.
 *   npm run bench:wallet                                                            # embedded PGlite (memory)
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/lagoon_wallet_bench npm run bench:wallet
 * BENCH_HEADERS (default 300) first-time headers, BENCH_REPEATS (default 20000) cached verifications,
 * BENCH_CALLS (default 2000) chat calls of each kind.
 */
const HEADERS = Number(process.env.BENCH_HEADERS ?? 300);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 20_000);
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ADMIN = 'bench-wallet-admin-key';

const config = loadConfig({
  ...process.env,
  LOG_LEVEL: 'silent',
  LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
  LAGOON_DATA_DIR: 'memory://',
  LAGOON_X402_MIN_BALANCE_USD: '0',
});
const database = await openDatabase({ url: config.database.url, dataDir: 'memory://', poolSize: 20 });
const app = await createApp(config, { database, logger: createLogger('silent') });
const server = createServer(app.nodeListener);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
const port = typeof address === 'object' && address ? address.port : 0;
app.listening(port);
const host = `127.0.0.1:${port}`;
const { services } = app;

const wallet = privateKeyToAccount(generatePrivateKey());
let counter = 0;
async function header(): Promise<string> {
  const issuedAt = new Date();
  const message = createSiweMessage({
    address: wallet.address,
    chainId: 8453,
    domain: host,
    nonce: `${Date.now().toString(16)}${(counter++).toString(16).padStart(6, '0')}`,
    uri: `http://${host}`,
    version: '1',
    issuedAt,
    expirationTime: new Date(issuedAt.getTime() + 10 * 60_000),
  });
  const signature = await wallet.signMessage({ message });
  const payload = { address: wallet.address, message, signature, timestamp: issuedAt.getTime(), chainId: 8453 };
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

const percentile = (samples: number[], p: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};
const row = (name: string, samples: number[]) =>
  `| ${name} | ${samples.length} | ${percentile(samples, 50).toFixed(3)} | ${percentile(samples, 90).toFixed(3)} | ${percentile(samples, 99).toFixed(3)} |`;

// 1. Verification.
const headers = await Promise.all(Array.from({ length: HEADERS }, () => header()));
const first: number[] = [];
for (const value of headers) {
  const started = performance.now();
  await services.auth.authenticate({ 'sign-in-with-x': value, host }, 'bench');
  first.push(performance.now() - started);
}
const cachedHeader = headers[0]!;
const cached: number[] = [];
for (let i = 0; i < REPEATS; i += 1) {
  const started = performance.now();
  await services.auth.authenticate({ 'sign-in-with-x': cachedHeader, host }, 'bench');
  cached.push(performance.now() - started);
}

// 2. Chat, key-paid against wallet-paid.
const { account } = await services.accounts.create(operator(), { name: 'bench key' });
await services.accounts.credit(operator(), { accountId: account.id, currency: 'USD', amount: '100000' });
const { secret } = await services.accounts.createKey(operator(), account.id, {
  apiKeyType: 'INFERENCE',
  description: 'bench',
});
const walletAccount = await findOrCreateWalletAccount(database.db, wallet.address);
await services.billing.credit(operator(), {
  accountId: walletAccount.id,
  currency: 'USD',
  amount: parseNano('100000'),
  type: 'TOP_UP',
});
const body = JSON.stringify({ model: 'default', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 16 });
const call = async (auth: Record<string, string>) => {
  const started = performance.now();
  const response = await fetch(`http://${host}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body,
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`chat answered ${response.status}`);
  return performance.now() - started;
};
const keyAuth = { authorization: `Bearer ${secret}` };
const walletAuth = { 'sign-in-with-x': cachedHeader };
for (let i = 0; i < 200; i += 1) await Promise.all([call(keyAuth), call(walletAuth)]); // warm-up
const keyPaid: number[] = [];
const walletPaid: number[] = [];
for (let i = 0; i < CALLS; i += 1) {
  keyPaid.push(await call(keyAuth));
  walletPaid.push(await call(walletAuth));
}

console.log(`wallet bench: ${database.kind}, ${cpus().length} cores, Node ${process.version}\n`);
console.log('| measurement | samples | p50 ms | p90 ms | p99 ms |\n|---|---:|---:|---:|---:|');
console.log(row('SIGN-IN-WITH-X, first time (verify + nonce + account)', first));
console.log(row('SIGN-IN-WITH-X, cached header', cached));
console.log(row('chat, key-paid (simulator, sequential)', keyPaid));
console.log(row('chat, wallet-paid (simulator, sequential)', walletPaid));
console.log(`\nwallet − key, p50: ${(percentile(walletPaid, 50) - percentile(keyPaid, 50)).toFixed(3)} ms`);
server.closeAllConnections();
server.close();
await app.close();
