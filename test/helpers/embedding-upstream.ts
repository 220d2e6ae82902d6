import { createServer, type IncomingMessage } from 'node:http';
import { listenLocally } from './local-server.ts';

/*
 * A fake OpenAI-compatible embedding server (what vLLM, TEI, Infinity and Ollama speak) on 127.0.0.1:<port 0>:
 * POST {url}/embeddings answers `dimensions` (default 8) numbers per input, vector i of input j being
 * (j + 1) / (i + 1), as floats or base64 float32 as asked, with `usage.prompt_tokens` = 3 per input. An upstream
 * model named `wide-<n>` answers n dimensions by default. `queue` answers the next requests with an HTTP status
 * instead, `queueBody` with a 200 and the given body; every request body is recorded and every 200 body sent is
 * kept in `sent`. `url` ends in `/v1`.
 */

export interface FakeEmbeddingUpstream {
  readonly url: string;
  readonly requests: Record<string, unknown>[];
  /** The next requests answer these statuses (an error body), in order. */
  queue(...statuses: number[]): void;
  /** The next request answers 200 with this body as it is. */
  queueBody(body: string): void;
  /** The 200 bodies sent, in order. */
  readonly sent: string[];
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
  const bodies: string[] = [];
  const sent: string[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(text) as {
        model: string;
        input: string[];
        encoding_format?: string;
        dimensions?: number;
      };
      requests.push(body);
      const queuedBody = bodies.shift();
      if (queuedBody !== undefined) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(queuedBody);
        return;
      }
      const status = queued.shift();
      if (status !== undefined) {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake failure ${status}` } }));
        return;
      }
      const data = body.input.map((_, index) => {
        const vector = fakeVector(index, body.dimensions ?? (Number(/^wide-(\d+)$/.exec(body.model)?.[1]) || 8));
        const embedding =
          body.encoding_format === 'base64' ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector;
        return { object: 'embedding', index, embedding };
      });
      const tokens = 3 * body.input.length;
      const answer = JSON.stringify({
        object: 'list',
        data,
        model: 'fake',
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
      sent.push(answer);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
    });
  });
  const listening = await listenLocally(server);
  return {
    url: `${listening.url}/v1`,
    requests,
    queue: (...statuses) => queued.push(...statuses),
    queueBody: (body) => bodies.push(body),
    sent,
    close: listening.close,
  };
}
