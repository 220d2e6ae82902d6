import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderConfigSchema } from '../../src/operator-config/schema.ts';
import { QueueApiJobEngine } from '../../src/providers/jobs/queue-api.engine.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { listenLocally } from '../helpers/local-server.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';
import { jobInternals } from '../../src/media/jobs/job.wiring.ts';

/*
 * The generic queue-API engine (src/providers/jobs/queue-api.engine.ts) against a fal.ai-style fake the test
 * starts: submit → status (with progress) → result JSON naming the media URL → the MP4. Queued over HTTP like any
 * job: faults are retried and the job still completes and is charged once; a fault that never ends and a 4xx
 * refusal end FAILED, uncharged, the hold released.
 */

const MP4 = Buffer.from('\u0000\u0000\u0000\u0018ftypmp42 fake clip from the queue API');

/** The fake upstream: `faults` next requests answer 503, `refuse` makes submit answer 422. */
function fakeQueueApi() {
  const state = { faults: 0, refuse: false, submits: 0, polls: 0, requests: 0, bodies: [] as unknown[] };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    state.requests += 1;
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (state.faults > 0) {
      state.faults -= 1;
      return json(503, { detail: 'overloaded' });
    }
    const url = req.url ?? '';
    if (req.method === 'POST') {
      if (state.refuse) return json(422, { detail: 'prompt rejected' });
      state.submits += 1;
      state.bodies.push(JSON.parse(raw));
      return json(200, { request_id: `r${state.submits}` });
    }
    const status = /\/requests\/([^/]+)\/status$/.exec(url);
    if (status) {
      state.polls += 1;
      return state.polls % 2 === 1
        ? json(200, { status: 'IN_PROGRESS', progress: 50 })
        : json(200, { status: 'COMPLETED' });
    }
    const result = /\/requests\/([^/]+)$/.exec(url);
    if (result) return json(200, { video: { url: `${base}/files/${result[1]}.mp4` } });
    if (url.startsWith('/files/')) {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return res.end(MP4);
    }
    json(404, { detail: 'no route' });
  };
  let base = '';
  const server = createServer((req, res) => void handle(req, res));
  return {
    state,
    async start() {
      const listening = await listenLocally(server);
      base = listening.url;
      return listening;
    },
  };
}

describe(`queue-API job engine (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;
  let close: () => Promise<void> = async () => undefined;
  const upstream = fakeQueueApi();

  const post = (path: string, body: unknown) => t.call(`/api/v1${path}`, { body, key: secret });
  const usd = async () => (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
  const job = { model: 'lagoon-sim-video', prompt: 'through a queue API', duration: '5s', resolution: '480p' };

  /** Polls retrieve until the job is done; returns the final answer. */
  async function finished(queueId: string): Promise<Response> {
    let last: Response | undefined;
    await eventually(async () => {
      last = await post('/video/retrieve', { model: 'lagoon-sim-video', queue_id: queueId });
      const type = last.headers.get('content-type') ?? '';
      if (type.startsWith('application/json')) {
        const body = (await last.clone().json()) as { status: string };
        if (body.status !== 'FAILED') throw new Error(`still ${body.status}`);
      }
    }, scaled(60_000));
    return last!;
  }

  beforeAll(async () => {
    const listening = await upstream.start();
    close = listening.close;
    t = await createTestApp({ LAGOON_JOB_WORKERS: 'true', LAGOON_JOB_RETRIES: '1' });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '10' }, type: 'INFERENCE' }));
    // The simulator's models, made by the queue API instead.
    jobInternals(t.app.services.jobs.service).runner.engines.set(
      'simulator',
      new QueueApiJobEngine({
        id: 'simulator',
        type: 'queue',
        baseUrl: listening.url,
        apiKey: 'upstream-key',
        timeoutMs: 5_000,
        options: { pollIntervalMs: 20, retries: 2, retryBaseMs: 10, progressField: 'progress', authScheme: 'Key' },
      }),
    );
  }, scaled(120_000));
  afterAll(async () => {
    await t?.close();
    await close();
  });

  it(
    'should submit, poll, fetch the media and charge the quote once',
    async () => {
      const before = await usd();
      const queued = await post('/video/queue', job);
      expect(queued.status).toBe(200);
      const { queue_id } = (await queued.json()) as { queue_id: string };
      const done = await finished(queue_id);
      expect(done.headers.get('content-type')).toBe('video/mp4');
      expect(Buffer.from(await done.arrayBuffer())).toEqual(MP4);
      expect(upstream.state.bodies.at(-1)).toMatchObject({ prompt: job.prompt, duration: 5, resolution: '480p' });
      await eventually(async () =>
        expect(await usd()).toMatchObject({ amount: before.amount - 300_000_000n, reserved: 0n }),
      );
    },
    scaled(90_000),
  );

  it(
    'should retry upstream faults and still complete, charged once',
    async () => {
      const before = await usd();
      upstream.state.faults = 2; // within the engine's 2 retries of one call
      const { queue_id } = (await (await post('/video/queue', job)).json()) as { queue_id: string };
      const done = await finished(queue_id);
      expect(done.headers.get('content-type')).toBe('video/mp4');
      expect(upstream.state.faults).toBe(0);
      await eventually(async () =>
        expect(await usd()).toMatchObject({ amount: before.amount - 300_000_000n, reserved: 0n }),
      );
    },
    scaled(90_000),
  );

  it(
    'should fail a job whose upstream keeps failing: FAILED after its attempts, not charged, hold released',
    async () => {
      const before = await usd();
      const requestsBefore = upstream.state.requests;
      upstream.state.faults = Number.POSITIVE_INFINITY;
      try {
        const { queue_id } = (await (await post('/video/queue', job)).json()) as { queue_id: string };
        const done = await finished(queue_id);
        expect(await done.json()).toMatchObject({ status: 'FAILED' });
      } finally {
        upstream.state.faults = 0;
      }
      // 2 job attempts (LAGOON_JOB_RETRIES=1) × 3 tries of the submit call.
      expect(upstream.state.requests - requestsBefore).toBe(6);
      await eventually(async () => expect(await usd()).toEqual({ ...before, reserved: 0n }));
    },
    scaled(90_000),
  );

  it(
    'should fail a refused job at once, without a retry, not charged',
    async () => {
      const before = await usd();
      const requestsBefore = upstream.state.requests;
      upstream.state.refuse = true;
      try {
        const { queue_id } = (await (await post('/video/queue', job)).json()) as { queue_id: string };
        const done = await finished(queue_id);
        expect(await done.json()).toEqual({
          status: 'FAILED',
          error: 'The engine refused the job (HTTP 422)',
          average_execution_time: expect.any(Number),
          execution_duration: expect.any(Number),
        });
      } finally {
        upstream.state.refuse = false;
      }
      expect(upstream.state.requests - requestsBefore).toBe(1);
      await eventually(async () => expect(await usd()).toEqual({ ...before, reserved: 0n }));
    },
    scaled(90_000),
  );
});

describe('queue-API provider options in the operator config', () => {
  it('should refuse bad options when the config loads, naming the field', () => {
    const provider = { id: 'fal', type: 'queue', baseUrl: 'https://queue.example' };
    expect(ProviderConfigSchema.safeParse({ ...provider, options: { submitPath: '/{model}' } }).success).toBe(true);
    const bad = ProviderConfigSchema.safeParse({ ...provider, options: { pollIntervalMs: 'fast', retries: 99 } });
    expect(bad.error?.issues.map((issue) => issue.path.join('.')).sort()).toEqual([
      'options.pollIntervalMs',
      'options.retries',
    ]);
  });
});
