import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeAudio, toneSample } from '../helpers/audio.ts';
import { chatAccount, startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  FAKE_TRANSCRIPT,
  startTranscriptionUpstream,
  type FakeTranscriptionUpstream,
} from '../helpers/transcription-upstream.ts';
import { scaled } from '../helpers/time-scale.ts';

const PER_SECOND_NANO = 100_000n; // lagoon-sim-transcribe: 0.0001 USD per audio second

describe(`REST POST /api/v1/audio/transcriptions with the openai client (${testDatabaseKind})`, () => {
  let upstream: FakeTranscriptionUpstream;
  let dir: string;
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  let speech: Buffer;
  const post = (fields: Record<string, string | Blob>, key = account.secret) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    return fetch(`${server.url}/api/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
  };
  const file = () => new Blob([new Uint8Array(speech)], { type: 'audio/mpeg' });

  beforeAll(async () => {
    upstream = await startTranscriptionUpstream();
    dir = await mkdtemp(join(tmpdir(), 'lagoon-transcription-'));
    const path = join(dir, 'operator.json');
    await writeFile(
      path,
      JSON.stringify({
        providers: [{ id: 'fake-whisper', type: 'openai-compatible', baseUrl: upstream.url, maxRetries: 0 }],
        models: [
          {
            id: 'test-whisper',
            type: 'asr',
            name: 'Upstream whisper',
            pricing: { per_audio_second: { usd: 0.001 } },
            providers: [{ id: 'fake-whisper', upstreamModel: 'Systran/faster-whisper-small' }],
          },
        ],
      }),
    );
    server = await startChatServer({ LAGOON_CONFIG: path });
    account = await chatAccount(server);
    // A file made by the speech route, as the acceptance asks.
    const spoken = await account.client.audio.speech.create({
      model: 'tts-1',
      voice: 'alloy',
      input: 'Hello from Lagoon. This sentence was spoken by the speech route.',
    });
    speech = Buffer.from(await spoken.arrayBuffer());
  }, scaled(60_000));
  afterAll(async () => {
    await server.close();
    await Promise.all([upstream.close(), rm(dir, { recursive: true, force: true })]);
  });

  it('should transcribe speech-route audio with no upstream: labelled simulated, its length, billed per second', async () => {
    const { duration } = await probeAudio(speech);
    const before = await account.balance();
    const answer = await account.client.audio.transcriptions.create({
      file: await toFile(speech, 'speech.mp3'),
      model: 'whisper-1',
    });
    expect(answer.text).toMatch(/^\[simulated transcript: .*does not recognise speech/);
    const body = answer as unknown as { duration: number; simulated: boolean; usage: { seconds: number } };
    expect(body.simulated).toBe(true);
    expect(Math.abs(body.duration - duration)).toBeLessThan(0.2);
    const billed = BigInt(Math.ceil(body.duration));
    expect(body.usage.seconds).toBe(Number(billed));
    await eventually(async () => {
      expect(before.amount - (await account.balance()).amount).toBe(billed * PER_SECOND_NANO);
    });
    const entries = (await account.allEntries()).filter(
      (entry) => entry.sku === 'lagoon-sim-transcribe-asr-audio-second',
    );
    expect(entries[0]).toMatchObject({ units: Number(billed) });
  });

  it('should find the voiced stretches as segments in verbose_json, srt and vtt', async () => {
    const verbose = await account.client.audio.transcriptions.create({
      file: await toFile(speech, 'speech.mp3'),
      model: 'lagoon-sim-transcribe',
      response_format: 'verbose_json',
      timestamp_granularities: ['word'],
    });
    expect(verbose.segments!.length).toBeGreaterThan(0);
    for (const segment of verbose.segments!) expect(segment.end).toBeGreaterThan(segment.start);
    expect(verbose.words!.length).toBe(verbose.segments!.length);
    const srt = await account.client.audio.transcriptions.create({
      file: await toFile(speech, 'speech.mp3'),
      model: 'whisper-1',
      response_format: 'srt',
    });
    expect(srt).toMatch(/^1\n00:00:\d\d,\d{3} --> 00:00:\d\d,\d{3}\n\[simulated: speech 1/);
    const vtt = await account.client.audio.transcriptions.create({
      file: await toFile(speech, 'speech.mp3'),
      model: 'whisper-1',
      response_format: 'vtt',
    });
    expect(vtt.startsWith('WEBVTT\n\n00:00:')).toBe(true);
    const text = await account.client.audio.transcriptions.create({
      file: await toFile(await toneSample(2, 440, 'wav'), 'tone.wav'),
      model: 'whisper-1',
      response_format: 'text',
    });
    expect(text).toMatch(/2 s of audio, 1 voiced segment\]$/);
  });

  it("should answer the original service's json with timestamps", async () => {
    const response = await post({ file: file(), model: 'whisper-1', timestamps: 'true' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      text: string;
      duration: number;
      timestamps: { segment: { text: string; start: number; end: number }[]; word: unknown[] };
    };
    expect(body.duration).toBeGreaterThan(1);
    expect(body.timestamps.segment.length).toBeGreaterThan(0);
    expect(body.timestamps.word.length).toBe(body.timestamps.segment.length);
  });

  it('should take json timestamps asked by timestamp_granularities[] too, as veniceai-cli asks', async () => {
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('response_format', 'json');
    form.append('timestamp_granularities[]', 'word');
    form.append('timestamp_granularities[]', 'segment');
    form.append('file', file(), 'speech.mp3');
    const response = await fetch(`${server.url}/api/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}` },
      body: form,
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      timestamps?: { segment: { text: string; start: number; end: number }[]; word?: unknown[] };
    };
    expect(body.timestamps?.segment.length).toBeGreaterThan(0);
    expect(body.timestamps?.segment[0]).toEqual({
      text: expect.any(String),
      start: expect.any(Number),
      end: expect.any(Number),
    });
    // Without either, plain json has no timestamps.
    const plain = (await (await post({ file: file(), model: 'whisper-1' })).json()) as { timestamps?: unknown };
    expect(plain.timestamps).toBeUndefined();
  });

  it('should pass an upstream model the file and fields, and render its verbose_json in each format', async () => {
    const answer = await account.client.audio.transcriptions.create({
      file: await toFile(speech, 'speech.mp3'),
      model: 'test-whisper',
      language: 'en',
      prompt: 'Lagoon',
      response_format: 'verbose_json',
      timestamp_granularities: ['word'],
    });
    expect(answer.text).toBe(FAKE_TRANSCRIPT);
    expect(answer.segments!.map((segment) => segment.text)).toEqual(['Hello from the', 'fake whisper server.']);
    expect(answer.words).toHaveLength(6);
    const sent = upstream.requests.at(-1)!;
    expect(sent.fields).toMatchObject({
      model: ['Systran/faster-whisper-small'],
      language: ['en'],
      prompt: ['Lagoon'],
      response_format: ['verbose_json'],
      'timestamp_granularities[]': ['segment', 'word'],
    });
    expect(sent.fileBytes).toBe(speech.length);
    const srt = await account.client.audio.transcriptions.create({
      file: await toFile(speech, 'speech.mp3'),
      model: 'test-whisper',
      response_format: 'srt',
    });
    expect(srt).toBe(
      '1\n00:00:00,000 --> 00:00:00,800\nHello from the\n\n2\n00:00:00,800 --> 00:00:01,500\nfake whisper server.\n',
    );
  });

  it('should release the hold when the upstream fails', async () => {
    const before = await account.balance();
    upstream.queue(500);
    expect((await post({ file: file(), model: 'test-whisper' })).status).toBeGreaterThanOrEqual(500);
    await eventually(async () => {
      const now = await account.balance();
      expect([now.amount, now.reserved]).toEqual([before.amount, 0n]);
    });
  });

  it.each([
    ['a file that is not audio', () => ({ file: new Blob(['not audio at all']), model: 'whisper-1' }), 'file'],
    ['an empty file', () => ({ file: new Blob([]), model: 'whisper-1' }), 'file'],
    ['no file', () => ({ model: 'whisper-1' }), 'file'],
    ['a bad response_format', () => ({ file: new Blob(['x']), response_format: 'xml' }), 'response_format'],
    ['a bad language', () => ({ file: new Blob(['x']), language: 'english!' }), 'language'],
    ['an unknown field', () => ({ file: new Blob(['x']), colour: 'red' }), 'colour'],
    ['an unknown model', () => ({ file: new Blob(['x']), model: 'no-such' }), 'Unknown model'],
    ['a tts model', () => ({ file: new Blob(['x']), model: 'lagoon-sim-speech' }), 'tts model'],
  ])('should answer 400 for %s, charging nothing', async (_what, fields, mention) => {
    const before = await account.balance();
    const response = await post(fields());
    expect(response.status).toBe(400);
    const error = (await response.json()) as { error: string; code: string };
    expect(error.error).toContain(mention);
    expect((await account.balance()).amount).toBe(before.amount);
  });

  it('should answer 402 without funds, 401 without a key, 415 for JSON', async () => {
    const broke = await chatAccount(server, '0');
    expect((await post({ file: file() }, broke.secret)).status).toBe(402);
    expect((await post({ file: file() }, '')).status).toBe(401);
    const json = await fetch(`${server.url}/api/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(json.status).toBe(415);
  });

  it('should answer POST /video/transcriptions 503 without an upstream, 400 for a bad body', async () => {
    const send = (body: unknown) =>
      fetch(`${server.url}/api/v1/video/transcriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const unavailable = await send({ url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' });
    expect(unavailable.status).toBe(503);
    expect(((await unavailable.json()) as { code: string }).code).toBe('SERVICE_UNAVAILABLE');
    expect((await send({ url: 'not a url' })).status).toBe(400);
  });

  it('should serve GraphQL transcribeAudio from a multipart upload', async () => {
    const form = new FormData();
    const query = `mutation($file: File!) { transcribeAudio(file: $file, model: "whisper-1") { __typename
      ... on MutationTranscribeAudioSuccess { data { model text seconds billedSeconds simulated segments { start end } } } } }`;
    form.append('operations', JSON.stringify({ query, variables: { file: null } }));
    form.append('map', JSON.stringify({ 0: ['variables.file'] }));
    form.append('0', file(), 'speech.mp3');
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, accept: 'application/graphql-response+json' },
      body: form,
    });
    const body = (await response.json()) as {
      data: {
        transcribeAudio: { data: { model: string; seconds: number; billedSeconds: number; simulated: boolean } };
      };
    };
    const result = body.data.transcribeAudio.data;
    expect(result).toMatchObject({ model: 'lagoon-sim-transcribe', simulated: true });
    expect(result.billedSeconds).toBe(Math.ceil(result.seconds));
  });
});
