import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

/**
 * The floor of the chat benchmark: the least a Node gateway can do on the same path, run in Lagoon's place with
 *   BENCH_LAGOON_NODE_ARGS='--import tsx' BENCH_LAGOON_ENTRY=bench/floor-proxy.ts npm run bench:chat
 * (bench/embeddings.ts takes the same two variables). It reads the benchmark's operator config (LAGOON_CONFIG) for
 * the upstream, answers POST /api/v1/<path> by sending the body on to the upstream's <path> with the upstream's model
 * name over a keep-alive pool, and copies the upstream's answer back byte for byte, each piece written as it
 * arrives. No auth, no validation, no hold or settlement, no event parsing, no metrics: what is left is Node's HTTP
 * server and client and the extra hop over loopback, which is the part of Lagoon's overhead that no work inside
 * Lagoon can remove on a given host.
 */
interface BenchConfig {
  readonly providers: readonly { readonly baseUrl: string }[];
  readonly models: readonly { readonly id: string; readonly upstreamModel: string }[];
}

const config = JSON.parse(readFileSync(process.env.LAGOON_CONFIG ?? '', 'utf8')) as BenchConfig;
const base = new URL(config.providers[0]!.baseUrl);
const upstreamModels = new Map(config.models.map((model) => [model.id, model.upstreamModel]));
const pool = new Pool(base.origin, { connections: 1024, keepAliveTimeout: 60_000 });

const server = createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    if (request.method !== 'POST' || !request.url?.startsWith('/api/v1/')) {
      response.writeHead(404).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { model: string };
    body.model = upstreamModels.get(body.model) ?? body.model;
    pool
      .request({
        method: 'POST',
        path: `${base.pathname}${request.url.slice('/api/v1'.length)}`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      .then(async (upstream) => {
        response.writeHead(upstream.statusCode, {
          'content-type': String(upstream.headers['content-type'] ?? 'application/json'),
        });
        for await (const piece of upstream.body) response.write(piece as Buffer);
        response.end();
      })
      .catch(() => response.destroy());
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  // The line bench/chat-gateway.ts waits for.
  process.stdout.write(
    `Lagoon floor proxy on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
