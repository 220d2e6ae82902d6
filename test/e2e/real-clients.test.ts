import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toFile } from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeAudio } from '../helpers/audio.ts';
import { chatAccount, startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startSearxng, type FakeUpstream } from '../helpers/search-upstreams.ts';
import { ROOT } from '../helpers/server-process.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * The check of docs/configuration.md#clients-of-the-original-service: with examples/compat-original.yaml, the
 * original service's own clients work unchanged against Lagoon. veniceai-cli runs as the child process a user
 * would start (its bin, VENICE_API_BASE_URL, a key in VENICE_API_KEY, a fresh HOME for its ~/.venice files); the
 * openai client talks to the same server. Model ids are the original service's (model aliases in the file, listed
 * under their own ids). Web search needs an upstream, as it always does: a local SearXNG stand-in.
 */

const COMPAT_CONFIG = join(ROOT, 'examples/compat-original.yaml');
const require = createRequire(import.meta.url);
const VENICE_BIN = require.resolve('veniceai-cli/dist/index.js');

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

describe(`veniceai-cli and the openai client with examples/compat-original.yaml (${testDatabaseKind})`, () => {
  let searxng: FakeUpstream;
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  let home: string;

  const veniceEnv = () => ({
    PATH: process.env.PATH ?? '',
    HOME: home,
    VENICE_API_BASE_URL: `${server.url}/api/v1`,
    VENICE_API_KEY: account.secret,
    CI: 'true',
    NO_UPDATE_NOTIFIER: '1',
    NO_COLOR: '1',
  });
  const collect = (command: string, args: string[]): Promise<Run> =>
    new Promise<Run>((resolve, reject) => {
      const child = spawn(command, args, { cwd: home, env: veniceEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  /** `venice <args>` in `home`, as a script runs it (no TTY: the CLI prints plain text and does not stream). */
  const venice = (...args: string[]) => collect(process.execPath, [VENICE_BIN, ...args]);
  /** `venice <args>` on a terminal (util-linux `script` gives it one), where `chat` streams its answer. */
  const veniceOnTty = (...args: string[]) => {
    const quoted = [process.execPath, VENICE_BIN, ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`);
    return collect('script', ['-qec', quoted.join(' '), '/dev/null']);
  };
  const ok = (run: Run, what: string): string => {
    expect(run.code, `${what}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
    return run.stdout;
  };

  /** Polls the job over HTTP (a CLI process per poll would cost half a second of CPU each). */
  const untilCompleted = async (queueId: string) => {
    for (;;) {
      const response = await fetch(`${server.url}/api/v1/video/retrieve`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'wan-2.6-text-to-video', queue_id: queueId }),
      });
      const body = (await response.json()) as { status: string };
      if (body.status === 'COMPLETED') return;
      expect(['QUEUED', 'PROCESSING']).toContain(body.status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    searxng = await startSearxng();
    server = await startChatServer({
      LAGOON_CONFIG: COMPAT_CONFIG,
      LAGOON_JOB_WORKERS: 'true',
      SEARXNG_URL: searxng.url,
    });
    account = await chatAccount(server, '50');
    home = await mkdtemp(join(tmpdir(), 'lagoon-venice-home-'));
  }, scaled(60_000));
  afterAll(async () => {
    await server?.close();
    await searxng?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('should list every original id under its own type', async () => {
    const all = (await (await fetch(`${server.url}/api/v1/models?type=all`)).json()) as {
      data: { id: string; type: string; model_spec: { name: string } }[];
    };
    const byId = new Map(all.data.map((model) => [model.id, model]));
    expect(byId.get('kimi-k2-5')).toMatchObject({ type: 'text', model_spec: { name: 'Kimi K2.5' } });
    expect(byId.get('flux-2-pro')?.type).toBe('image');
    expect(byId.get('tts-kokoro')?.type).toBe('tts');
    expect(byId.get('wan-2.6-text-to-video')?.type).toBe('video');
    // The public list had 328 models when the file was written, plus three ids clients send by default.
    expect(all.data.length).toBeGreaterThanOrEqual(331);
  });

  it('should run every veniceai-cli command that calls the server', { timeout: scaled(90_000) }, async () => {
    const source = join(home, 'source.png');
    await sharp({ create: { width: 320, height: 240, channels: 3, background: { r: 20, g: 120, b: 200 } } })
      .png()
      .toFile(source);
    const [models, chat, streamed, search, image, upscale, tts, embeddings, queued] = await Promise.all([
      venice('models', '--type', 'all'),
      venice('chat', '--model', 'kimi-k2-5', 'How do tides work?'),
      veniceOnTty('chat', '--model', 'llama-3.3-70b', '--no-venice-prompt', 'Why is the sea salty?'),
      venice('search', 'lagoon ecology', '--model', 'kimi-k2-5'),
      venice(
        'image',
        'a lighthouse at dusk',
        '--model',
        'flux-2-pro',
        '-w',
        '512',
        '-h',
        '512',
        '--output',
        'lighthouse.png',
      ),
      venice('upscale', 'source.png', '--scale', '2', '--output', 'upscaled.png'),
      venice('tts', 'The tide comes in twice a day.', '--model', 'tts-kokoro', '--voice', 'af_sky', '-o', 'tide.mp3'),
      venice('embeddings', 'The cat sat on the mat', '--model', 'text-embedding-bge-m3', '--format', 'json'),
      venice('video', 'generate', 'waves on a beach', '--model', 'wan-2.6-text-to-video', '--format', 'json'),
    ]);

    expect(ok(models, 'models')).toMatch(/kimi-k2-5/);
    expect(ok(chat, 'chat').trim().length).toBeGreaterThan(10);
    // The streamed answer, then the usage line the CLI prints from the stream's last chunk.
    expect(ok(streamed, 'chat on a terminal')).toMatch(/\w{3,}[\s\S]*prompt: \d+ .*completion: \d+ .*total: \d+/);
    expect(ok(search, 'search').trim().length).toBeGreaterThan(10);
    expect(searxng.requests.length).toBeGreaterThan(0);

    expect(ok(image, 'image')).toContain('lighthouse.png');
    expect(await sharp(join(home, 'lighthouse.png')).metadata()).toMatchObject({ width: 512, height: 512 });
    expect(ok(upscale, 'upscale')).toContain('upscaled.png');
    expect(await sharp(join(home, 'upscaled.png')).metadata()).toMatchObject({ width: 640, height: 480 });

    expect(ok(tts, 'tts')).toContain('tide.mp3');
    const speech = await probeAudio(await readFile(join(home, 'tide.mp3')));
    expect(speech.codec).toBe('mp3');
    expect(speech.duration).toBeGreaterThan(0.5);

    const vectors = JSON.parse(ok(embeddings, 'embeddings')) as { embedding: number[] }[];
    expect(vectors[0]!.embedding.length).toBeGreaterThan(100);

    // Transcribe the speech the tts command made while the video job runs; then its status and the download.
    const job = JSON.parse(ok(queued, 'video generate')) as { queue_id: string; model: string };
    const transcribe = venice(
      'transcribe',
      'tide.mp3',
      '-m',
      'nvidia/parakeet-tdt-0.6b-v3',
      '--timestamps',
      '-f',
      'json',
    );
    await untilCompleted(job.queue_id);
    const [status, retrieve] = await Promise.all([
      venice('video', 'status', job.queue_id, '-m', 'wan-2.6-text-to-video'),
      venice('video', 'retrieve', job.queue_id, '-m', 'wan-2.6-text-to-video', '-o', 'waves.mp4'),
    ]);
    expect(ok(status, 'video status')).toMatch(/Status: COMPLETED[\s\S]*Video URL: http/);
    expect(ok(retrieve, 'video retrieve')).toContain('waves.mp4');
    const mp4 = await readFile(join(home, 'waves.mp4'));
    expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');

    const transcript = JSON.parse(ok(await transcribe, 'transcribe')) as {
      text: string;
      duration: number;
      timestamps: { segment: { start: number; end: number }[] };
    };
    expect(transcript.text.length).toBeGreaterThan(0);
    expect(transcript.duration).toBeCloseTo(speech.duration, 0);
    expect(transcript.timestamps.segment.length).toBeGreaterThan(0);
  });

  it('should answer every openai client call it makes', async () => {
    const { client } = account;
    const [chat, embedding, image, speech, models] = await Promise.all([
      client.chat.completions.create({
        model: 'kimi-k2-5',
        messages: [{ role: 'user', content: 'Say hello' }],
      }),
      client.embeddings.create({ model: 'text-embedding-3-large', input: ['one', 'two'] }),
      client.images.generate({
        model: 'flux-2-pro',
        prompt: 'a red kite',
        size: '1024x1024',
        response_format: 'b64_json',
      }),
      client.audio.speech.create({ model: 'tts-kokoro', voice: 'af_bella', input: 'Hello from the lagoon.' }),
      client.models.list(),
    ]);
    expect(chat.choices[0]!.message.content?.length).toBeGreaterThan(0);
    expect(embedding.data).toHaveLength(2);
    expect(Buffer.from(image.data![0]!.b64_json!, 'base64').subarray(1, 4).toString('latin1')).toBe('PNG');
    const mp3 = Buffer.from(await speech.arrayBuffer());
    expect((await probeAudio(mp3)).codec).toBe('mp3');
    expect(models.data.length).toBeGreaterThan(0);

    const transcript = await client.audio.transcriptions.create({
      model: 'openai/whisper-large-v3',
      file: await toFile(mp3, 'hello.mp3', { type: 'audio/mpeg' }),
    });
    expect(transcript.text.length).toBeGreaterThan(0);

    const response = await client.responses.create({ model: 'kimi-k2-5', input: 'Name a sea bird' });
    expect(response.output_text.length).toBeGreaterThan(0);
    const stream = await client.responses.create({ model: 'claude-opus-4-5', input: 'Name a fish', stream: true });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(text.length).toBeGreaterThan(0);
  });
});
