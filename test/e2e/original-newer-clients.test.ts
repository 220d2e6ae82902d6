import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { toFile } from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ffmpegPath } from '../../src/providers/speech/ffmpeg.ts';
import { probeAudio } from '../helpers/audio.ts';
import { chatAccount, startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startBackgroundRemover, type FakeBackgroundRemover } from '../helpers/image-edit-upstreams.ts';
import { startChainNode, type ChainNode } from '../helpers/rpc-node.ts';
import { ROOT } from '../helpers/server-process.ts';

/*
 * The original service's newer CLI and its MCP server, against Lagoon with examples/compat-original.yaml (issue 34,
 * "Done when"). Neither client is installed here, so each case sends the requests the command or tool sends, as
 * their public behaviour describes them: the CLI first reads the model's record in GET /models (and refuses an
 * option the record does not advertise), then calls the route with the original's field names; the MCP server's
 * tools call the same routes with their own defaults (model `venice-uncensored`, no embedding model, voices read
 * as a resource). Every case checks the answer's shape, not only its status. veniceai-cli 2.1.0 and the `openai`
 * client are driven for real in real-clients.test.ts; the calls here that they make too use the `openai` client.
 */

const run = promisify(execFile);
const COMPAT_CONFIG = join(ROOT, 'examples/compat-original.yaml');
/** Any Base address: top-ups are offered (the 402 lists them) but none is paid in these tests. */
const RECEIVER = '0x1111111111111111111111111111111111111111';

interface ModelRecord {
  id: string;
  type: string;
  object: string;
  owned_by: string;
  model_spec: {
    capabilities?: Record<string, unknown>;
    voices?: string[];
    voice_cloning?: { mode: string; accepted_formats: string[] };
  };
}

const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;

async function ffmpeg(args: string[], file: string): Promise<Buffer> {
  await run(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-y', ...args, file]);
  return readFile(file);
}

describe(`The original's newer CLI and MCP server with examples/compat-original.yaml (${testDatabaseKind})`, () => {
  let node: ChainNode;
  let remover: FakeBackgroundRemover;
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  let dir: string;
  let png: Buffer;
  let wav: Buffer;
  let clip: Buffer;

  const api = (path: string, init: { method?: string; body?: unknown; key?: string | null } = {}) => {
    const key = init.key === undefined ? account.secret : init.key;
    return fetch(`${server.url}/api/v1${path}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: {
        ...(key && { authorization: `Bearer ${key}` }),
        ...(init.body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    });
  };
  const jsonOf = async <T = Record<string, unknown>>(response: Response, status = 200): Promise<T> => {
    const text = await response.clone().text();
    expect(response.status, text.slice(0, 500)).toBe(status);
    return (await response.json()) as T;
  };
  const modelsOf = async (type: string) =>
    (await jsonOf<{ data: ModelRecord[] }>(await api(`/models?type=${type}`))).data;
  /** A chat completion as the newer CLI sends it, its answer checked for the OpenAI shape. */
  const chat = async (body: Record<string, unknown>) => {
    const completion = await jsonOf<{
      object: string;
      model: string;
      choices: { message: { role: string; content: string | null; reasoning_content?: string } }[];
      usage: { prompt_tokens: number; completion_tokens: number };
    }>(await api('/chat/completions', { body: { max_tokens: 4096, ...body } }));
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.role).toBe('assistant');
    expect(completion.usage.prompt_tokens).toBeGreaterThan(0);
    return completion;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lagoon-newer-clients-'));
    [node, remover] = await Promise.all([startChainNode(), startBackgroundRemover()]);
    server = await startChatServer({
      LAGOON_CONFIG: COMPAT_CONFIG,
      LAGOON_JOB_WORKERS: 'true',
      RPC_UPSTREAM_ETHEREUM_SEPOLIA: node.url,
      LAGOON_X402_RECEIVER: RECEIVER,
      LAGOON_X402_FACILITATOR_URL: 'http://127.0.0.1:9/facilitator',
      // The request's shape is the subject here; the local model's work is test/rest/background-removal.test.ts's.
      LAGOON_BACKGROUND_REMOVAL_URL: remover.url,
    });
    account = await chatAccount(server, '50');
    png = await sharp({ create: { width: 320, height: 240, channels: 3, background: { r: 20, g: 120, b: 200 } } })
      .png()
      .toBuffer();
    wav = await ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=220:duration=6', '-ar', '24000'], join(dir, 'voice.wav'));
    // `venice video upscale clip.mp4`: about 1.4 MB (noise does not compress), past the plain 1 MiB JSON limit.
    clip = await ffmpeg(
      [
        ...['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=10,noise=alls=60:allf=t', '-t', '5'],
        ...['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-preset', 'ultrafast', '-b:v', '2600k', '-bufsize', '500k'],
      ],
      join(dir, 'clip.mp4'),
    );
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await node?.close();
    await remover?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // Item 1: the original's ids are catalog entries of their own.
  it('should list the original ids with records that advertise what the CLI checks', async () => {
    const text = await modelsOf('text');
    const kimi = text.find((model) => model.id === 'kimi-k2-5');
    expect(kimi).toMatchObject({ id: 'kimi-k2-5', object: 'model', type: 'text', owned_by: expect.any(String) });
    // `venice chat --json / --json-schema / --reasoning-effort / --image / --file / --audio / --video`.
    expect(kimi?.model_spec.capabilities).toMatchObject({
      supportsResponseSchema: true,
      supportsReasoning: true,
      supportsReasoningEffort: true,
      supportsVision: true,
      supportsAudioInput: true,
      supportsVideoInput: true,
    });
    expect(text.map((model) => model.id)).toContain('venice-uncensored');

    const tts = await modelsOf('tts');
    const chatterbox = tts.find((model) => model.id === 'tts-chatterbox-hd');
    expect(chatterbox?.model_spec.voices).toEqual(expect.arrayContaining(['Aurora', 'Blade']));
    expect(chatterbox?.model_spec.voice_cloning).toMatchObject({ mode: expect.any(String) });
    expect(tts.map((model) => model.id)).toContain('gpt-4o-mini-tts');
    expect((await modelsOf('asr')).map((model) => model.id)).toContain('gpt-4o-transcribe');

    const retrieved = await account.client.models.retrieve('kimi-k2-5');
    expect(retrieved).toMatchObject({ id: 'kimi-k2-5', object: 'model', owned_by: expect.any(String) });
  });

  // Items 1, 2 and 6: an alias of the simulator chat model that takes every content part; file parts as text.
  it('should answer `venice chat` with --json, --json-schema, --reasoning-effort and attachments', async () => {
    const messages = (content: unknown) => [{ role: 'user', content }];
    const asJson = await chat({
      model: 'kimi-k2-5',
      messages: messages('Give a tide as JSON'),
      response_format: { type: 'json_object' },
    });
    expect(JSON.parse(asJson.choices[0]!.message.content!)).toEqual(expect.any(Object));

    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, height: { type: 'number' } },
      required: ['name', 'height'],
      additionalProperties: false,
    };
    const shaped = await chat({
      model: 'kimi-k2-5',
      messages: messages('A wave'),
      response_format: { type: 'json_schema', json_schema: { name: 'wave', strict: true, schema } },
    });
    expect(JSON.parse(shaped.choices[0]!.message.content!)).toEqual({
      name: expect.any(String),
      height: expect.any(Number),
    });

    const reasoned = await chat({ model: 'kimi-k2-5', messages: messages('Why tides?'), reasoning_effort: 'high' });
    expect(reasoned.choices[0]!.message.content!.length).toBeGreaterThan(0);

    const attached = await chat({
      model: 'kimi-k2-5',
      messages: messages([
        { type: 'text', text: 'Describe these' },
        { type: 'image_url', image_url: { url: dataUrl('image/png', png) } },
        {
          type: 'file',
          file: { filename: 'report.md', file_data: dataUrl('text/markdown', Buffer.from('# Tides\n')) },
        },
        { type: 'input_audio', input_audio: { data: wav.toString('base64'), format: 'wav' } },
        { type: 'video_url', video_url: { url: dataUrl('video/mp4', clip) } },
      ]),
    });
    expect(attached.choices[0]!.message.content!.length).toBeGreaterThan(0);
  }, 60_000);

  // Item 1: the ids real clients send by default without asking the catalog.
  it("should serve the MCP server's default model and the openai client's default speech and transcription ids", async () => {
    const uncensored = await chat({ model: 'venice-uncensored', messages: [{ role: 'user', content: 'Hello' }] });
    expect(uncensored.choices[0]!.message.content!.length).toBeGreaterThan(0);

    const speech = await account.client.audio.speech.create({
      model: 'gpt-4o-mini-tts',
      voice: 'alloy',
      input: 'The tide comes in.',
    });
    const mp3 = Buffer.from(await speech.arrayBuffer());
    expect((await probeAudio(mp3)).codec).toBe('mp3');
    const transcript = await account.client.audio.transcriptions.create({
      model: 'gpt-4o-transcribe',
      file: await toFile(mp3, 'tide.mp3', { type: 'audio/mpeg' }),
    });
    expect(transcript.text.length).toBeGreaterThan(0);
  }, 60_000);

  // Items 2 and 3: a speech model that clones; the clone's answer and GET /audio/voices.
  it('should clone a voice as `venice voices clone` does, list it, and speak with it', async () => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'voice.wav');
    form.set('model', 'tts-chatterbox-hd');
    const cloned = await jsonOf<Record<string, unknown>>(
      await fetch(`${server.url}/api/v1/audio/voices`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.secret}` },
        body: form,
      }),
    );
    // Exactly the public schema's two fields: the CLI prints "Cloned voice: <id>".
    expect(cloned).toEqual({ id: expect.stringMatching(/^vv_[0-9a-f]{24}$/), model: 'tts-chatterbox-hd' });

    // `venice voices --model tts-chatterbox-hd`, and the MCP server's voices resource.
    const listed = await jsonOf<{ object: string; data: { id: string; model: string; type: string }[] }>(
      await api('/audio/voices?model=tts-chatterbox-hd'),
    );
    expect(listed.object).toBe('list');
    expect(listed.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: cloned.id, model: 'tts-chatterbox-hd', type: 'cloned' }),
        expect.objectContaining({ id: 'Aurora', model: 'tts-chatterbox-hd', type: 'builtin' }),
      ]),
    );

    const spoken = await api('/audio/speech', {
      body: { model: 'tts-chatterbox-hd', voice: cloned.id, input: 'In my own voice.', response_format: 'wav' },
    });
    expect(spoken.status).toBe(200);
    expect(spoken.headers.get('content-type')).toMatch(/^audio\/wav/);
    expect((await probeAudio(Buffer.from(await spoken.arrayBuffer()))).duration).toBeGreaterThan(0.3);
  }, 60_000);

  // Item 7: prompt and temperature are taken (and ignored by a model without them).
  it('should speak `venice tts --temperature 0.8` with a style prompt', async () => {
    const response = await api('/audio/speech', {
      body: { model: 'tts-kokoro', voice: 'af_sky', input: 'Calm seas.', temperature: 0.8, prompt: 'softly' },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^audio\/mpeg/);
    expect((await probeAudio(Buffer.from(await response.arrayBuffer()))).codec).toBe('mp3');
  }, 60_000);

  // Items 9 and 10: the clip passes the 1 MiB JSON limit; an upscale needs no prompt or duration.
  it('should queue `venice video upscale clip.mp4` and deliver the upscaled clip', async () => {
    const upscaler = (await modelsOf('video')).find((model) => model.id === 'topaz-video-upscale');
    expect(upscaler).toBeDefined();
    const handle = await jsonOf<Record<string, unknown>>(
      await api('/video/queue', { body: { model: 'topaz-video-upscale', video_url: dataUrl('video/mp4', clip) } }),
    );
    expect(Object.keys(handle).sort()).toEqual(
      'download_url' in handle ? ['download_url', 'model', 'queue_id'] : ['model', 'queue_id'],
    );
    expect(handle).toMatchObject({ model: 'topaz-video-upscale', queue_id: expect.any(String) });

    const retrieve = () =>
      api('/video/retrieve', { body: { model: 'topaz-video-upscale', queue_id: handle.queue_id } });
    for (;;) {
      const response = await retrieve();
      expect(response.status).toBe(200);
      if (!response.headers.get('content-type')?.startsWith('application/json')) {
        expect(response.headers.get('content-type')).toBe('video/mp4');
        const mp4 = Buffer.from(await response.arrayBuffer());
        expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');
        break;
      }
      const status = (await response.json()) as Record<string, unknown>;
      // The public enum: PROCESSING while it waits or runs (never QUEUED), with both timings.
      expect(status).toMatchObject({
        status: expect.stringMatching(/^(PROCESSING|COMPLETED)$/),
        average_execution_time: expect.any(Number),
        execution_duration: expect.any(Number),
      });
      if (status.status === 'COMPLETED') {
        expect(status.download_url).toEqual(expect.any(String));
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 120_000);

  // Item 10: the MCP server's embedding tool sends no model.
  it('should embed without a model, as the MCP tool asks', async () => {
    const embedded = await jsonOf<{
      object: string;
      model: string;
      data: { object: string; index: number; embedding: number[] }[];
      usage: { prompt_tokens: number };
    }>(await api('/embeddings', { body: { input: 'The cat sat on the mat' } }));
    expect(embedded.object).toBe('list');
    expect(embedded.model).toEqual(expect.any(String));
    expect(embedded.data[0]).toMatchObject({ object: 'embedding', index: 0 });
    expect(embedded.data[0]!.embedding.length).toBeGreaterThan(100);
    expect(embedded.usage.prompt_tokens).toBeGreaterThan(0);
  });

  // Item 10: a data: URL in image_url.
  it('should remove a background given as a data: URL', async () => {
    const response = await api('/image/background-remove', { body: { image_url: dataUrl('image/png', png) } });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    const cut = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
    expect(cut).toMatchObject({ format: 'png', width: 320, height: 240, hasAlpha: true });
    expect(remover.received).toHaveLength(1);
  }, 60_000);

  // Item 5: the 402 of a top-up without a payment is x402 v2's body and nothing else.
  it('should answer an unpaid x402 top-up with the x402 v2 402 body', async () => {
    const body = await jsonOf<Record<string, unknown>>(await api('/x402/top-up', { method: 'POST', key: null }), 402);
    expect(body.x402Version).toBe(2);
    expect(body.accepts).toEqual([
      expect.objectContaining({
        scheme: 'exact',
        payTo: RECEIVER,
        asset: expect.any(String),
        network: expect.any(String),
      }),
    ]);
    const allowed = ['x402Version', 'accepts', 'error', 'resource', 'extensions'];
    expect(Object.keys(body).filter((key) => !allowed.includes(key))).toEqual([]);
  });

  it('should send the cost headers the original clients read on an RPC call', async () => {
    const response = await api('/crypto/rpc/ethereum-sepolia', {
      body: { jsonrpc: '2.0', method: 'eth_blockNumber', params: [], id: 1 },
    });
    expect(await jsonOf(response)).toMatchObject({ jsonrpc: '2.0', id: 1, result: expect.stringMatching(/^0x/) });
    expect(response.headers.get('x-venice-rpc-credits')).toBe(response.headers.get('x-service-rpc-credits'));
    expect(response.headers.get('x-venice-rpc-cost-usd')).toBe(response.headers.get('x-service-rpc-cost-usd'));
    expect(Number(response.headers.get('x-venice-rpc-credits'))).toBeGreaterThan(0);
  });
});
