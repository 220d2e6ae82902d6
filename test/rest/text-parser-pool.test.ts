import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TextParserService, type TextParserOptions } from '../../src/augment/text-parser.service.ts';
import { createLogger } from '../../src/logger.ts';
import { BASE, createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { fundedAccount } from '../helpers/uploads.ts';
import { scaled } from '../helpers/time-scale.ts';

const PATH = '/api/v1/augment/text-parser';
const HANGING_WORKER = new URL('../fixtures/hanging-extract-worker.js', import.meta.url);
/** A document starting with this never finishes in that worker (not imported: the module runs only as a worker). */
const HANG_MARKER = 'LAGOON-TEST-HANG';

type Account = Awaited<ReturnType<typeof fundedAccount>>;

interface Answer {
  status: number;
  body: { text?: string; error?: string; code?: string };
  retryAfter: string | null;
  ms: number;
}

// The pool's fairness, seen over HTTP: documents that never finish (a worker that spins on a marker, standing for
// a document a library loops on) must not hold up other callers, nor hold one caller's requests for minutes.
describe(`text parser pool: budget, per-account cap and queue timeout (${testDatabaseKind})`, () => {
  let t: TestApp;
  let parser: TextParserService | undefined;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await parser?.close();
    await t.close();
  });

  /** Serves the route from a parser with these options whose workers hang on the marker. */
  async function useParser(options: Partial<TextParserOptions>): Promise<void> {
    await parser?.close();
    parser = new TextParserService({
      billing: t.app.services.billing,
      logger: createLogger('silent'),
      options: { ...options, workerUrl: HANGING_WORKER },
    });
    Object.assign(t.app.services, { textParser: parser });
  }

  async function upload(account: Account, content: string): Promise<Answer> {
    const started = performance.now();
    const form = new FormData();
    form.append('file', new Blob([content]), 'doc.txt');
    const response = await t.app.fetch(
      new Request(`${BASE}${PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.secret}` },
        body: form,
      }),
    );
    return {
      status: response.status,
      body: (await response.json()) as Answer['body'],
      retryAfter: response.headers.get('retry-after'),
      ms: performance.now() - started,
    };
  }

  const bad = (n: number) => `${HANG_MARKER} bad document ${n}`;
  const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  async function expectUncharged(account: Account, usd: bigint): Promise<void> {
    const balance = await account.balance();
    expect(balance).toMatchObject({ amount: usd, reserved: 0n });
  }

  it(
    'should answer a small document promptly while two bad ones occupy workers, then stop the bad ones at the budget',
    async () => {
      await useParser({ size: 3, perAccount: 2, timeoutMs: 10_000, queueTimeoutMs: 30_000 });
      const [flooder, other] = [await fundedAccount(t, '1'), await fundedAccount(t, '1')];
      const badAnswers = [upload(flooder, bad(1)), upload(flooder, bad(2))];
      let badDone = 0;
      for (const answer of badAnswers) void answer.then(() => (badDone += 1));
      await settle(500);
      const small = await upload(other, 'a small document');
      expect(small.status, JSON.stringify(small.body)).toBe(200);
      expect(small.body.text).toBe('a small document');
      expect(badDone, 'the bad documents were still running when the small one was answered').toBe(0);
      // The bad ones end at their 10 s budget (generous bound: not minutes), refused with 400 and not charged.
      for (const answer of await Promise.all(badAnswers)) {
        expect(answer.status, JSON.stringify(answer.body)).toBe(400);
        expect(answer.body).toMatchObject({
          code: 'INVALID_REQUEST',
          error: expect.stringMatching(/took longer than 10 s/),
        });
        expect(answer.ms).toBeLessThan(10_000 + scaled(15_000));
      }
      await expectUncharged(flooder, 1_000_000_000n);
      await expectUncharged(other, 990_000_000n);
    },
    scaled(60_000),
  );

  it(
    'should answer 503 SERVICE_UNAVAILABLE with Retry-After when no worker comes free within the queue timeout',
    async () => {
      await useParser({ size: 1, perAccount: 2, timeoutMs: 30_000, queueTimeoutMs: 1_000 });
      const [flooder, other] = [await fundedAccount(t, '1'), await fundedAccount(t, '1')];
      const badAnswer = upload(flooder, bad(3));
      await settle(500);
      const waited = await upload(other, 'waits for the only worker');
      expect(waited.status, JSON.stringify(waited.body)).toBe(503);
      expect(waited.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', error: expect.any(String) });
      // When the running parse must end by: at most its 30 s budget.
      expect(Number(waited.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(waited.retryAfter)).toBeLessThanOrEqual(30);
      // Refused at the queue timeout, long before the running parse's 30 s budget ends.
      expect(waited.ms).toBeLessThan(Math.min(scaled(10_000), 25_000));
      await expectUncharged(other, 1_000_000_000n);
      await parser?.close();
      expect((await badAnswer).status).toBe(400);
      await expectUncharged(flooder, 1_000_000_000n);
    },
    scaled(60_000),
  );

  it(
    'should hold one account to its cap (429 with Retry-After after the queue timeout) while others are served',
    async () => {
      await useParser({ size: 3, perAccount: 1, timeoutMs: 30_000, queueTimeoutMs: 1_000 });
      const [flooder, other] = [await fundedAccount(t, '1'), await fundedAccount(t, '1')];
      const badAnswer = upload(flooder, bad(4));
      await settle(500);
      const [second, others] = await Promise.all([
        upload(flooder, 'the same account again'),
        upload(other, 'another account'),
      ]);
      expect(second.status, JSON.stringify(second.body)).toBe(429);
      expect(second.body).toMatchObject({
        code: 'RATE_LIMIT_EXCEEDED',
        error: expect.stringMatching(/1 documents? being parsed/),
      });
      expect(Number(second.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(others.status, JSON.stringify(others.body)).toBe(200);
      await parser?.close();
      expect((await badAnswer).status).toBe(400);
      await expectUncharged(flooder, 1_000_000_000n);
    },
    scaled(60_000),
  );

  it(
    'should stop a bad document within a short budget, replace its worker and charge nothing',
    async () => {
      // A budget roomy enough that a fresh worker's first small document fits it on a loaded host.
      await useParser({ size: 1, perAccount: 2, timeoutMs: 5_000, queueTimeoutMs: 10_000 });
      const account = await fundedAccount(t, '1');
      const answer = await upload(account, bad(5));
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.error).toMatch(/took longer than 5 s/);
      expect(answer.ms).toBeLessThan(20_000);
      await expectUncharged(account, 1_000_000_000n);
      const next = await upload(account, 'served by a fresh worker');
      expect(next.status, JSON.stringify(next.body)).toBe(200);
    },
    scaled(60_000),
  );
});
