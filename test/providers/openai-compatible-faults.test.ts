import { beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError, ValidationError } from '../../src/errors.ts';
import { collect, failure, request, useAdapterUpstream } from '../helpers/openai-adapter.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';

const harness = useAdapterUpstream();
const adapter = harness.adapter;
let upstream: OpenAIUpstream;
beforeAll(() => {
  upstream = harness.upstream;
});

describe('OpenAICompatibleEngine, faults', () => {
  it('upstream 500 → 502 UPSTREAM_ERROR, retryable', async () => {
    upstream.setBehavior({ kind: 'status', status: 500 });
    const error = await failure(adapter().complete(request(), {}));
    expect(error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      retryable: true,
      message: 'The model server failed (HTTP 500)',
    });
    expect(await failure(adapter().stream(request(), {}))).toMatchObject({
      code: 'UPSTREAM_ERROR',
      retryable: true,
    });
  });

  it('no headers in time → 504 REQUEST_TIMEOUT', async () => {
    upstream.setBehavior({ kind: 'delay', ms: 2_000 });
    const error = await failure(adapter({ timeoutMs: 150 }).complete(request(), {}));
    expect(error).toMatchObject({ code: 'REQUEST_TIMEOUT', retryable: true });
    expect(await failure(adapter({ timeoutMs: 150 }).stream(request(), {}))).toMatchObject({
      code: 'REQUEST_TIMEOUT',
    });
  });

  it('connection reset before headers → 502', async () => {
    upstream.setBehavior({ kind: 'reset' });
    expect(await failure(adapter().complete(request(), {}))).toMatchObject({
      code: 'UPSTREAM_ERROR',
      retryable: true,
    });
    expect(await failure(adapter().stream(request(), {}))).toMatchObject({
      code: 'UPSTREAM_ERROR',
      retryable: true,
      cancelled: false,
    });
  });

  it('an unreachable upstream → 502', async () => {
    const closed = await startOpenAIUpstream();
    const url = closed.url;
    await closed.close();
    const error = await failure(adapter({ baseUrl: url }).complete(request(), {}));
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect((error as Error).message).not.toContain('127.0.0.1');
  });

  it('malformed JSON and malformed SSE → 502', async () => {
    upstream.setBehavior({ kind: 'malformed' });
    expect(await failure(adapter().complete(request(), {}))).toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: 'The model server sent a malformed completion',
    });
    expect(await failure(adapter().stream(request(), {}))).toMatchObject({
      code: 'UPSTREAM_ERROR',
      retryable: true,
      cancelled: false,
    });
  });

  it('a malformed event after the first chunk fails the iteration with 502', async () => {
    upstream.setBehavior({
      kind: 'custom',
      handle: (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"id":"a","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
        res.end('data: {not json}\n\n');
      },
    });
    const stream = await adapter().stream(request(), {});
    const error = await failure(collect(stream));
    expect(error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: 'The model server sent a malformed stream event',
    });
  });

  it('pause then break mid-stream → the iteration fails with 502 after the delivered chunks', async () => {
    upstream.setBehavior({ kind: 'reply', pauseAfterChunks: 2, pauseMs: 50, breakAfterChunks: 2 });
    const stream = await adapter().stream(request(), {});
    const seen: string[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
      })(),
    );
    expect(error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: 'The model server broke off the stream',
    });
    expect(seen.join('')).toBe('Hello from ');
  });

  it('silence between chunks longer than the idle timeout → 504', async () => {
    upstream.setBehavior({ kind: 'reply', pauseAfterChunks: 1, pauseMs: 1_500 });
    const stream = await adapter({ options: { idleTimeoutMs: 150 } }).stream(request(), {});
    expect(await failure(collect(stream))).toMatchObject({ code: 'REQUEST_TIMEOUT' });
  });

  it("upstream 400 / 422 → ValidationError with the upstream's message", async () => {
    upstream.setBehavior({
      kind: 'status',
      status: 400,
      message: "This model's maximum context length is 8192 tokens.",
    });
    const error = await failure(adapter().complete(request(), {}));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toBe("This model's maximum context length is 8192 tokens.");
    upstream.setBehavior({
      kind: 'status',
      status: 422,
      body: { detail: [{ loc: ['body', 'top_k'], msg: 'Input should be a valid integer' }] },
    });
    expect(await failure(adapter().stream(request(), {}))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'Input should be a valid integer',
    });
  });

  it('upstream 401 / 403 → 502 (the operator key, not the caller), not retryable; 429 → 503', async () => {
    upstream.setBehavior({ kind: 'status', status: 401 });
    const error = await failure(adapter().complete(request(), {}));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
    upstream.setBehavior({ kind: 'status', status: 429 });
    expect(await failure(adapter().complete(request(), {}))).toMatchObject({
      code: 'MODEL_AT_CAPACITY',
      retryable: true,
    });
  });
});
