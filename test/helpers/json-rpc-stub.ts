import { createServer } from 'node:http';
import { listenLocally } from './local-server.ts';

/** A JSON-RPC node that answers every request (and every batch item) with a block number, and counts them. */
export async function startJsonRpcStub(): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests += 1;
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        parsed = {};
      }
      const answer = (item: unknown) => ({
        jsonrpc: '2.0',
        id: (item as { id?: unknown } | null)?.id ?? null,
        result: '0x10',
      });
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
    });
  });
  const listening = await listenLocally(server);
  return { url: listening.url, requests: () => requests, close: listening.close };
}
