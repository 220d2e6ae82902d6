import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import ganache from 'ganache';

/**
 * The upstream of bench/crypto-rpc.ts, in its own process so that its work does not share the proxy's event loop:
 * `ganache` (a real local node) or `stub` (answers every request at once with a fixed result: pure proxy
 * overhead). Prints its URL on stdout.
 */
const kind = process.argv[2] ?? 'ganache';
if (kind === 'ganache') {
  const server = ganache.server({
    logging: { quiet: true },
    chain: { chainId: 1337 },
    wallet: { totalAccounts: 1 },
    miner: { instamine: 'eager' },
  });
  await server.listen(0, '127.0.0.1');
  console.log(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
} else {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown } | { id: unknown }[];
      const answer = (item: { id: unknown }) => ({ jsonrpc: '2.0', id: item.id, result: '0x539' });
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
}
