import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { toneSample } from '../helpers/audio.ts';
import { chatAccount, startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';

/*
 * The per-key limits on the routes beyond chat, image generation and speech (rate-limits.test.ts has those): each
 * is admitted by the same limiter before anything is held, so a 429 has chat's body and headers, is logged, and
 * costs nothing. Small fixed limits, one server for the file; nothing waits for a window to end.
 */

const countedIn = process.env.REDIS_URL ? 'Redis' : 'process memory';
// Two model tiers with different limits (the other tests set their key's own limits, which beat these).
const CONFIG = [
  'rateLimits:',
  '  tiers:',
  '    small: { models: [lagoon-sim-chat], rpm: 3, tpm: 500000 }',
  '    large: { models: [lagoon-sim-reasoner], rpm: 1, tpm: 20000 }',
].join('\n');

interface LogBody {
  data: { apiKeyId: string; modelId: string; rateLimitTier: string; rateLimitType: string }[];
}

describe(`REST rate limits on every paid route (${testDatabaseKind}, counters in ${countedIn})`, () => {
  let server: ChatServer;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lagoon-rate-limit-tiers-'));
    writeFileSync(join(dir, 'operator.yaml'), CONFIG);
    server = await startChatServer({
      LAGOON_CONFIG: join(dir, 'operator.yaml'),
      CORS_ORIGINS: 'https://app.example',
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A funded account whose key has `limits` (null: the operator's), and its requests. */
  async function limitedAccount(limits: Record<string, number> | null) {
    const account = await chatAccount(server);
    const auth = await server.t.app.services.auth.authenticate({ authorization: `Bearer ${account.secret}` }, 't');
    if (auth.kind !== 'apiKey') throw new Error('expected a key');
    if (limits) await server.t.app.services.apiKeys.setRateLimits(operator(), { id: auth.apiKey.id }, limits);
    const headers = { authorization: `Bearer ${account.secret}` };
    return {
      ...account,
      keyId: auth.apiKey.id,
      post: (path: string, body: unknown) =>
        fetch(`${server.url}/api/v1${path}`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', origin: 'https://app.example' },
          body: JSON.stringify(body),
        }),
      upload: (path: string, form: FormData) =>
        fetch(`${server.url}/api/v1${path}`, { method: 'POST', headers, body: form }),
      limits: async () => {
        const response = await fetch(`${server.url}/api/v1/api_keys/rate_limits`, { headers });
        const { data } = (await response.json()) as {
          data: { rateLimits: { apiModelId: string; rateLimits: { type: string; amount: number }[] }[] };
        };
        return new Map(data.rateLimits.map((model) => [model.apiModelId, model.rateLimits]));
      },
      log: async () =>
        ((await (await fetch(`${server.url}/api/v1/api_keys/rate_limits/log`, { headers })).json()) as LogBody).data,
    };
  }

  /** The contract's 429: chat's body and headers, for a limit of `limit` on `type`. */
  async function expectRefused(response: Response, type: 'RPM' | 'TPM', limit: number, modelId: string) {
    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({
      error: expect.stringContaining(`for model ${modelId}`),
      code: 'RATE_LIMIT_EXCEEDED',
    });
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(response.headers.get('x-ratelimit-limit')).toBe(String(limit));
    expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(response.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    const kind = type === 'RPM' ? 'requests' : 'tokens';
    expect(response.headers.get(`x-ratelimit-limit-${kind}`)).toBe(String(limit));
    expect(Number(response.headers.get(`x-ratelimit-reset-${kind}`))).toBeGreaterThan(Date.now());
  }

  it('limits embeddings by requests per minute: windows on each answer, then a logged, uncharged 429', async () => {
    const account = await limitedAccount({ rpm: 2 });
    const body = { model: 'lagoon-sim-embedding', input: ['a lagoon', 'a reef'] };
    const first = await account.post('/embeddings', body);
    const second = await account.post('/embeddings', body);
    for (const [response, left] of [
      [first, '1'],
      [second, '0'],
    ] as const) {
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      expect(response.headers.get('x-ratelimit-limit-requests')).toBe('2');
      expect(response.headers.get('x-ratelimit-remaining-requests')).toBe(left);
      expect(response.headers.get('x-ratelimit-limit-tokens')).not.toBeNull();
      // A browser page may read both windows.
      const exposed = response.headers.get('access-control-expose-headers')?.split(', ');
      expect(exposed).toEqual(
        expect.arrayContaining(['x-ratelimit-remaining-requests', 'x-ratelimit-remaining-tokens']),
      );
    }
    const before = await account.balance();
    await expectRefused(await account.post('/embeddings', body), 'RPM', 2, 'lagoon-sim-embedding');
    expect(await account.balance()).toEqual(before);
    expect(await account.log()).toEqual([
      expect.objectContaining({
        apiKeyId: account.keyId,
        modelId: 'lagoon-sim-embedding',
        rateLimitTier: 'paid',
        rateLimitType: 'RPM',
      }),
    ]);
  });

  it('counts embedding input tokens against tokens per minute', async () => {
    const account = await limitedAccount({ tpm: 60 });
    // About 25 tokens each: two fit in the minute's 60, the third does not.
    const body = { model: 'lagoon-sim-embedding', input: 'the quiet lagoon at dawn, '.repeat(4) };
    for (let i = 0; i < 2; i += 1) {
      const response = await account.post('/embeddings', body);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    await expectRefused(await account.post('/embeddings', body), 'TPM', 60, 'lagoon-sim-embedding');
    const long = { model: 'lagoon-sim-embedding', input: 'x'.repeat(1000) };
    const other = await limitedAccount({ tpm: 60 });
    await expectRefused(await other.post('/embeddings', long), 'TPM', 60, 'lagoon-sim-embedding');
    expect((await account.log()).map((entry) => entry.rateLimitType)).toEqual(['TPM']);
  });

  it('counts a queued job when it is queued; quotes are not counted', async () => {
    const account = await limitedAccount({ rpm: 1 });
    const job = { model: 'lagoon-sim-video', prompt: 'a lagoon at dawn', duration: '5s', resolution: '480p' };
    for (let i = 0; i < 3; i += 1) expect((await account.post('/video/quote', job)).status).toBe(200);
    const queued = await account.post('/video/queue', job);
    expect(queued.status).toBe(200);
    expect(await queued.json()).toMatchObject({ queue_id: expect.any(String) });
    expect(queued.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    const held = await account.balance();
    await expectRefused(await account.post('/video/queue', job), 'RPM', 1, 'lagoon-sim-video');
    // Only the first job holds funds: the refused one was never queued.
    expect(await account.balance()).toEqual(held);
    expect(await account.log()).toEqual([
      expect.objectContaining({ modelId: 'lagoon-sim-video', rateLimitType: 'RPM' }),
    ]);
  });

  it('limits transcription and the text parser the same way', async () => {
    const account = await limitedAccount({ rpm: 1 });
    const wav = new Uint8Array(await toneSample(1, 440, 'wav'));
    const audio = () => {
      const form = new FormData();
      form.append('model', 'lagoon-sim-transcribe');
      form.append('file', new Blob([wav], { type: 'audio/wav' }), 'tone.wav');
      return form;
    };
    const document = () => {
      const form = new FormData();
      form.append('file', new Blob([new TextEncoder().encode('A short note about lagoons.')]), 'note.txt');
      return form;
    };
    const calls: [string, () => Promise<Response>][] = [
      ['lagoon-sim-transcribe', () => account.upload('/audio/transcriptions', audio())],
      ['augment-text-parser', () => account.upload('/augment/text-parser', document())],
    ];
    for (const [modelId, call] of calls) {
      const first = await call();
      expect(first.status, modelId).toBe(200);
      await first.arrayBuffer();
      expect(first.headers.get('x-ratelimit-limit-requests')).toBe('1');
      await expectRefused(await call(), 'RPM', 1, modelId);
    }
    expect((await account.log()).map((entry) => entry.modelId)).toEqual([
      'augment-text-parser',
      'lagoon-sim-transcribe',
    ]);
  });

  it('lists the augment routes and background removal among the limits', async () => {
    const limits = await (await limitedAccount({ rpm: 7 })).limits();
    for (const id of ['augment-web-search', 'augment-web-scrape', 'augment-text-parser', 'background-remove'])
      expect(limits.get(id)).toEqual([
        { type: 'RPM', amount: 7 },
        { type: 'RPD', amount: expect.any(Number) },
      ]);
    expect(limits.has('lagoon-sim-embedding')).toBe(true);
  });

  it("shows and enforces each model tier's own limits; a key's own limits beat both", async () => {
    const account = await limitedAccount(null);
    const limits = await account.limits();
    const rpm = (id: string) => limits.get(id)?.find((limit) => limit.type === 'RPM')?.amount;
    const tpm = (id: string) => limits.get(id)?.find((limit) => limit.type === 'TPM')?.amount;
    expect([rpm('lagoon-sim-chat'), tpm('lagoon-sim-chat')]).toEqual([3, 500_000]);
    expect([rpm('lagoon-sim-reasoner'), tpm('lagoon-sim-reasoner')]).toEqual([1, 20_000]);
    const chat = (model: string) =>
      account.post('/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }] });
    for (const [model, allowed] of [
      ['lagoon-sim-chat', 3],
      ['lagoon-sim-reasoner', 1],
    ] as const) {
      for (let i = 0; i < allowed; i += 1) {
        const response = await chat(model);
        expect(response.status, model).toBe(200);
        expect(response.headers.get('x-ratelimit-limit-requests')).toBe(String(allowed));
        await response.arrayBuffer();
      }
      await expectRefused(await chat(model), 'RPM', allowed, model);
    }
    expect((await account.log()).map((entry) => [entry.modelId, entry.rateLimitTier])).toEqual([
      ['lagoon-sim-reasoner', 'paid'],
      ['lagoon-sim-chat', 'paid'],
    ]);
    const raised = await (await limitedAccount({ rpm: 5 })).limits();
    expect(raised.get('lagoon-sim-chat')?.[0]).toEqual({ type: 'RPM', amount: 5 });
    expect(raised.get('lagoon-sim-reasoner')?.[0]).toEqual({ type: 'RPM', amount: 5 });
    expect(raised.get('lagoon-sim-reasoner')?.[2]).toEqual({ type: 'TPM', amount: 20_000 });
  });
});
