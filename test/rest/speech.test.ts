import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeAudio } from '../helpers/audio.ts';
import { chatAccount } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { FAKE_AUDIO, startSpeechServer, type SpeechServer } from '../helpers/speech.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * POST /api/v1/audio/speech over a real port: the official `openai` client against the built-in eSpeak NG engine
 * (every format decoded by ffprobe), streaming proved with a gate on the engine's sentences (no timing), every
 * bad field, billing (charge = usage entry = balance change; a failure or a client that leaves pays nothing) and
 * an OpenAI-compatible upstream passed through.
 */

// eSpeak NG at speed 1 speaks about 16 characters a second of ordinary English (measured on this text).
const SECONDS_PER_CHAR = 0.062;
const TEXT =
  'Lagoon speaks with a formant synthesizer that runs inside the server. ' +
  'Each sentence is encoded as soon as it is ready, and the audio leaves at once.';
// lagoon-sim-speech: 3.5 USD per 1M characters, in nano-USD per character.
const SIM_NANO_PER_CHAR = 3_500n;

const FORMATS = [
  { format: 'mp3', codec: 'mp3', type: 'audio/mpeg' },
  { format: 'opus', codec: 'opus', type: 'audio/ogg' },
  { format: 'aac', codec: 'aac', type: 'audio/aac' },
  { format: 'flac', codec: 'flac', type: 'audio/flac' },
  { format: 'wav', codec: 'pcm_s16le', type: 'audio/wav' },
  { format: 'pcm', codec: 'pcm_s16le', type: 'audio/pcm' },
] as const;

interface ErrorBody {
  error: string;
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}

describe(`REST POST /api/v1/audio/speech (${testDatabaseKind})`, () => {
  let server: SpeechServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  const post = (body: unknown, secret = account.secret, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/api/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    server = await startSpeechServer();
    account = await chatAccount(server, '5');
  }, scaled(120_000));
  afterAll(async () => server?.close());

  it.each(FORMATS)(
    'should speak $format through the openai client (tts-1), decodable and as long as the text',
    async ({ format, codec, type }) => {
      const response = await account.client.audio.speech.create({
        model: 'tts-1',
        input: TEXT,
        voice: 'bf_emma' as 'alloy',
        response_format: format,
      });
      expect(response.headers.get('content-type')).toBe(type);
      const probed = await probeAudio(
        new Uint8Array(await response.arrayBuffer()),
        format === 'pcm' ? 'pcm' : undefined,
      );
      expect(probed.codec).toBe(codec);
      const expected = TEXT.length * SECONDS_PER_CHAR;
      expect(probed.duration).toBeGreaterThan(expected * 0.8);
      expect(probed.duration).toBeLessThan(expected * 1.2);
    },
    60_000,
  );

  it(
    'should take OpenAI voice names on the built-in model, each its own voice',
    async () => {
      const speak = async (voice: 'alloy' | 'onyx') => {
        const response = await account.client.audio.speech.create({
          model: 'tts-1',
          input: TEXT,
          voice,
          response_format: 'wav',
        });
        return new Uint8Array(await response.arrayBuffer());
      };
      const [alloy, onyx] = [await speak('alloy'), await speak('onyx')];
      expect((await probeAudio(alloy)).duration).toBeGreaterThan(TEXT.length * SECONDS_PER_CHAR * 0.5);
      expect(Buffer.from(alloy).equals(Buffer.from(onyx))).toBe(false);
    },
    scaled(60_000),
  );

  it(
    'should make speech twice as fast at speed 2',
    async () => {
      const response = await account.client.audio.speech.create({
        model: 'lagoon-sim-speech',
        input: TEXT,
        voice: 'am_michael' as 'alloy',
        response_format: 'wav',
        speed: 2,
      });
      const probed = await probeAudio(new Uint8Array(await response.arrayBuffer()));
      const expected = (TEXT.length * SECONDS_PER_CHAR) / 2;
      expect(probed.duration).toBeGreaterThan(expected * 0.8);
      expect(probed.duration).toBeLessThan(expected * 1.2);
    },
    scaled(60_000),
  );

  it(
    'should charge the characters: the usage entry equals the balance change',
    async () => {
      const before = await account.balance();
      const response = await post({ input: TEXT, voice: 'af_bella', response_format: 'flac', language: 'en' });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      const requestId = response.headers.get('x-request-id')!;
      const cost = BigInt(TEXT.length) * SIM_NANO_PER_CHAR;
      await eventually(async () => expect((await account.balance()).amount).toBe(before.amount - cost));
      expect(response.headers.get('x-balance-usd')).toBeTruthy();
      const [entry, ...others] = await account.entries(requestId);
      expect(others).toEqual([]);
      expect(entry).toMatchObject({
        sku: 'lagoon-sim-speech-tts-input-mchars',
        units: TEXT.length,
        currency: 'USD',
        amount: -Number(cost) / 1e9,
      });
    },
    scaled(60_000),
  );

  it('should show speech in the usage analytics as a TTS model counted in chars', async () => {
    const entries = (await account.allEntries()).filter((entry) => entry.sku === 'lagoon-sim-speech-tts-input-mchars');
    expect(entries.length).toBeGreaterThan(0);
    const response = await fetch(`${server.url}/api/v1/billing/usage-analytics?lookback=1d`, {
      headers: { authorization: `Bearer ${account.adminSecret}` },
    });
    expect(response.status).toBe(200);
    const analytics = (await response.json()) as {
      byModel: { modelName: string; modelType: string; unitType: string; totalUnits: number; totalUsd: number }[];
    };
    const speech = analytics.byModel.find((model) => model.modelName === 'lagoon-sim-speech');
    expect(speech).toMatchObject({
      modelType: 'TTS',
      unitType: 'chars',
      totalUnits: entries.reduce((sum, entry) => sum + entry.units, 0),
    });
    expect(speech!.totalUsd).toBeCloseTo(-entries.reduce((sum, entry) => sum + entry.amount, 0), 9);
  });

  it(
    'should stream: the first audio arrives while the last sentence is still held back',
    async () => {
      const gate = server.gate();
      gate.open(1); // sentences 0 and 1 may run; 2 waits until the test has audio in hand
      try {
        const before = await account.balance();
        const input = 'The first sentence is here. The second one follows. The third is held back!';
        const response = await post({ model: 'gated-speech', input, streaming: true }, account.secret, {
          'accept-encoding': 'gzip, br',
        });
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('audio/mpeg');
        expect(response.headers.get('content-encoding')).toBeNull();
        expect(response.headers.get('content-length')).toBeNull();
        const reader = response.body!.getReader();
        const first = await reader.read();
        expect(first.done).toBe(false);
        expect(gate.passed).not.toContain(2);
        gate.open(2);
        const parts = [first.value!];
        for (let next = await reader.read(); !next.done; next = await reader.read()) parts.push(next.value);
        expect(gate.passed).toEqual([0, 1, 2]);
        const probed = await probeAudio(Buffer.concat(parts));
        expect(probed.codec).toBe('mp3');
        expect(probed.duration).toBeGreaterThan(input.length * SECONDS_PER_CHAR * 0.7);
        // gated-speech: 10 USD per 1M characters; settled when the stream ended.
        const cost = BigInt(input.length) * 10_000n;
        await eventually(async () => expect((await account.balance()).amount).toBe(before.amount - cost));
      } finally {
        server.gate().openAll();
      }
    },
    scaled(60_000),
  );

  it(
    'should not charge a client that leaves a stream before its end',
    async () => {
      const gate = server.gate();
      gate.open(0);
      try {
        const before = await account.balance();
        const controller = new AbortController();
        const response = await fetch(`${server.url}/api/v1/audio/speech`, {
          method: 'POST',
          headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gated-speech', input: 'One sentence. Then another one.', streaming: true }),
          signal: controller.signal,
        });
        const reader = response.body!.getReader();
        expect((await reader.read()).done).toBe(false);
        controller.abort();
        gate.openAll();
        await eventually(async () => {
          const now = await account.balance();
          expect(now.amount).toBe(before.amount);
          expect(now.reserved).toBe(0n);
        }, scaled(20_000));
      } finally {
        server.gate().openAll();
      }
    },
    scaled(60_000),
  );

  it.each([
    [{}, 'input'],
    [{ input: '' }, 'input'],
    [{ input: 'x'.repeat(4097) }, 'input'],
    [{ input: 'hi', voice: 'no_such_voice' }, 'voice'],
    [{ input: 'hi', voice: 'vv_0123456789abcdef01234567' }, 'voice'],
    [{ input: 'hi', language: 'x' }, 'language'],
    [{ input: 'hi', language: 'x'.repeat(33) }, 'language'],
    [{ input: 'hi', prompt: 42 }, 'prompt'],
    [{ input: 'hi', model: 'kokoro-speech', prompt: 'x'.repeat(501) }, 'prompt'],
    [{ input: 'hi', response_format: 'ogg' }, 'response_format'],
    [{ input: 'hi', model: 'kokoro-speech', response_format: 'flac' }, 'response_format'],
    [{ input: 'hi', speed: 0.2 }, 'speed'],
    [{ input: 'hi', speed: 4.5 }, 'speed'],
    [{ input: 'hi', streaming: 'yes' }, 'streaming'],
    [{ input: 'hi', temperature: 3 }, 'temperature'],
    [{ input: 'hi', temperature: -0.1 }, 'temperature'],
    [{ input: 'hi', temperature: '0.8' }, 'temperature'],
    [{ input: 'hi', top_p: 2 }, 'top_p'],
  ])('should answer 400 naming the field for %j', async (body, field) => {
    const before = await account.balance();
    const response = await post(body);
    expect(response.status).toBe(400);
    const error = (await response.json()) as ErrorBody;
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.issues?.map((issue) => issue.path[0])).toContain(field);
    expect((await account.balance()).amount).toBe(before.amount);
  });

  it.each(['no-such-model', 'lagoon-sim-chat'])('should answer 400 INVALID_MODEL for model %s', async (model) => {
    const response = await post({ input: 'hi', model });
    expect(response.status).toBe(400);
    const error = (await response.json()) as ErrorBody;
    expect(error.code).toBe('INVALID_MODEL');
    expect(error.error).toContain(model);
  });

  it('should answer 402 without funds and 401 without a key', async () => {
    const broke = await chatAccount(server, '0');
    expect((await post({ input: TEXT }, broke.secret)).status).toBe(402);
    expect((await post({ input: TEXT }, 'not-a-key')).status).toBe(401);
  });

  describe('with an OpenAI-compatible upstream', () => {
    it('should pass the request and the audio through, streaming too', async () => {
      for (const streaming of [false, true]) {
        server.upstream.requests.length = 0;
        const response = await post({
          model: 'kokoro-speech',
          input: 'Hello from upstream.',
          voice: 'af_bella',
          speed: 1.5,
          prompt: 'calm',
          response_format: 'wav',
          streaming,
        });
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('audio/wav');
        expect(await response.text()).toBe(FAKE_AUDIO.join(''));
        expect(server.upstream.requests).toEqual([
          {
            model: 'kokoro',
            input: 'Hello from upstream.',
            voice: 'af_bella',
            speed: 1.5,
            response_format: 'wav',
            instructions: 'calm',
            ...(streaming && { stream: true }),
          },
        ]);
      }
    });

    it('should pass prompt and temperature to a model that takes them and drop them for one that does not', async () => {
      const options = { prompt: 'cheerful', temperature: 0.8, top_p: 0.5 };
      // The built-in model has none of the flags: `venice tts --temperature 0.8` still speaks.
      const builtIn = await post({ input: 'Hello.', ...options });
      expect(builtIn.status).toBe(200);
      expect(builtIn.headers.get('content-type')).toBe('audio/mpeg');
      server.upstream.requests.length = 0;
      for (const model of ['kokoro-speech', 'fallback-speech']) {
        const response = await post({ model, input: 'Hello.', ...options });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      }
      const [takes, lacks] = server.upstream.requests;
      // kokoro-speech has supportsPromptParam and supportsTemperatureParam, not supportsTopPParam.
      expect(takes).toMatchObject({ model: 'kokoro', instructions: 'cheerful', temperature: 0.8 });
      expect(takes).not.toHaveProperty('top_p');
      for (const field of ['instructions', 'temperature', 'top_p']) expect(lacks).not.toHaveProperty(field);
    });

    it('should answer 5xx and charge nothing when the upstream fails', async () => {
      server.upstream.mode = 'fail';
      try {
        const before = await account.balance();
        const response = await post({ model: 'kokoro-speech', input: 'This will fail.' });
        expect(response.status).toBeGreaterThanOrEqual(500);
        expect(((await response.json()) as ErrorBody).code).toBe('UPSTREAM_ERROR');
        const after = await account.balance();
        expect(after.amount).toBe(before.amount);
        expect(after.reserved).toBe(0n);
      } finally {
        server.upstream.mode = 'ok';
      }
    });

    it(
      'should answer 504 and charge nothing when the upstream never answers',
      async () => {
        server.upstream.mode = 'hang';
        try {
          const before = await account.balance();
          const response = await post({ model: 'kokoro-speech', input: 'Anyone there?' });
          expect(response.status).toBe(504);
          expect(((await response.json()) as ErrorBody).code).toBe('REQUEST_TIMEOUT');
          const after = await account.balance();
          expect(after.amount).toBe(before.amount);
          expect(after.reserved).toBe(0n);
        } finally {
          server.upstream.mode = 'ok';
        }
      },
      scaled(30_000),
    );

    it(
      'should not charge an upstream that breaks off, and cut a stream it broke',
      async () => {
        server.upstream.mode = 'break';
        try {
          const before = await account.balance();
          const whole = await post({ model: 'kokoro-speech', input: 'Broken whole.' });
          expect(whole.status).toBe(502);
          const streamed = await post({ model: 'kokoro-speech', input: 'Broken stream.', streaming: true });
          expect(streamed.status).toBe(200);
          // The body does not end cleanly: a client cannot mistake the piece it got for the whole audio.
          await expect(streamed.arrayBuffer()).rejects.toThrow();
          await eventually(async () => {
            const after = await account.balance();
            expect(after.amount).toBe(before.amount);
            expect(after.reserved).toBe(0n);
          });
        } finally {
          server.upstream.mode = 'ok';
        }
      },
      scaled(30_000),
    );

    // Last: it leaves the upstream cooling down.
    it(
      'should fall back to the next engine, and stop trying an upstream that keeps failing',
      async () => {
        server.upstream.mode = 'fail';
        try {
          let reached = server.upstream.requests.length;
          let skipped = false;
          for (let call = 0; call < 4 && !skipped; call += 1) {
            const response = await post({ model: 'fallback-speech', input: 'Spoken by the fallback.' });
            expect(response.status).toBe(200);
            expect((await probeAudio(new Uint8Array(await response.arrayBuffer()))).codec).toBe('mp3');
            // Once the upstream cools down (3 failures in a row), calls go straight to the next engine.
            skipped = server.upstream.requests.length === reached;
            reached = server.upstream.requests.length;
          }
          expect(skipped).toBe(true);
        } finally {
          server.upstream.mode = 'ok';
        }
      },
      scaled(60_000),
    );
  });
});
