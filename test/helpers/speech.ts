import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EspeakEngine } from '../../src/providers/speech/espeak.engine.ts';
import { startChatServer, type ChatServer } from './chat.ts';
import { listenLocally } from './local-server.ts';

/** What the fake OpenAI-compatible speech server received, and how it answers next. */
export interface FakeSpeechUpstream {
  readonly url: string;
  readonly requests: Record<string, unknown>[];
  /** `ok`: audio in three writes; `fail`: HTTP 500; `hang`: never answers; `break`: one write, then a reset. */
  mode: 'ok' | 'fail' | 'hang' | 'break';
  close(): Promise<void>;
}

export const FAKE_AUDIO = ['ID3-fake-part-1|', 'part-2|', 'part-3'];

/** An OpenAI-compatible speech server (POST /v1/audio/speech), as Kokoro-FastAPI answers. */
export async function startFakeSpeechUpstream(): Promise<FakeSpeechUpstream> {
  const requests: Record<string, unknown>[] = [];
  const state = { mode: 'ok' as FakeSpeechUpstream['mode'] };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      if (req.url !== '/v1/audio/speech' || req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      requests.push(JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>);
      if (state.mode === 'hang') return; // the client's timeout ends it (close() drops the connection)
      if (state.mode === 'fail') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"detail":"engine exploded"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      if (state.mode === 'break') {
        res.write(FAKE_AUDIO[0]);
        setImmediate(() => res.destroy());
        return;
      }
      for (const part of FAKE_AUDIO) res.write(part);
      res.end();
    });
  });
  const listening = await listenLocally(server);
  return {
    url: listening.url,
    requests,
    get mode() {
      return state.mode;
    },
    set mode(mode) {
      state.mode = mode;
    },
    close: listening.close,
  };
}

/**
 * The operator file of the speech tests: `gated-speech` on an eSpeak engine whose sentences the test can hold back,
 * `kokoro-speech` on the fake OpenAI-compatible upstream (no retries, so a failure shows at once), and
 * `fallback-speech` on the upstream first, then the gated engine.
 */
function operatorFile(upstreamUrl: string): string {
  return [
    'providers:',
    '  - { id: gated, type: simulator }',
    `  - { id: kokoro, type: openai-compatible, baseUrl: "${upstreamUrl}/v1", timeoutMs: 3000, maxRetries: 0 }`,
    'models:',
    '  - id: gated-speech',
    '    type: tts',
    '    name: Gated speech',
    '    provider: gated',
    '    pricing: { input: { usd: 10 }, voice_clone: { usd: 0.02 } }',
    '    spec:',
    '      voices: [af_sky, am_adam]',
    '      default_voice: am_adam',
    '      voice_cloning: { mode: zero_shot, accepted_formats: [wav, mp3], min_sample_seconds: 5, retention_days: 7 }',
    '  - id: kokoro-speech',
    '    type: tts',
    '    name: Kokoro speech',
    '    provider: kokoro',
    '    upstreamModel: kokoro',
    '    pricing: { input: { usd: 2 } }',
    '    spec:',
    '      voices: [af_sky, af_bella]',
    '      supported_formats: [mp3, wav]',
    '      supportsPromptParam: true',
    '      supportsTemperatureParam: true',
    '  - id: fallback-speech',
    '    type: tts',
    '    name: Fallback speech',
    '    providers: [kokoro, gated]',
    '    pricing: { input: { usd: 2 } }',
    '    spec: { voices: [af_sky] }',
  ].join('\n');
}

/** A sentence gate on the `gated` engine: each sentence waits until `open(index)` was called for it. */
export interface SentenceGate {
  /** Indexes of the sentences let through the gate (synthesised or being synthesised). */
  readonly passed: number[];
  /** Lets every sentence up to `index` run. */
  open(index: number): void;
  /** Lets every sentence run (the default between tests). */
  openAll(): void;
}

export interface SpeechServer extends ChatServer {
  readonly upstream: FakeSpeechUpstream;
  /** Holds sentences of the gated engine back; every sentence runs until it is called. */
  gate(): SentenceGate;
}

export async function startSpeechServer(): Promise<SpeechServer> {
  const upstream = await startFakeSpeechUpstream();
  const dir = await mkdtemp(join(tmpdir(), 'lagoon-speech-'));
  const path = join(dir, 'operator.yaml');
  await writeFile(path, operatorFile(upstream.url));
  const server = await startChatServer({ LAGOON_CONFIG: path });
  let hook: ((index: number) => Promise<void>) | undefined;
  const engine = new EspeakEngine('gated', { beforeSentence: (index) => hook?.(index) });
  server.t.app.services.speech.gateway.add({ engine, maxRetries: 0, cooldownMs: 0 });
  return {
    ...server,
    upstream,
    gate() {
      const passed: number[] = [];
      const waiting = new Map<number, () => void>();
      let openUpTo = -1;
      hook = async (index) => {
        if (index > openUpTo) await new Promise<void>((resolve) => waiting.set(index, resolve));
        passed.push(index);
      };
      const open = (index: number) => {
        openUpTo = Math.max(openUpTo, index);
        for (const [waiter, resolve] of waiting) if (waiter <= index) resolve();
      };
      return { passed, open, openAll: () => open(Number.MAX_SAFE_INTEGER) };
    },
    async close() {
      await server.close();
      await Promise.all([upstream.close(), rm(dir, { recursive: true, force: true })]);
    },
  };
}
