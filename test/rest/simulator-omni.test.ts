import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ffmpegPath } from '../../src/providers/speech/ffmpeg.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { toneSample } from '../helpers/audio.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * The built-in simulators' content parts and speech record on a fresh install: lagoon-sim-omni advertises and
 * really reads images, audio and video (naming what it got), models without a capability refuse that part, and
 * lagoon-sim-speech's record says it clones.
 */

const run = promisify(execFile);

interface ModelRecord {
  id: string;
  model_spec: { capabilities?: Record<string, unknown>; [field: string]: unknown };
}
type Part = OpenAI.Chat.Completions.ChatCompletionContentPart;

/** A `seconds`-long test pattern as MP4 (an MP4 needs a seekable output: written to a file). */
async function testClip(seconds: number, dir: string): Promise<Buffer> {
  const file = join(dir, 'clip.mp4');
  await run(ffmpegPath(), [
    ...['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=96x64:rate=10'],
    ...['-t', String(seconds), '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-preset', 'ultrafast', file],
  ]);
  return readFile(file);
}

describe('built-in simulators: content parts and speech record', () => {
  let t: TestApp;
  let client: OpenAI;
  let dir: string;
  let image: Part;
  let audio: Part;
  let video: Part;

  beforeAll(async () => {
    t = await createTestApp();
    const { secret } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' });
    client = new OpenAI({
      apiKey: secret,
      baseURL: 'http://lagoon.test/api/v1',
      maxRetries: 0,
      timeout: 60_000,
      fetch: (url, init) => t.app.fetch(new Request(url, init)),
    });
    dir = await mkdtemp(join(tmpdir(), 'lagoon-omni-'));
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#2080c0' } })
      .png()
      .toBuffer();
    image = { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } };
    const wav = await toneSample(1.2, 440, 'wav');
    audio = { type: 'input_audio', input_audio: { data: wav.toString('base64'), format: 'wav' } };
    const mp4 = await testClip(2, dir);
    // Not in the openai client's types (OpenAI has no video part); the original's chat takes it.
    video = { type: 'video_url', video_url: { url: `data:video/mp4;base64,${mp4.toString('base64')}` } } as never;
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  const ask = (model: string, parts: Part[]) =>
    client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What did I send?' }, ...parts] }],
    });
  const refusal = async (model: string, parts: Part[]) => {
    const error = await ask(model, parts).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    return error as InstanceType<typeof OpenAI.BadRequestError>;
  };

  it('should advertise every content part in the omni record', async () => {
    const record = (await client.models.retrieve('lagoon-sim-omni')) as unknown as ModelRecord;
    expect(record.model_spec.capabilities).toMatchObject({
      supportsVision: true,
      supportsMultipleImages: true,
      maxImages: expect.any(Number),
      supportsAudioInput: true,
      supportsVideoInput: true,
      maxVideos: expect.any(Number),
    });
  });

  it('should read an image, an audio clip and a video and say what they are', async () => {
    const answer = await ask('lagoon-sim-omni', [image, audio, video]);
    const content = answer.choices[0]!.message.content!;
    expect(content).toMatch(/^Received 1 image 64×64 png, 1 audio clip wav 1\.2 s, 1 video mp4 2\.0 s\. \S/);
    // Deterministic: the same request gets the same answer.
    expect((await ask('lagoon-sim-omni', [image, audio, video])).choices[0]!.message.content).toBe(content);
    expect(answer.usage!.prompt_tokens).toBeGreaterThan(3 * 85);
  });

  it('should name several clips of a kind and refuse more videos than maxVideos', async () => {
    const two = await ask('lagoon-sim-omni', [video, video]);
    expect(two.choices[0]!.message.content).toMatch(/^Received 2 videos \(mp4 2\.0 s, mp4 2\.0 s\)\./);
    const error = await refusal('lagoon-sim-omni', [video, video, video]);
    expect(error.message).toContain('messages.0.content: Model lagoon-sim-omni takes at most 2 videos');
  });

  it('should refuse each part a model does not take, naming the message', async () => {
    const noAudio = await refusal('lagoon-sim-chat', [audio]);
    expect(noAudio.message).toContain('messages.0.content: Model lagoon-sim-chat does not accept audio');
    const noVideo = await refusal('lagoon-sim-chat', [video]);
    expect(noVideo.message).toContain('Model lagoon-sim-chat does not accept video');
    const noImage = await refusal('lagoon-sim-reasoner', [image]);
    expect(noImage.message).toContain('Model lagoon-sim-reasoner does not accept images');
  });

  it('should refuse malformed audio and video parts with 400 naming the part', async () => {
    const response = await t.app.fetch(
      new Request('http://lagoon.test/api/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'lagoon-sim-omni',
          messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { format: 'wav' } }] }],
        }),
      }),
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; issues: { path: (string | number)[] }[] };
    expect(body.code).toBe('INVALID_REQUEST');
    expect(body.issues[0]!.path.slice(0, 3)).toEqual(['messages', 0, 'content']);
  });

  it("should say in lagoon-sim-speech's record that it clones and takes cloned voice ids", async () => {
    const record = (await client.models.retrieve('lagoon-sim-speech')) as unknown as ModelRecord;
    expect(record.model_spec).toMatchObject({
      voice_cloning: { mode: 'zero_shot', accepted_formats: ['wav', 'mp3'], min_sample_seconds: 5, retention_days: 30 },
      supports_custom_voice_id: true,
    });
  });
});
