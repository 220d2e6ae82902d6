import { createServer, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.ts';
import { OpenAIEmbeddingsEngine } from '../../src/providers/embeddings/openai-embeddings.engine.ts';
import { listenLocally } from '../helpers/local-server.ts';

/*
 * The adapter's timeout is the pool's: the headers must come within timeoutMs, and then each piece of the body. A
 * server that stalls at either point is a REQUEST_TIMEOUT (retryable), not a hang and not a 502.
 */

const request = { inputs: ['a', 'b'], preferred: 'base64' as const };
const opened: { close: () => Promise<void> }[] = [];
const held: ServerResponse[] = [];

afterEach(async () => {
  for (const res of held.splice(0)) res.destroy();
  await Promise.all(opened.splice(0).map((server) => server.close()));
});

/** A server that answers with `head` (nothing at all when undefined) and then stalls. */
async function stallingServer(head?: string): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    held.push(res);
    if (head === undefined) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(head);
  });
  const local = await listenLocally(server);
  opened.push(local);
  return `${local.url}/v1`;
}

const timedOut = (error: unknown) => {
  expect(error).toBeInstanceOf(UpstreamError);
  expect((error as UpstreamError).code).toBe('REQUEST_TIMEOUT');
  return true;
};

describe('OpenAIEmbeddingsEngine timeouts', () => {
  it('times out a server that never answers, whole and streamed', async () => {
    const adapter = new OpenAIEmbeddingsEngine('slow', { baseUrl: await stallingServer(), timeoutMs: 150 });
    try {
      await expect(adapter.embed('m', request, {})).rejects.toSatisfy(timedOut);
      await expect(adapter.embedStream('m', request, {})).rejects.toSatisfy(timedOut);
    } finally {
      await adapter.close();
    }
  });

  it('times out an answer that stops halfway', async () => {
    const vector = Buffer.alloc(16).toString('base64');
    const head = `{"object":"list","data":[{"object":"embedding","embedding":"${vector}","index":0},`;
    const adapter = new OpenAIEmbeddingsEngine('stalls', { baseUrl: await stallingServer(head), timeoutMs: 150 });
    try {
      const stream = await adapter.embedStream('m', request, {});
      const batches = stream.batches[Symbol.asyncIterator]();
      const first = await batches.next();
      expect(first.done).toBe(false);
      expect(first.value).toHaveLength(1);
      await expect(batches.next()).rejects.toSatisfy(timedOut);
    } finally {
      await adapter.close();
    }
  });

  it('reports a cancelled call as cancelled, not as a timeout', async () => {
    const adapter = new OpenAIEmbeddingsEngine('slow', { baseUrl: await stallingServer(), timeoutMs: 5_000 });
    const controller = new AbortController();
    try {
      const call = adapter.embedStream('m', request, { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      const error = await call.then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(UpstreamError);
      expect((error as UpstreamError).code).not.toBe('REQUEST_TIMEOUT');
    } finally {
      await adapter.close();
    }
  });
});
