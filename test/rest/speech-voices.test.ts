import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeAudio, toneSample } from '../helpers/audio.ts';
import { chatAccount } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { startSpeechServer, type SpeechServer } from '../helpers/speech.ts';

/*
 * POST /api/v1/audio/voices (voice cloning): a WAV or MP3 reference sample becomes a `vv_<id>` handle that only its
 * account may use, and only with the model it was made for; samples are measured by decoding, sizes capped (413);
 * the clone is charged its price. The eSpeak NG engine matches the sample's pitch (the unit test in
 * test/unit/speech-pitch.test.ts checks the estimate itself).
 */

interface ErrorBody {
  error: string;
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}
interface CloneBody {
  id: string;
  model: string;
}
interface ListedVoice {
  id: string;
  object: 'voice';
  model: string;
  type: 'builtin' | 'cloned';
  default?: boolean;
  sample_seconds?: number;
  created_at?: number;
  expires_at?: number;
}

describe(`REST POST /api/v1/audio/voices (${testDatabaseKind})`, () => {
  let server: SpeechServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  let sample: Buffer;

  const clone = (file: Uint8Array, fields: Record<string, string> = {}, secret = account.secret) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob([new Uint8Array(file)]), 'sample.wav');
    return fetch(`${server.url}/api/v1/audio/voices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}` },
      body: form,
    });
  };
  const speak = (body: Record<string, unknown>, secret = account.secret) =>
    fetch(`${server.url}/api/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const expectFieldError = async (response: Response, status: number, field?: string) => {
    expect(response.status).toBe(status);
    const error = (await response.json()) as ErrorBody;
    if (field) expect(error.issues?.map((issue) => issue.path[0])).toContain(field);
    return error;
  };

  beforeAll(async () => {
    server = await startSpeechServer();
    account = await chatAccount(server, '5');
    sample = await toneSample(6, 220, 'wav');
  }, 120_000);
  afterAll(async () => server?.close());

  it('should clone a voice from a WAV sample, charge its price, and speak with it', async () => {
    const before = await account.balance();
    const response = await clone(sample, { model: 'lagoon-sim-speech' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as CloneBody;
    // Exactly the two fields of the public schema: clients read the handle from `id`.
    expect(Object.keys(body).sort()).toEqual(['id', 'model']);
    expect(body.id).toMatch(/^vv_[0-9a-f]{24}$/);
    expect(body.model).toBe('lagoon-sim-speech');
    const cost = 50_000_000n; // 0.05 USD
    await eventually(async () => expect((await account.balance()).amount).toBe(before.amount - cost));
    const [entry] = await account.entries(response.headers.get('x-request-id')!);
    expect(entry).toMatchObject({ sku: 'lagoon-sim-speech-tts-voice-clone', amount: -0.05, currency: 'USD' });

    const spoken = await speak({ model: 'lagoon-sim-speech', voice: body.id, input: 'Hello in my own voice.' });
    expect(spoken.status).toBe(200);
    expect((await probeAudio(new Uint8Array(await spoken.arrayBuffer()))).codec).toBe('mp3');
  }, 60_000);

  it('should accept an MP3 sample and the default model', async () => {
    const response = await clone(await toneSample(8, 120, 'mp3'));
    expect(response.status).toBe(200);
    expect(((await response.json()) as CloneBody).model).toBe('lagoon-sim-speech');
  }, 60_000);

  it('should refuse the handle with another model and from another account (400)', async () => {
    const made = (await (await clone(sample, { model: 'gated-speech' })).json()) as CloneBody;
    expect(made.model).toBe('gated-speech');
    const otherModel = await speak({ model: 'lagoon-sim-speech', voice: made.id, input: 'Not with this model.' });
    const error = await expectFieldError(otherModel, 400, 'voice');
    expect(error.error).toContain('gated-speech');
    const stranger = await chatAccount(server, '1');
    await expectFieldError(
      await speak({ model: 'gated-speech', voice: made.id, input: 'Hi.' }, stranger.secret),
      400,
      'voice',
    );
    // Its owner may use it with its model.
    expect((await speak({ model: 'gated-speech', voice: made.id, input: 'Hi.' })).status).toBe(200);
  }, 60_000);

  it("should sweep expired voices of every account, not only on the owner's next clone", async () => {
    const expiring = (await (await clone(sample, { model: 'lagoon-sim-speech' })).json()) as CloneBody;
    const stranger = await chatAccount(server, '1');
    const kept = (await (await clone(sample, { model: 'lagoon-sim-speech' }, stranger.secret)).json()) as CloneBody;
    const { db } = server.t.app.database;
    await db
      .updateTable('voices')
      .set({ expires_at: new Date(Date.now() - 1_000) })
      .where('id', '=', expiring.id)
      .execute();
    expect(await server.t.app.services.speech.sweepExpiredVoices()).toBeGreaterThanOrEqual(1);
    const left = await db.selectFrom('voices').select('id').where('id', 'in', [expiring.id, kept.id]).execute();
    expect(left.map((row) => row.id)).toEqual([kept.id]);
    await expectFieldError(
      await speak({ model: 'lagoon-sim-speech', voice: expiring.id, input: 'Gone.' }),
      400,
      'voice',
    );
  }, 60_000);

  it("should list the built-in voices and the caller's own cloned voices, never another account's", async () => {
    const owner = await chatAccount(server, '1');
    const stranger = await chatAccount(server, '1');
    const mine = (await (await clone(sample, { model: 'gated-speech' }, owner.secret)).json()) as CloneBody;
    const theirs = (await (await clone(sample, { model: 'gated-speech' }, stranger.secret)).json()) as CloneBody;
    const list = async (query = '', secret = owner.secret) => {
      const response = await fetch(`${server.url}/api/v1/audio/voices${query}`, {
        headers: { authorization: `Bearer ${secret}` },
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { object: string; data: ListedVoice[] };
      expect(body.object).toBe('list');
      return body.data;
    };

    const all = await list();
    expect(all).toContainEqual({
      id: 'am_adam',
      object: 'voice',
      model: 'gated-speech',
      type: 'builtin',
      default: true,
    });
    expect(all).toContainEqual({
      id: 'af_sky',
      object: 'voice',
      model: 'gated-speech',
      type: 'builtin',
      default: false,
    });
    expect(all).toContainEqual(expect.objectContaining({ id: 'af_bella', model: 'kokoro-speech', type: 'builtin' }));
    expect(all.filter((voice) => voice.type === 'cloned')).toEqual([
      {
        id: mine.id,
        object: 'voice',
        model: 'gated-speech',
        type: 'cloned',
        sample_seconds: expect.closeTo(6, 0) as number,
        created_at: expect.any(Number) as number,
        expires_at: expect.any(Number) as number,
      },
    ]);
    const listed = all.find((voice) => voice.id === mine.id)!;
    // 7 days of retention (gated-speech's voice_cloning.retention_days).
    expect(listed.expires_at! - listed.created_at!).toBe(7 * 86_400);
    expect(all.map((voice) => voice.id)).not.toContain(theirs.id);
    expect((await list('', stranger.secret)).map((voice) => voice.id)).not.toContain(mine.id);

    const gated = await list('?model=gated-speech');
    expect(new Set(gated.map((voice) => voice.model))).toEqual(new Set(['gated-speech']));
    expect(gated.map((voice) => voice.id)).toEqual(['af_sky', 'am_adam', mine.id]);
    const kokoro = await list('?model=kokoro-speech');
    expect(kokoro.map((voice) => `${voice.type}:${voice.id}`)).toEqual(['builtin:af_sky', 'builtin:af_bella']);
  }, 60_000);

  it('should answer GET /audio/voices with 400 for an unknown model and as the other audio routes without a key', async () => {
    const get = (query: string, headers: Record<string, string>) =>
      fetch(`${server.url}/api/v1/audio/voices${query}`, { headers });
    const unknown = await get('?model=no-such-model', { authorization: `Bearer ${account.secret}` });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as ErrorBody).code).toBe('INVALID_MODEL');
    const badKey = await get('', { authorization: 'Bearer not-a-key' });
    expect(badKey.status).toBe(401);
    expect(((await badKey.json()) as ErrorBody).code).toBe('AUTHENTICATION_FAILED');
    // No credentials at all: the x402 discovery answer, as POST /audio/speech gives.
    const anonymous = await get('', {});
    const speechAnonymous = await fetch(`${server.url}/api/v1/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'Hi.' }),
    });
    expect(anonymous.status).toBe(speechAnonymous.status);
    expect(anonymous.status).toBe(402);
  });

  it('should refuse a model whose engine cannot clone (400)', async () => {
    await expectFieldError(await clone(sample, { model: 'kokoro-speech' }), 400, 'model');
  });

  it('should refuse a sample that is too short, too long, not audio, or of a wrong model type (400)', async () => {
    const before = await account.balance();
    const short = await expectFieldError(await clone(await toneSample(2, 200, 'wav')), 400, 'file');
    expect(short.error).toMatch(/at least 5 s/);
    await expectFieldError(await clone(await toneSample(61.5, 200, 'mp3')), 400, 'file');
    await expectFieldError(await clone(Buffer.from('RIFF\0\0\0\0WAVEnot really audio')), 400, 'file');
    await expectFieldError(await clone(Buffer.from('just some text, not a sample')), 400, 'file');
    const chat = await clone(sample, { model: 'lagoon-sim-chat' });
    expect(chat.status).toBe(400);
    expect(((await chat.json()) as ErrorBody).code).toBe('INVALID_MODEL');
    expect((await account.balance()).amount).toBe(before.amount);
  }, 60_000);

  it('should refuse a 16 MB sample with 413', async () => {
    const big = new Uint8Array(16 * 1024 * 1024);
    big.set(sample.subarray(0, 44));
    const response = await clone(big);
    expect(response.status).toBe(413);
    expect(((await response.json()) as ErrorBody).code).toBe('PAYLOAD_TOO_LARGE');
  }, 60_000);

  it('should answer 401 without a key and 415 without multipart', async () => {
    expect((await clone(sample, {}, 'not-a-key')).status).toBe(401);
    const json = await fetch(`${server.url}/api/v1/audio/voices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(json.status).toBe(415);
  });
});
