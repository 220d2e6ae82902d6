import { createServer, type IncomingMessage } from 'node:http';
import { listenLocally } from './local-server.ts';

/*
 * A fake OpenAI-compatible embedding server (what vLLM, TEI, Infinity and Ollama speak) on 127.0.0.1:<port 0>:
 * POST {url}/embeddings answers `dimensions` (default 8) numbers per input, vector i of input j being
 * (j + 1) / (i + 1), as floats or base64 float32 as asked, with `usage.prompt_tokens` = 3 per input. `queue`
 * answers the next requests with an HTTP status instead; every request body is recorded. `url` ends in `/v1`.
 */

export interface FakeEmbeddingUpstream {
  readonly url: string;
  readonly requests: Record<string, unknown>[];
  /** The next requests answer these statuses (an error body), in order. */
  queue(...statuses: number[]): void;
  close(): Promise<void>;
}

export const fakeVector = (input: number, dimensions = 8): number[] =>
  Array.from({ length: dimensions }, (_, i) => Math.fround((input + 1) / (i + 1)));

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

export async function startEmbeddingUpstream(): Promise<FakeEmbeddingUpstream> {
  const requests: Record<string, unknown>[] = [];
  const queued: number[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(text) as { input: string[]; encoding_format?: string; dimensions?: number };
      requests.push(body);
      const status = queued.shift();
      if (status !== undefined) {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake failure ${status}` } }));
        return;
      }
      const data = body.input.map((_, index) => {
        const vector = fakeVector(index, body.dimensions ?? 8);
        const embedding =
          body.encoding_format === 'base64' ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector;
        return { object: 'embedding', index, embedding };
      });
      const tokens = 3 * body.input.length;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ object: 'list', data, model: 'fake', usage: { prompt_tokens: tokens, total_tokens: tokens } }),
      );
    });
  });
  const listening = await listenLocally(server);
  return {
    url: `${listening.url}/v1`,
    requests,
    queue: (...statuses) => queued.push(...statuses),
    close: listening.close,
  };
}
