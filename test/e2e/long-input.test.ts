import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamOperatorConfig, writeOperatorConfig } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';
import { runCliProcess, serverStorage, startServer, type ServerProcess } from '../helpers/server-process.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * A 900 KB message without whitespace, to a real server process: token counting used to be quadratic in the
 * length of a word and ran on the event loop before the balance check, so one such request (from a key with no
 * balance, even) froze the server for minutes, health checks and SIGTERM included.
 */

const ADMIN = 'e2e-long-input-admin-key';
const SHUTDOWN_TIMEOUT_SECONDS = 1;
/**
 * Health checks while the long message is handled answer about as fast as health checks on the idle server, measured
 * just before in the same run (so a loaded machine slows both): at most one check in eight is late (over 50 ms and
 * over four times the idle median) and none takes twenty times the idle median or a second, whichever is more. A busy
 * process waits for a core now and then, and PGlite runs its queries on the main thread; the old code answered no
 * check at all for minutes.
 */
function expectResponsive(latencies: readonly number[], idle: readonly number[]): void {
  expect(latencies.length).toBeGreaterThan(5);
  const median = [...idle].sort((a, b) => a - b)[Math.floor(idle.length / 2)]!;
  const lateAfter = Math.max(50, median * 4);
  const late = latencies.filter((ms) => ms >= lateAfter);
  expect(
    late.length,
    `late checks (over ${lateAfter.toFixed(0)} ms): ${late.map((ms) => ms.toFixed(0)).join(', ')} of ${latencies.length}`,
  ).toBeLessThanOrEqual(Math.floor(latencies.length / 8));
  expect(Math.max(...latencies)).toBeLessThan(Math.max(1_000, median * 20));
}

/** One long "word": pseudo-random lowercase letters (a repeated letter, or the same word twice, would let the BPE's cache help). */
function longWord(length: number, seed: number): string {
  const codes = new Uint8Array(length);
  let state = seed;
  for (let i = 0; i < length; i += 1) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    codes[i] = 97 + ((state >>> 16) % 26);
  }
  return new TextDecoder().decode(codes);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`a 900 KB single-word chat message (${testDatabaseKind})`, () => {
  let upstream: OpenAIUpstream;
  let config: Awaited<ReturnType<typeof writeOperatorConfig>>;
  let storage: Awaited<ReturnType<typeof serverStorage>>;
  let env: Record<string, string>;
  let server: ServerProcess;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream();
    config = await writeOperatorConfig(upstreamOperatorConfig(upstream.url, { timeoutMs: 60_000 }));
    storage = await serverStorage('lagoon-long-input-');
    env = {
      ...storage.env,
      LAGOON_CONFIG: config.path,
      LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
      LAGOON_SHUTDOWN_TIMEOUT_SECONDS: String(SHUTDOWN_TIMEOUT_SECONDS),
    };
    server = await startServer(env);
  });

  afterAll(async () => {
    // A frozen process does not act on SIGTERM: do not wait minutes for it.
    if (server.child.exitCode === null && server.child.signalCode === null) {
      const exited = server.stop();
      if ((await Promise.race([exited, sleep(5_000).then(() => 'late' as const)])) === 'late') {
        server.child.kill('SIGKILL');
        await exited;
      }
    }
    await storage.remove();
    await Promise.all([upstream.close(), config.remove()]);
  });

  const chat = (key: string, word: string, extra: Record<string, unknown> = {}) =>
    fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'up-chat',
        messages: [{ role: 'user', content: word }],
        max_completion_tokens: 50,
        ...extra,
      }),
      signal: AbortSignal.timeout(60_000),
    });

  /** Runs `work` while polling /healthz every ~20 ms; fails as soon as one check takes more than a second. */
  async function whilePolling<T>(work: Promise<T>): Promise<{ result: T; latencies: number[] }> {
    const latencies: number[] = [];
    let done = false;
    const polling = (async () => {
      while (!done) {
        const started = performance.now();
        const response = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(scaled(5_000)) });
        await response.arrayBuffer();
        latencies.push(performance.now() - started);
        expect(response.status).toBe(200);
        await sleep(20);
      }
    })();
    try {
      const result = await Promise.race([work, polling.then(() => new Promise<never>(() => undefined))]);
      return { result, latencies };
    } finally {
      done = true;
      await polling.catch(() => undefined);
    }
  }

  const createInferenceKey = async (): Promise<string> => {
    const response = await fetch(`${server.url}/api/v1/api_keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiKeyType: 'INFERENCE', description: 'long input' }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: { apiKey: string } }).data.apiKey;
  };

  it(
    'should refuse a key without balance with 402 while /healthz answers as fast as when idle',
    async () => {
      const key = await createInferenceKey();
      const { latencies: idle } = await whilePolling(sleep(600));
      const { result: response, latencies } = await whilePolling(chat(key, longWord(900_000, 1)));
      expect(response.status).toBe(402);
      expect(await response.json()).toMatchObject({ code: 'INSUFFICIENT_BALANCE', error: expect.any(String) });
      expectResponsive(latencies, idle);
      expect(upstream.chatRequests()).toHaveLength(0);
    },
    scaled(60_000),
  );

  it(
    'should answer a funded key while /healthz answers as fast as when idle',
    async () => {
      const credit = await runCliProcess(
        ['accounts', 'credit', '--key', ADMIN, '--currency', 'USD', '--amount', '5'],
        env,
      );
      expect(credit.code, credit.stderr).toBe(0);
      const key = await createInferenceKey();
      const word = longWord(900_000, 2);
      const { latencies: idle } = await whilePolling(sleep(600));
      const { result: response, latencies } = await whilePolling(chat(key, word));
      expect(response.status).toBe(200);
      const completion = (await response.json()) as { choices: { message: { content: string } }[] };
      expect(completion.choices[0]!.message.content).toEqual(expect.any(String));
      expect((upstream.chatRequests().at(-1)!.body.messages as { content: string }[]).at(-1)!.content).toBe(word);
      expectResponsive(latencies, idle);
    },
    scaled(90_000),
  );

  it(
    'should end on SIGTERM within the shutdown timeout plus a few seconds while it counts and streams',
    async () => {
      // The upstream sends one chunk and then nothing: a stream that would never end by itself.
      upstream.setBehavior({ kind: 'reply', chunks: ['one ', 'two'], holdAfterChunks: 1 });
      const key = await createInferenceKey();
      const pending = [3, 4].map((seed) => chat(key, longWord(900_000, seed), { stream: true }).catch(() => undefined));
      await sleep(300); // the server is counting the two messages now
      const signalled = performance.now();
      const exited = server.stop();
      const outcome = await Promise.race([
        exited.then(() => 'exited' as const),
        sleep(SHUTDOWN_TIMEOUT_SECONDS * 1000 + scaled(6_000)).then(() => 'still running' as const),
      ]);
      expect(outcome).toBe('exited');
      expect(performance.now() - signalled).toBeLessThan(SHUTDOWN_TIMEOUT_SECONDS * 1000 + scaled(6_000));
      await Promise.all(pending);
    },
    scaled(60_000),
  );
});
