import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { createApp } from '../src/app.ts';
import { operator } from '../src/auth/auth-context.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { createLogger } from '../src/logger.ts';
import { runLoad, type LoadResult } from './load.ts';

/**
 * Crypto RPC proxy overhead: the same JSON-RPC calls sent directly to a node and through Lagoon, side by side, at
 * fixed concurrency over real TCP with kept-alive connections. Two nodes, each in its own process: ganache (a real
 * local node) and a stub that answers at once (so the difference is the proxy alone). Usage:
 *   npm run bench:rpc                          # embedded PGlite
 *   DATABASE_URL=postgres://… npm run bench:rpc
 * BENCH_SECONDS (default 3) and BENCH_CONNECTIONS (default 1 = latency; try 8 for throughput) tune the run.
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 1);
const ADMIN = 'bench-admin-key';

async function startNode(kind: 'ganache' | 'stub'): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./crypto-rpc-node.ts', import.meta.url).pathname, kind],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`${kind} node exited (${code})`)));
  });
  return { url, child };
}

const [ganacheNode, stubNode] = await Promise.all([startNode('ganache'), startNode('stub')]);
const dir = await mkdtemp(join(tmpdir(), 'lagoon-bench-rpc-'));
const configPath = join(dir, 'operator.yaml');
// Caps far above the load (the defaults would answer 429 after 100 requests a minute).
await writeFile(
  configPath,
  [
    'rpc:',
    '  caps: { standard: { requestsPerMinute: 100000000, creditsPer24h: 100000000000 } }',
    '  networks:',
    `    ethereum-sepolia: { upstreams: ["${ganacheNode.url}"] }`,
    `    base-sepolia: { upstreams: ["${stubNode.url}"] }`,
  ].join('\n'),
);
const config = loadConfig({
  ...process.env,
  LOG_LEVEL: 'silent',
  LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
  LAGOON_DATA_DIR: 'memory://',
  LAGOON_CONFIG: configPath,
});
const database = await openDatabase({ url: config.database.url, dataDir: 'memory://', poolSize: 20 });
const app = await createApp(config, { database, logger: createLogger('silent') });
// The listener `npm start` serves with (the hot routes on Node's own objects).
const server = createServer(app.nodeListener);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
const lagoon = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

const { account } = await app.services.accounts.create(operator(), { name: 'bench' });
await app.services.accounts.credit(operator(), { accountId: account.id, currency: 'USD', amount: '1000000' });
const { secret } = await app.services.accounts.createKey(operator(), account.id, {
  apiKeyType: 'INFERENCE',
  description: 'bench',
});

const single = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
const batch = JSON.stringify(
  Array.from({ length: 100 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })),
);

/** One pool per target, like a real client; the body is read in full before the request counts as done. */
function sender(url: string, path: string, body: string, headers: Record<string, string> = {}) {
  const pool = new Pool(url, { connections: Math.max(1, connections), pipelining: 1 });
  return {
    send: async () => {
      const response = await pool.request({
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      await response.body.arrayBuffer();
      return response.statusCode === 200;
    },
    close: () => pool.close(),
  };
}

const targets = [
  ['stub (answers at once)', stubNode, 'base-sepolia'],
  ['ganache', ganacheNode, 'ethereum-sepolia'],
] as const;
const requests = [
  ['eth_chainId', single],
  ['batch of 100 eth_chainId', batch],
] as const;
// Steady state, not start-up: warm every proxied path first (JIT, connection pools, the account's balance lease),
// or whichever row runs first pays for it.
for (const [, , network] of targets) {
  for (const [, body] of requests) {
    const warm = sender(lagoon, `/api/v1/crypto/rpc/${network}`, body, { authorization: `Bearer ${secret}` });
    await runLoad(warm.send, { connections, seconds: 0.1, warmupSeconds: 2 });
    await warm.close();
  }
}

const rows: [string, string, LoadResult, LoadResult][] = [];
for (const [nodeName, node, network] of targets) {
  for (const [label, body] of requests) {
    const direct = sender(node.url, '/', body);
    const proxied = sender(lagoon, `/api/v1/crypto/rpc/${network}`, body, { authorization: `Bearer ${secret}` });
    // Alternate short rounds so both see the same machine state (the CPU is shared).
    const rounds = 3;
    const directResults: LoadResult[] = [];
    const proxiedResults: LoadResult[] = [];
    for (let round = 0; round < rounds; round += 1) {
      directResults.push(await runLoad(direct.send, { connections, seconds: seconds / rounds, warmupSeconds: 0.3 }));
      proxiedResults.push(await runLoad(proxied.send, { connections, seconds: seconds / rounds, warmupSeconds: 0.3 }));
    }
    rows.push([nodeName, label, median(directResults), median(proxiedResults)]);
    await Promise.all([direct.close(), proxied.close()]);
  }
}
// Where the time goes. 1) The money core alone: a hold (one transaction) and its release, as a proxied call
// has a hold before forwarding and a settlement after. 2) Diagnostic: the proxy path with the money core
// replaced by no-ops (HTTP, auth, validation, caps, idempotency-free forwarding): what the proxy itself adds.
const keyAuth = await app.services.auth.authenticate({ authorization: `Bearer ${secret}` }, 'bench');
const hold = { usd: 12_500n, diem: 12_500n };
const billing = app.services.billing;
const moneyCore = await runLoad(
  async () => {
    await billing.release(await billing.reserve(keyAuth, hold));
    return true;
  },
  { connections, seconds: seconds / 3, warmupSeconds: 0.3 },
);
await app.services.cryptoRpc.flush();
const real = { reserve: billing.reserve.bind(billing), settle: billing.settle.bind(billing) };
billing.reserve = () =>
  Promise.resolve({
    id: 'bench',
    accountId: account.id,
    apiKeyId: null,
    currency: 'USD',
    amount: 0n,
    keyPeriodStart: null,
    requestId: 'bench',
  });
billing.settle = (reservation) =>
  Promise.resolve({
    reservationId: reservation.id,
    currency: 'USD',
    charged: 0n,
    balanceAfter: 0n,
    usageEntryIds: [],
    alreadySettled: false,
  });
const diagnostic: LoadResult[] = [];
for (const send of [
  sender(stubNode.url, '/', single),
  sender(lagoon, '/api/v1/crypto/rpc/base-sepolia', single, { authorization: `Bearer ${secret}` }),
]) {
  diagnostic.push(await runLoad(send.send, { connections, seconds: seconds / 3, warmupSeconds: 0.3 }));
  await send.close();
}
Object.assign(billing, real);
const usage = await database.db
  .selectFrom('usage_entries')
  .select((eb) => eb.fn.countAll<string>().as('n'))
  .where('account_id', '=', account.id)
  .executeTakeFirstOrThrow();

server.close();
await app.close();
ganacheNode.child.kill();
stubNode.child.kill();
await rm(dir, { recursive: true, force: true });

const lines = [
  `Database: ${database.kind}; ${connections} concurrent; ${seconds} s per cell (3 alternating rounds, median shown); ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; Node ${process.version}`,
  `Usage entries written: ${usage.n} (one per proxied request or batch)`,
  '',
  '| node | request | direct p50 ms | via Lagoon p50 ms | added p50 ms | direct p90 | via Lagoon p90 | direct req/s | via Lagoon req/s |',
  '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    ([node, label, d, p]) =>
      `| ${node} | ${label} | ${d.p50} | ${p.p50} | ${round(p.p50 - d.p50)} | ${d.p90} | ${p.p90} | ${d.rps} | ${p.rps} |`,
  ),
  '',
  `Money core alone (billing.reserve → release in-process, drawn from the balance lease when leases are on, ${connections} concurrent): p50 ${moneyCore.p50} ms, p90 ${moneyCore.p90} ms, ${moneyCore.rps}/s`,
  `Diagnostic, money core replaced by no-ops, stub node, eth_chainId: direct p50 ${diagnostic[0]?.p50} ms, via Lagoon p50 ${diagnostic[1]?.p50} ms (added ${round((diagnostic[1]?.p50 ?? 0) - (diagnostic[0]?.p50 ?? 0))} ms)`,
];
console.log(lines.join('\n'));

function median(results: LoadResult[]): LoadResult {
  const pick = <K extends keyof LoadResult>(key: K) =>
    [...results].map((r) => r[key]).sort((a, b) => a - b)[Math.floor(results.length / 2)] ?? 0;
  return {
    requests: pick('requests'),
    errors: pick('errors'),
    rps: pick('rps'),
    p50: pick('p50'),
    p90: pick('p90'),
    p99: pick('p99'),
  };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
