import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_ENTRY } from '../../build.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind, type TestDatabase } from '../helpers/db.ts';
import { GATED_MODEL, gatedQueueApi } from '../helpers/gated-queue-api.ts';
import { listenLocally } from '../helpers/local-server.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';

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
    dir = await mkdtemp(join(tmpdir(), 'lagoon-worker-events-'));
    configPath = join(dir, 'lagoon.json');
    closeUpstream = (await upstream.start(configPath)).close;
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
  }, scaled(120_000));
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
  }, scaled(60_000));

  it(
    'should stream QUEUED, PROCESSING, its progress and COMPLETED as the worker process reaches them',
    async () => {
      const queued = await t.graphql<{ queueVideo: { data: JobView } }>(
        `mutation($input: JSONObject!) { queueVideo(input: $input) {
        ... on MutationQueueVideoSuccess { data { id status progress } } ... on Error { code message } } }`,
        { input: { model: GATED_MODEL, prompt: 'elsewhere', duration: '5s', resolution: '480p' } },
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
      worker = spawn(process.execPath, [WORKER_ENTRY], {
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
    },
    scaled(240_000),
  );
});
