import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatAccount, startChatServer, tokenCostNano, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { listenLocally } from '../helpers/local-server.ts';
import { creditWallet, newWallet, signInHeader } from '../helpers/wallets.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * An upstream's embeddings answer passed on as it arrives (POST /api/v1/embeddings for API-key callers): the client
 * has the first vectors before the upstream has sent the rest; what breaks off after them cuts the connection and
 * charges nothing; what fails before them is an ordinary error, with fallback to the next provider.
 */

/** One vector's base64 (~350 KB) is more than Lagoon gathers before it writes (192 KB). */
const DIMENSIONS = 65_536;
const vector = (input: number) =>
  Buffer.from(Float32Array.from({ length: DIMENSIONS }, (_, i) => Math.fround((input + 1) / (i + 1))).buffer).toString(
    'base64',
  );
const item = (index: number) => JSON.stringify({ object: 'embedding', index, embedding: vector(index) });

/** How the scripted upstream answers the next request: the pieces of its body, and what happens after them. */
interface Script {
  readonly pieces: string[];
  /** Wait for `release()` before the last piece. */
  readonly hold?: boolean;
  /** Cut the connection instead of sending the last piece. */
  readonly cut?: boolean;
}

describe(`REST POST /api/v1/embeddings, streamed from the upstream (${testDatabaseKind})`, () => {
  let dir: string;
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  let upstreamUrl: string;
  let closeUpstream: () => Promise<void>;
  let brokenUrl: string;
  let closeBroken: () => Promise<void>;
  const scripts: Script[] = [];
  let release: () => void = () => undefined;
  let upstreamClosed: Promise<void> = Promise.resolve();
  /** Resolved when the upstream has sent the first pieces of its answer. */
  let answering: () => void = () => undefined;
  let brokenCalls = 0;

  const play = async (script: Script, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const last = script.pieces.length - 1;
    script.pieces.slice(0, last).forEach((piece) => res.write(piece));
    upstreamClosed = new Promise((resolve) => res.once('close', resolve));
    answering();
    if (script.hold) await new Promise<void>((resolve) => (release = resolve));
    if (script.cut) res.socket?.destroy();
    else res.end(script.pieces[last]);
  };

  beforeAll(async () => {
    const upstream = createServer((req, res) => {
      req.resume();
      req.on('end', () => void play(scripts.shift() ?? { pieces: ['{}'] }, res));
    });
    ({ url: upstreamUrl, close: closeUpstream } = await listenLocally(upstream));
    // Answers 200 with an error instead of vectors: the gateway must try the next provider.
    const broken = createServer((req, res) => {
      req.resume();
      brokenCalls += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"error":{"message":"model is loading"}}');
    });
    ({ url: brokenUrl, close: closeBroken } = await listenLocally(broken));
    dir = await mkdtemp(join(tmpdir(), 'lagoon-embeddings-stream-'));
    const path = join(dir, 'operator.json');
    const model = (id: string, providers: string[]) => ({
      id,
      type: 'embedding',
      name: id,
      pricing: { input: { usd: 0.1 }, output: { usd: 0.1 } },
      spec: { embeddingDimensions: DIMENSIONS, maxInputTokens: 512, supportsCustomDimensions: false },
      providers: providers.map((provider) => ({ id: provider, upstreamModel: 'bge' })),
    });
    await writeFile(
      path,
      JSON.stringify({
        providers: [
          { id: 'scripted', type: 'openai-compatible', baseUrl: `${upstreamUrl}/v1`, maxRetries: 0 },
          { id: 'loading', type: 'openai-compatible', baseUrl: `${brokenUrl}/v1`, maxRetries: 0 },
        ],
        models: [model('stream-embedding', ['scripted']), model('fallback-embedding', ['loading', 'scripted'])],
      }),
    );
    server = await startChatServer({ LAGOON_CONFIG: path, LAGOON_X402_MIN_BALANCE_USD: '0' });
    account = await chatAccount(server);
  }, scaled(60_000));
  afterAll(async () => {
    await server.close();
    await Promise.all([closeUpstream(), closeBroken(), rm(dir, { recursive: true, force: true })]);
  });

  /**
   * Two base64 vectors asked for over a client of its own, with the upstream playing `script`; the answer is read by
   * `use` as it comes. The upstream is let go and the client closed afterwards, whatever happened.
   */
  const streamed = async (script: Script, use: (response: Dispatcher.ResponseData) => Promise<void>) => {
    scripts.push(script);
    const client = new Client(server.url);
    try {
      await use(
        await client.request({
          path: '/api/v1/embeddings',
          method: 'POST',
          headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'stream-embedding', input: ['a', 'b'], encoding_format: 'base64' }),
        }),
      );
    } finally {
      release();
      await client.destroy();
    }
  };
  const settledBalance = async (expected: bigint) =>
    eventually(async () => {
      const now = await account.balance();
      expect([now.amount, now.reserved]).toEqual([expected, 0n]);
    });

  it('should pass the first vectors on before the upstream has sent the rest, then charge the tokens', async () => {
    const before = await account.balance();
    const script = {
      pieces: [`{"object":"list","data":[${item(0)},`, `${item(1)}],"model":"bge","usage":{"prompt_tokens":5}}`],
      hold: true,
    };
    await streamed(script, async (response) => {
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toContain('application/json');
      const chunks = response.body[Symbol.asyncIterator]();
      // The first vector comes whole while the upstream still holds the second.
      const opening = `{"object":"list","data":[${JSON.stringify({ object: 'embedding', embedding: vector(0), index: 0 })}`;
      let first = '';
      while (first.length < opening.length) first += String((await chunks.next()).value);
      expect(first).toBe(opening);
      // Not charged while the answer is open: the hold covers it.
      expect((await account.balance()).reserved).toBeGreaterThan(0n);
      release();
      let rest = '';
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) rest += String(next.value);
      expect(JSON.parse(first + rest)).toEqual({
        object: 'list',
        data: [0, 1].map((index) => ({ object: 'embedding', embedding: vector(index), index })),
        model: 'stream-embedding',
        usage: { prompt_tokens: 5, total_tokens: 5 },
      });
    });
    await settledBalance(before.amount - tokenCostNano(5, '0.1'));
  });

  it('should put vectors the upstream sent out of order back in order, compressed when asked', async () => {
    scripts.push({ pieces: [`{"data":[${item(2)},${item(0)},${item(1)}],"usage":{"prompt_tokens":3}}`] });
    const response = await fetch(`${server.url}/api/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'stream-embedding', input: ['a', 'b', 'c'], encoding_format: 'base64' }),
    });
    // fetch asks for gzip and deflate, and decodes the answer.
    expect(response.headers.get('content-encoding')).toBe('gzip');
    const answer = (await response.json()) as { data: { index: number; embedding: string }[] };
    expect(answer.data).toEqual([0, 1, 2].map((index) => ({ object: 'embedding', embedding: vector(index), index })));
  });

  it('should rewrite any layout of the upstream into OpenAI order, with indexes of several digits', async () => {
    const count = 120;
    const small = (index: number) => Buffer.from(Float32Array.from([index, -index, 0.5]).buffer).toString('base64');
    // vLLM's member order, pretty-printed, with an escaped member name, in pieces that split names and numbers.
    const upstreamAnswer = JSON.stringify(
      {
        id: 'embd-1',
        data: Array.from({ length: count }, (_, index) => ({ index, object: 'embedding', embedding: small(index) })),
        usage: { prompt_tokens: count, total_tokens: count },
      },
      null,
      2,
    ).replace('"usage"', '"\\u0075sage"');
    const pieces = upstreamAnswer.match(/[^]{1,37}/g) ?? [];
    scripts.push({ pieces });
    const response = await fetch(`${server.url}/api/v1/embeddings`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${account.secret}`,
        'content-type': 'application/json',
        'accept-encoding': 'identity',
      },
      body: JSON.stringify({
        model: 'stream-embedding',
        input: Array.from({ length: count }, (_, index) => `text ${index}`),
        encoding_format: 'base64',
      }),
    });
    const text = await response.text();
    const items = Array.from({ length: count }, (_, index) => ({
      object: 'embedding',
      embedding: small(index),
      index,
    }));
    expect(text).toBe(
      JSON.stringify({
        object: 'list',
        data: items,
        model: 'stream-embedding',
        usage: { prompt_tokens: count, total_tokens: count },
      }),
    );
  });

  it('should cut the connection when the upstream breaks off after the first vectors, and charge nothing', async () => {
    const before = await account.balance();
    const script = {
      pieces: [`{"object":"list","data":[${item(0)},${item(1).slice(0, 40)}`, ''],
      hold: true,
      cut: true,
    };
    await streamed(script, async (response) => {
      expect(response.statusCode).toBe(200);
      const chunks = response.body[Symbol.asyncIterator]();
      await chunks.next();
      release();
      // The answer never ends as JSON would: the connection is cut.
      await expect(
        (async () => {
          for (let next = await chunks.next(); !next.done; next = await chunks.next());
        })(),
      ).rejects.toThrow();
    });
    await settledBalance(before.amount);
  });

  it('should stop reading the upstream and charge nothing when the client goes away', async () => {
    const before = await account.balance();
    await streamed(
      { pieces: [`{"object":"list","data":[${item(0)},`, `${item(1)}]}`], hold: true },
      async (response) => {
        await response.body[Symbol.asyncIterator]().next();
        response.body.destroy();
        // Lagoon lets go of the upstream's answer, and of the hold, before the upstream has finished.
        await upstreamClosed;
        await settledBalance(before.amount);
      },
    );
  });

  it('should let go of the upstream and the hold when a client that asked for compression goes away', async () => {
    const before = await account.balance();
    const started = new Promise<void>((resolve) => (answering = resolve));
    scripts.push({ pieces: [`{"object":"list","data":[${item(0)},`, `${item(1)}]}`], hold: true });
    const controller = new AbortController();
    const response = fetch(`${server.url}/api/v1/embeddings`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${account.secret}`,
        'content-type': 'application/json',
        'accept-encoding': 'br',
      },
      body: JSON.stringify({ model: 'stream-embedding', input: ['a', 'b'], encoding_format: 'base64' }),
      signal: controller.signal,
    });
    await started;
    controller.abort();
    await expect(response).rejects.toThrow();
    await upstreamClosed;
    await settledBalance(before.amount);
    release();
  });

  it('should answer 502 when an answer fails before its first vector, after trying the next provider', async () => {
    const before = await account.balance();
    scripts.push({ pieces: ['{"error":{"message":"out of memory"}}'] });
    const failed = await fetch(`${server.url}/api/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'stream-embedding', input: 'a' }),
    });
    expect(failed.status).toBe(502);
    expect(await failed.json()).toMatchObject({ code: 'UPSTREAM_ERROR' });
    await settledBalance(before.amount);

    const calls = brokenCalls;
    scripts.push({ pieces: [`{"data":[${item(0)}],"usage":{"prompt_tokens":1}}`] });
    const answer = await account.client.embeddings.create({ model: 'fallback-embedding', input: 'a' });
    expect(brokenCalls).toBe(calls + 1);
    expect(answer.data).toHaveLength(1);
    expect(answer.model).toBe('fallback-embedding');
  });

  it('should answer a wallet caller whole, with its credit left in X-Balance-Remaining', async () => {
    const wallet = newWallet();
    await creditWallet(server.t.app, wallet.address, '1');
    scripts.push({ pieces: [`{"data":[${item(0)}],"usage":{"prompt_tokens":4}}`] });
    const response = await fetch(`${server.url}/api/v1/embeddings`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'SIGN-IN-WITH-X': await signInHeader(wallet, { domain: new URL(server.url).host }),
      },
      body: JSON.stringify({ model: 'stream-embedding', input: 'a' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-balance-remaining')).toMatch(/^\d\.\d{6}$/);
    expect(response.headers.get('content-length')).not.toBeNull();
    expect(((await response.json()) as { usage: unknown }).usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
  });
});
