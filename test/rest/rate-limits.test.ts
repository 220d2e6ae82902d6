import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { runCli } from '../../src/cli/program.ts';
import { chatAccount, startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';

const countedIn = process.env.REDIS_URL ? 'Redis' : 'process memory';
const MODEL = 'lagoon-sim-chat';
// The reasoner gets a low default from the operator file, so a key override can be shown to beat it.
const CONFIG = ['rateLimits:', '  models:', '    lagoon-sim-reasoner: { rpm: 2 }'].join('\n');

describe(`REST per-key rate limits (${testDatabaseKind}, counters in ${countedIn})`, () => {
  let server: ChatServer;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lagoon-rate-limits-'));
    writeFileSync(join(dir, 'operator.yaml'), CONFIG);
    server = await startChatServer({
      LAGOON_CONFIG: join(dir, 'operator.yaml'),
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    });
  });

  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const setLimits = (keyId: string, limits: Record<string, number> | null) =>
    server.t.app.services.apiKeys.setRateLimits(operator(), { id: keyId }, limits);
  const keyIdOf = async (secret: string) => {
    const auth = await server.t.app.services.auth.authenticate({ authorization: `Bearer ${secret}` }, 'test');
    if (auth.kind !== 'apiKey') throw new Error('expected a key');
    return auth.apiKey.id;
  };
  const ask = (client: OpenAI, model = MODEL, content = 'Hello there') =>
    client.chat.completions.create({ model, messages: [{ role: 'user', content }] }).withResponse();
  const get = (path: string, secret: string) =>
    fetch(`${server.url}/api/v1${path}`, { headers: { authorization: `Bearer ${secret}` } });

  it('admits exactly RPM calls of 20 concurrent ones; the rest get 429 with headers and are not charged', async () => {
    const account = await chatAccount(server);
    await setLimits(await keyIdOf(account.secret), { rpm: 5 });
    const before = await account.balance();
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => ask(account.client)));
    const admitted = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const refused = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
    expect(admitted).toHaveLength(5);
    expect(refused).toHaveLength(15);
    for (const error of refused) {
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      const { headers, error: body } = error as InstanceType<typeof OpenAI.RateLimitError>;
      expect(body).toMatch(/5 requests per minute for model lagoon-sim-chat/);
      expect(Number(headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(headers.get('x-ratelimit-limit')).toBe('5');
      expect(headers.get('x-ratelimit-remaining')).toBe('0');
      expect(Number(headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
      expect(headers.get('x-ratelimit-limit-requests')).toBe('5');
      expect(headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(Number(headers.get('x-ratelimit-reset-requests'))).toBeGreaterThan(Date.now());
    }
    // The contract's body, as a plain client sees it.
    const raw = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(raw.status).toBe(429);
    expect(await raw.json()).toEqual({
      error: expect.stringMatching(/^Rate limit exceeded/),
      code: 'RATE_LIMIT_EXCEEDED',
    });
    // Five usage entries, and the balance went down by exactly what they cost: the 429s took nothing.
    const entries = (await account.allEntries()).filter((entry) => entry.sku.includes('llm'));
    const requestIds = new Set(entries.map((entry) => entry.inferenceDetails?.requestId));
    expect(requestIds.size).toBe(5);
    const after = await account.balance();
    expect(after.reserved).toBe(0n);
    // Entries are debits (negative amounts), in USD with at most 9 decimals.
    const spent = entries.reduce((sum, entry) => sum - BigInt(Math.round(entry.amount * 1e9)), 0n);
    expect(before.amount - after.amount).toBe(spent);
  });

  it('sends the request window on successful answers, counting down', async () => {
    const account = await chatAccount(server);
    await setLimits(await keyIdOf(account.secret), { rpm: 10 });
    const first = await ask(account.client);
    const second = await ask(account.client);
    expect(first.response.headers.get('x-ratelimit-limit-requests')).toBe('10');
    expect(first.response.headers.get('x-ratelimit-remaining-requests')).toBe('9');
    expect(second.response.headers.get('x-ratelimit-remaining-requests')).toBe('8');
    expect(Number(first.response.headers.get('x-ratelimit-reset-requests'))).toBeGreaterThan(Date.now());
    expect(first.response.headers.get('x-ratelimit-limit-tokens')).not.toBeNull();
    // A stream carries them too.
    const stream = await account.client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true })
      .withResponse();
    expect(stream.response.headers.get('x-ratelimit-remaining-requests')).toBe('7');
    for await (const chunk of stream.data) void chunk;
  });

  it('refuses a call whose prompt would pass the tokens-per-minute limit, and counts completions', async () => {
    const account = await chatAccount(server);
    await setLimits(await keyIdOf(account.secret), { tpm: 400 });
    const long = 'lorem ipsum dolor sit amet '.repeat(200);
    const error = await ask(account.client, MODEL, long).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).error).toMatch(/400 tokens per minute/);
    // Short calls fit until their prompts and completions fill the minute's 400 tokens.
    let served = 0;
    let refusal: unknown;
    for (let i = 0; i < 100 && refusal === undefined; i += 1) {
      await ask(account.client).then(
        () => (served += 1),
        (reason: unknown) => (refusal = reason),
      );
    }
    expect(served).toBeGreaterThan(0);
    expect(refusal).toBeInstanceOf(OpenAI.RateLimitError);
    const log = (await (await get('/api_keys/rate_limits/log', account.secret)).json()) as {
      data: { rateLimitType: string }[];
    };
    expect(log.data.map((entry) => entry.rateLimitType)).toEqual(['TPM', 'TPM']);
  });

  it("lets a key's own limits beat the operator file's", async () => {
    const plain = await chatAccount(server);
    await ask(plain.client, 'lagoon-sim-reasoner');
    await ask(plain.client, 'lagoon-sim-reasoner');
    await expect(ask(plain.client, 'lagoon-sim-reasoner')).rejects.toBeInstanceOf(OpenAI.RateLimitError);

    const raised = await chatAccount(server);
    const keyId = await keyIdOf(raised.secret);
    await setLimits(keyId, { rpm: 3 });
    for (let i = 0; i < 3; i += 1) await ask(raised.client, 'lagoon-sim-reasoner');
    await expect(ask(raised.client, 'lagoon-sim-reasoner')).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    // Cleared: the operator's 2 apply again, and this minute already holds 3 calls.
    await setLimits(keyId, null);
    const status = (await (await get('/api_keys/rate_limits', raised.secret)).json()) as {
      data: { rateLimits: { apiModelId: string; rateLimits: { type: string; amount: number }[] }[] };
    };
    const reasoner = status.data.rateLimits.find((model) => model.apiModelId === 'lagoon-sim-reasoner');
    expect(reasoner?.rateLimits.find((limit) => limit.type === 'RPM')?.amount).toBe(2);
  });

  it('lists the account’s breaches, newest first, in the closed shape of the log route', async () => {
    const account = await chatAccount(server);
    const keyId = await keyIdOf(account.secret);
    await setLimits(keyId, { rpm: 1 });
    await ask(account.client);
    await expect(ask(account.client)).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    await expect(ask(account.client, 'lagoon-sim-reasoner')).resolves.toBeDefined();
    await expect(ask(account.client, 'lagoon-sim-reasoner')).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    // Any key of the account reads the whole account's log, the ADMIN key too.
    const response = await get('/api_keys/rate_limits/log', account.adminSecret);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { object: string; data: Record<string, unknown>[] };
    expect(body.object).toBe('list');
    expect(body.data).toHaveLength(2);
    expect(body.data.map((entry) => entry.modelId)).toEqual(['lagoon-sim-reasoner', MODEL]);
    for (const entry of body.data) {
      expect(Object.keys(entry).sort()).toEqual(['apiKeyId', 'modelId', 'rateLimitTier', 'rateLimitType', 'timestamp']);
      expect(entry).toMatchObject({ apiKeyId: keyId, rateLimitTier: 'paid', rateLimitType: 'RPM' });
      expect(Date.parse(entry.timestamp as string)).toBeGreaterThan(Date.now() - 60_000);
    }
    // Another account sees none of them.
    const other = await chatAccount(server);
    const theirs = (await (await get('/api_keys/rate_limits/log', other.secret)).json()) as { data: unknown[] };
    expect(theirs.data).toEqual([]);
  });

  it('serves GET /api_keys/rate_limits to any key, not as an API key id', async () => {
    const account = await chatAccount(server, '7.5');
    await setLimits(await keyIdOf(account.secret), { rpm: 42, tpm: 9000 });
    const response = await get('/api_keys/rate_limits', account.secret);
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as {
      data: {
        accessPermitted: boolean;
        apiTier: unknown;
        balances: unknown;
        keyExpiration: unknown;
        nextEpochBegins: string;
        rateLimits: { apiModelId: string; rateLimits: { type: string; amount: number }[] }[];
      };
    };
    expect(data).toMatchObject({
      accessPermitted: true,
      apiTier: { id: 'paid', isCharged: true },
      balances: { USD: 7.5, DIEM: 0 },
      keyExpiration: null,
    });
    const nextEpoch = new Date(data.nextEpochBegins);
    expect(nextEpoch.getTime()).toBeGreaterThan(Date.now());
    expect(nextEpoch.toISOString()).toMatch(/T00:00:00\.000Z$/);
    const chat = data.rateLimits.find((model) => model.apiModelId === MODEL);
    expect(chat?.rateLimits).toEqual([
      { type: 'RPM', amount: 42 },
      { type: 'RPD', amount: expect.any(Number) },
      { type: 'TPM', amount: 9000 },
    ]);
    const image = data.rateLimits.find((model) => model.apiModelId === 'lagoon-sim-image');
    expect(image?.rateLimits.map((limit) => limit.type)).toEqual(['RPM', 'RPD']);
    // The literal path wins over /api_keys/:id, which still answers for ids.
    const keyId = await keyIdOf(account.adminSecret);
    const byId = await get(`/api_keys/${keyId}`, account.adminSecret);
    expect(byId.status).toBe(200);
    expect(((await byId.json()) as { data: { id: string } }).data.id).toBe(keyId);
    expect((await get('/api_keys/rate_limits', 'not-a-key')).status).toBe(401);
  });

  it('sets and clears a key’s limits with the operator CLI, picked up by the key cache at once', async () => {
    const account = await chatAccount(server);
    const cli = async (argv: string[]) => {
      let out = '';
      let err = '';
      const code = await runCli(argv, server.t.app.services, { out: (s) => (out += s), err: (s) => (err += s) });
      return { code, out, err };
    };
    await ask(account.client); // the key is in the cache now
    const set = await cli(['keys', 'rate-limits', '--key', account.secret, '--rpm', '1', '--json']);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.out)).toEqual({ id: await keyIdOf(account.secret), rateLimits: { rpm: 1 } });
    await expect(ask(account.client)).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    const cleared = await cli(['keys', 'rate-limits', '--id', await keyIdOf(account.secret), '--clear']);
    expect(cleared.code).toBe(0);
    expect(cleared.out).toMatch(/cleared/);
    await expect(ask(account.client)).resolves.toBeDefined();
    expect((await cli(['keys', 'rate-limits', '--key', account.secret, '--rpm', 'many'])).code).not.toBe(0);
    expect((await cli(['keys', 'rate-limits', '--key', account.secret])).err).toMatch(/at least one/);
    expect((await cli(['keys', 'rate-limits', '--key', 'unknown-secret', '--rpm', '3'])).err).toMatch(/No active/);
  });

  it('limits image generation and speech by the same per-key limits, and charges no 429', async () => {
    const account = await chatAccount(server);
    await setLimits(await keyIdOf(account.secret), { rpm: 1 });
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}/api/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const image = { model: 'lagoon-sim-image', prompt: 'a lagoon' };
    const speech = { model: 'lagoon-sim-speech', input: 'Hello there.' };
    for (const [path, body] of [
      ['/image/generate', image],
      ['/audio/speech', speech],
    ] as const) {
      const first = await post(path, body);
      expect(first.status).toBe(200);
      await first.arrayBuffer();
      const before = await account.balance();
      const second = await post(path, body);
      expect(second.status).toBe(429);
      expect(await second.json()).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
      expect(second.headers.get('x-ratelimit-limit-requests')).toBe('1');
      expect(await account.balance()).toEqual(before);
    }
  });
});
