import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeAudio, toneSample } from '../helpers/audio.ts';
import { chatAccount } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { startSpeechServer, type SpeechServer } from '../helpers/speech.ts';
import { scaled } from '../helpers/time-scale.ts';

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
  voice: string;
  model: string;
  sample_seconds: number;
  expires_at: string;
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
  }, scaled(120_000));
  afterAll(async () => server?.close());

  it(
    'should clone a voice from a WAV sample, charge its price, and speak with it',
    async () => {
      const before = await account.balance();
      const response = await clone(sample, { model: 'lagoon-sim-speech' });
      expect(response.status).toBe(200);
      const body = (await response.json()) as CloneBody;
      expect(body.voice).toMatch(/^vv_[0-9a-f]{24}$/);
      expect(body.model).toBe('lagoon-sim-speech');
      expect(body.sample_seconds).toBeCloseTo(6, 0);
      // 30 days of retention (the model's voice_cloning.retention_days).
      expect(Date.parse(body.expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000);
      const cost = 50_000_000n; // 0.05 USD
      await eventually(async () => expect((await account.balance()).amount).toBe(before.amount - cost));
      const [entry] = await account.entries(response.headers.get('x-request-id')!);
      expect(entry).toMatchObject({ sku: 'lagoon-sim-speech-tts-voice-clone', amount: -0.05, currency: 'USD' });

      const spoken = await speak({ model: 'lagoon-sim-speech', voice: body.voice, input: 'Hello in my own voice.' });
      expect(spoken.status).toBe(200);
      expect((await probeAudio(new Uint8Array(await spoken.arrayBuffer()))).codec).toBe('mp3');
    },
    scaled(60_000),
  );

  it(
    'should accept an MP3 sample and the default model',
    async () => {
      const response = await clone(await toneSample(8, 120, 'mp3'));
      expect(response.status).toBe(200);
      expect(((await response.json()) as CloneBody).model).toBe('lagoon-sim-speech');
    },
    scaled(60_000),
  );

  it(
    'should refuse the handle with another model and from another account (400)',
    async () => {
      const made = (await (await clone(sample, { model: 'gated-speech' })).json()) as CloneBody;
      expect(made.model).toBe('gated-speech');
      const otherModel = await speak({ model: 'lagoon-sim-speech', voice: made.voice, input: 'Not with this model.' });
      const error = await expectFieldError(otherModel, 400, 'voice');
      expect(error.error).toContain('gated-speech');
      const stranger = await chatAccount(server, '1');
      await expectFieldError(
        await speak({ model: 'gated-speech', voice: made.voice, input: 'Hi.' }, stranger.secret),
        400,
        'voice',
      );
      // Its owner may use it with its model.
      expect((await speak({ model: 'gated-speech', voice: made.voice, input: 'Hi.' })).status).toBe(200);
    },
    scaled(60_000),
  );

  it(
    "should sweep expired voices of every account, not only on the owner's next clone",
    async () => {
      const expiring = (await (await clone(sample, { model: 'lagoon-sim-speech' })).json()) as CloneBody;
      const stranger = await chatAccount(server, '1');
      const kept = (await (await clone(sample, { model: 'lagoon-sim-speech' }, stranger.secret)).json()) as CloneBody;
      const { db } = server.t.app.database;
      await db
        .updateTable('voices')
        .set({ expires_at: new Date(Date.now() - 1_000) })
        .where('id', '=', expiring.voice)
        .execute();
      expect(await server.t.app.services.speech.sweepExpiredVoices()).toBeGreaterThanOrEqual(1);
      const left = await db.selectFrom('voices').select('id').where('id', 'in', [expiring.voice, kept.voice]).execute();
      expect(left.map((row) => row.id)).toEqual([kept.voice]);
      await expectFieldError(
        await speak({ model: 'lagoon-sim-speech', voice: expiring.voice, input: 'Gone.' }),
        400,
        'voice',
      );
    },
    scaled(60_000),
  );

  it('should refuse a model whose engine cannot clone (400)', async () => {
    await expectFieldError(await clone(sample, { model: 'kokoro-speech' }), 400, 'model');
  });

  it(
    'should refuse a sample that is too short, too long, not audio, or of a wrong model type (400)',
    async () => {
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
    },
    scaled(60_000),
  );

  it(
    'should refuse a 16 MB sample with 413',
    async () => {
      const big = new Uint8Array(16 * 1024 * 1024);
      big.set(sample.subarray(0, 44));
      const response = await clone(big);
      expect(response.status).toBe(413);
      expect(((await response.json()) as ErrorBody).code).toBe('PAYLOAD_TOO_LARGE');
    },
    scaled(60_000),
  );

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
