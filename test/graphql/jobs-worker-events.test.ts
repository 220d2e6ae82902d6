import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultOperatorConfig } from '../../src/operator-config/default-config.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind, type TestDatabase } from '../helpers/db.ts';
import { listenLocally } from '../helpers/local-server.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * Live job status in the scale-out setup of docs/operations.md: an API server with LAGOON_JOB_WORKERS=false, a
 * separate `npm run worker` process (src/worker.ts), Redis between them. A graphql-sse client subscribed to
 * jobUpdated on the API's /graphql/stream hears every state the worker reaches: QUEUED → PROCESSING → progress →
 * COMPLETED. The engine is a queue API the test answers, so each state lasts until the subscriber has seen it.
 */

const REDIS_URL = process.env.REDIS_URL || undefined;
const skipReason =
  testDatabaseKind !== 'postgres'
    ? 'a worker process needs PostgreSQL (set TEST_DATABASE_URL)'
    : !REDIS_URL
      ? 'a worker process publishes through Redis (set REDIS_URL)'
      : undefined;
if (skipReason) console.warn(`jobs-worker-events.test.ts: skipped, ${skipReason}`);

const MP4 = Buffer.from('\u0000\u0000\u0000\u0018ftypmp42 a clip from the queue API');
const MODEL = 'lagoon-e2e-video';

type Phase = 'waiting' | 'running' | 'done';

/** A fal.ai-style queue API whose job stays in `phase` until the test moves it on. */
function gatedQueueApi() {
  const state = { phase: 'waiting' as Phase, submits: 0 };
  let base = '';
  const json = (res: ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    for await (const _chunk of req); // drain the body
    const url = req.url ?? '';
    if (req.method === 'POST') {
      state.submits += 1;
      return json(res, { request_id: `r${state.submits}` });
    }
    if (url.endsWith('/status'))
      return json(
        res,
        state.phase === 'waiting'
          ? { status: 'IN_QUEUE' }
          : state.phase === 'running'
            ? { status: 'IN_PROGRESS', progress: 40 }
            : { status: 'COMPLETED' },
      );
    if (url.startsWith('/files/')) {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return res.end(MP4);
    }
    return json(res, { video: { url: `${base}/files/clip.mp4` } });
  };
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

/** The operator file both processes read: the simulator's video model, made by the gated queue API. */
function operatorConfig(baseUrl: string) {
  const simulatorVideo = defaultOperatorConfig.models.find((model) => model.id === 'lagoon-sim-video')!;
  const { traits: _traits, ...model } = simulatorVideo as typeof simulatorVideo & { traits?: unknown };
  return {
    providers: [
      {
        id: 'e2e-queue',
        type: 'queue',
        baseUrl,
        apiKey: 'upstream-key',
        timeoutMs: 5_000,
        options: { pollIntervalMs: 50, progressField: 'progress' },
      },
    ],
    models: [{ ...model, id: MODEL, provider: 'e2e-queue' }],
  };
}

interface JobView {
  id: string;
  status: string;
  progress: number;
}

describe.skipIf(skipReason !== undefined)('jobUpdated with a separate worker process (PostgreSQL, Redis)', () => {
  const upstream = gatedQueueApi();
  let closeUpstream: () => Promise<void> = async () => undefined;
  let closeServer: () => Promise<void> = async () => undefined;
  let t: TestApp;
  let url: string;
  let dir: string;
  let configPath: string;
  let secret: string;
  let worker: ChildProcess | undefined;
  let client: Client | undefined;

  beforeAll(async () => {
    const listening = await upstream.start();
    closeUpstream = listening.close;
    dir = await mkdtemp(join(tmpdir(), 'lagoon-worker-events-'));
    configPath = join(dir, 'lagoon.json');
    await writeFile(configPath, JSON.stringify(operatorConfig(listening.url)));
    t = await createTestApp({
      LAGOON_JOB_WORKERS: 'false',
      LAGOON_CONFIG: configPath,
      LAGOON_MEDIA_DIR: join(dir, 'media'),
      REDIS_URL: REDIS_URL!,
    });
    ({ secret } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
    const server = createServer(t.app.nodeListener);
    const api = await listenLocally(server);
    url = api.url;
    closeServer = api.close;
  }, 120_000);
  afterAll(async () => {
    client?.dispose();
    if (worker && worker.exitCode === null && worker.signalCode === null) {
      const exited = new Promise((resolve) => worker!.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }
    await closeServer();
    await t?.close();
    await closeUpstream();
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('should stream QUEUED, PROCESSING, its progress and COMPLETED as the worker process reaches them', async () => {
    const queued = await t.graphql<{ queueVideo: { data: JobView } }>(
      `mutation($input: JSONObject!) { queueVideo(input: $input) {
        ... on MutationQueueVideoSuccess { data { id status progress } } ... on Error { code message } } }`,
      { input: { model: MODEL, prompt: 'elsewhere', duration: '5s', resolution: '480p' } },
      secret,
    );
    const job = queued.data!.queueVideo.data;
    expect(job.status).toBe('QUEUED');

    client = createClient({
      url: `${url}/graphql/stream`,
      headers: { authorization: `Bearer ${secret}` },
      fetchFn: fetch,
      retryAttempts: 0,
    });
    const events = client.iterate<{ jobUpdated: JobView }>({
      query: 'subscription($id: ID!) { jobUpdated(id: $id) { id status progress } }',
      variables: { id: job.id },
    });
    const seen: string[] = [];
    /** The next update, or a failure naming what was heard: the old worker published nothing after QUEUED. */
    const next = async (): Promise<JobView> => {
      let timer: NodeJS.Timeout | undefined;
      const silence = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no jobUpdated event after ${seen.join(' → ')}`)), 90_000);
      });
      try {
        const result = await Promise.race([events.next(), silence]);
        expect(result.done).toBe(false);
        const update = (result.value as { data: { jobUpdated: JobView } }).data.jobUpdated;
        seen.push(`${update.status} ${update.progress}`);
        return update;
      } finally {
        clearTimeout(timer);
      }
    };

    expect(await next()).toMatchObject({ status: 'QUEUED', progress: 0 });
    // The worker starts only now: every later state can only reach this subscriber through Redis.
    worker = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: (t.app.database as TestDatabase).url!,
        REDIS_URL: REDIS_URL!,
        LOG_LEVEL: 'silent',
        LAGOON_CONFIG: configPath,
        LAGOON_MEDIA_DIR: join(dir, 'media'),
        LAGOON_JOB_CONCURRENCY: '1',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    expect(await next()).toMatchObject({ status: 'PROCESSING', progress: 0 });
    upstream.state.phase = 'running';
    expect(await next()).toMatchObject({ status: 'PROCESSING', progress: 40 });
    upstream.state.phase = 'done';
    let last = await next();
    while (last.status === 'PROCESSING') last = await next();
    expect(last).toMatchObject({ status: 'COMPLETED', progress: 100 });
    expect((await events.next()).done).toBe(true);
    expect(upstream.state.submits).toBe(1);
  }, 240_000);
});
