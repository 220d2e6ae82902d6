import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createServerAdapter } from '@whatwg-node/server';
import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/providers/jobs/job-engine.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { ffprobePath } from '../helpers/audio.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';
import { jobInternals } from '../../src/media/jobs/job.wiring.ts';

/*
 * Queued jobs through GraphQL: the quote equals REST's, queueVideo returns the Job, jobUpdated (graphql-sse on a
 * real server) sees QUEUED → PROCESSING → COMPLETED and the media URL serves an MP4; another account sees nothing.
 */

const run = promisify(execFile);
const REDIS_URL = process.env.REDIS_URL || undefined;
const VIDEO = { model: 'lagoon-sim-video', prompt: 'a lagoon at dawn', duration: '5s', resolution: '480p' };

interface JobView {
  id: string;
  status: string;
  progress: number;
  quote: string;
  media: { url: string; contentType: string; byteSize: number } | null;
}
const JOB_FIELDS = 'id kind model status progress quote error createdAt media { url contentType byteSize }';

async function probeDuration(bytes: Buffer): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'lagoon-gql-probe-'));
  try {
    const file = join(dir, 'clip.mp4');
    await writeFile(file, bytes);
    const { stdout } = await run(ffprobePath(), [
      '-v',
      'error',
      '-show_entries',
      'format=duration',
      '-of',
      'json',
      file,
    ]);
    return Number((JSON.parse(stdout) as { format: { duration: string } }).format.duration);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
};

describe(`GraphQL queued jobs (${testDatabaseKind}, ${REDIS_URL ? 'Redis' : 'in-process'} events)`, () => {
  let t: TestApp;
  let server: Server;
  let url: string;
  let secret: string;
  const clients: Client[] = [];
  const sse = (key: string) => {
    const client = createClient({
      url: `${url}/graphql/stream`,
      headers: { authorization: `Bearer ${key}` },
      fetchFn: fetch,
      retryAttempts: 0,
    });
    clients.push(client);
    return client;
  };
  const queueVideo = async (input: unknown, key = secret) =>
    t.graphql<{ queueVideo: { __typename: string; data?: JobView; code?: string } }>(
      `mutation($input: JSONObject!) { queueVideo(input: $input) { __typename
        ... on MutationQueueVideoSuccess { data { ${JOB_FIELDS} } } ... on Error { code message } } }`,
      { input },
      key,
    );

  beforeAll(async () => {
    t = await createTestApp({
      LAGOON_JOB_WORKERS: 'true',
      LAGOON_JOB_RETRIES: '1',
      ...(REDIS_URL ? { REDIS_URL } : {}),
    });
    ({ secret } = await createAccountWithKey(t.app.services, { credit: { USD: '10' }, type: 'INFERENCE' }));
    server = createServer(createServerAdapter((request: Request) => t.app.fetch(request)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, scaled(120_000));
  afterAll(async () => {
    for (const client of clients) client.dispose();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await t?.close();
  });

  it('should quote what REST quotes', async () => {
    const rest = (await (await t.call('/api/v1/video/quote', { body: VIDEO, key: secret })).json()) as {
      quote: number;
    };
    const gql = await t.graphql<{ quoteVideo: { data: number } }>(
      'query($input: JSONObject!) { quoteVideo(input: $input) { ... on QueryQuoteVideoSuccess { data } } }',
      { input: VIDEO },
      secret,
    );
    expect(gql.errors).toBeUndefined();
    expect(gql.data?.quoteVideo.data).toBe(rest.quote);
  });

  it('should refuse bad input with a ValidationError naming the field', async () => {
    const result = await t.graphql<{ queueVideo: { __typename: string; issues: { path: string[] }[] } }>(
      `mutation($input: JSONObject!) { queueVideo(input: $input) { __typename ... on ValidationError { issues { path } } } }`,
      { input: { ...VIDEO, duration: 'forever' } },
      secret,
    );
    expect(result.data?.queueVideo.__typename).toBe('ValidationError');
    expect(result.data?.queueVideo.issues.map((issue) => issue.path.join('.'))).toContain('duration');
  });

  it(
    'should stream QUEUED, PROCESSING and COMPLETED with a media URL serving the MP4',
    async () => {
      const { runner } = jobInternals(t.app.services.jobs.service);
      // Gates keep each state long enough to be seen, on any machine: the worker waits to claim, the engine to run.
      const claim = gate();
      const render = gate();
      const originalRun = runner.run.bind(runner);
      runner.run = async (...args) => {
        await claim.opened;
        return originalRun(...args);
      };
      const simulator = runner.engines.get('simulator')!;
      const gated: JobEngine = Object.assign(Object.create(simulator) as JobEngine, {
        run: async (...args: Parameters<JobEngine['run']>) => {
          await render.opened;
          return simulator.run(...args);
        },
      });
      runner.engines.set('simulator', gated);
      try {
        const queued = await queueVideo(VIDEO);
        const job = queued.data!.queueVideo.data!;
        expect(job).toMatchObject({ status: 'QUEUED', media: null, quote: '0.3' });

        const events = sse(secret).iterate<{ jobUpdated: JobView }>({
          query: `subscription($id: ID!) { jobUpdated(id: $id) { ${JOB_FIELDS} } }`,
          variables: { id: job.id },
        });
        const next = async () => {
          const result = await events.next();
          expect(result.done).toBe(false);
          return (result.value as { data: { jobUpdated: JobView } }).data.jobUpdated;
        };
        expect((await next()).status).toBe('QUEUED');
        claim.open();
        // A Redis subscription is set up asynchronously: nudges make the watcher read the row again until it sees it.
        const nudge = setInterval(
          () => t.app.services.events.publish('lagoon:job', job.id, { status: 'NUDGE', progress: 0 }),
          250,
        );
        let current: JobView;
        try {
          current = await next();
          expect(current.status).toBe('PROCESSING');
          render.open();
          while (current.status === 'PROCESSING') current = await next();
        } finally {
          clearInterval(nudge);
        }
        expect(current.status).toBe('COMPLETED');
        expect(current.progress).toBe(100);
        expect(current.media?.contentType).toBe('video/mp4');
        expect((await events.next()).done).toBe(true);

        const download = await fetch(new URL(current.media!.url, url));
        expect(download.status).toBe(200);
        const bytes = Buffer.from(await download.arrayBuffer());
        expect(bytes.byteLength).toBe(current.media!.byteSize);
        expect(await probeDuration(bytes)).toBeCloseTo(5, 0);

        const listed = await t.graphql<{ jobs: { edges: { node: { id: string; status: string } }[] } }>(
          'query { jobs(first: 5, status: COMPLETED) { edges { node { id status } } } }',
          {},
          secret,
        );
        expect(listed.data?.jobs.edges.map((edge) => edge.node)).toContainEqual({ id: job.id, status: 'COMPLETED' });
      } finally {
        claim.open();
        render.open();
        runner.run = originalRun;
        runner.engines.set('simulator', simulator);
      }
    },
    scaled(180_000),
  );

  it(
    'should not show or stream a job to another account',
    async () => {
      const job = (await queueVideo(VIDEO)).data!.queueVideo.data!;
      const other = await createAccountWithKey(t.app.services, { credit: { USD: '1' }, type: 'INFERENCE' });
      const read = await t.graphql<{ job: JobView | null }>(
        'query($id: ID!) { job(id: $id) { id } }',
        { id: job.id },
        other.secret,
      );
      expect(read.errors).toBeUndefined();
      expect(read.data?.job).toBeNull();
      const listed = await t.graphql<{ jobs: { edges: unknown[] } }>(
        'query { jobs(first: 10) { edges { cursor } } }',
        {},
        other.secret,
      );
      expect(listed.data?.jobs.edges).toEqual([]);

      const events = sse(other.secret).iterate<{ jobUpdated: JobView }>({
        query: 'subscription($id: ID!) { jobUpdated(id: $id) { id status } }',
        variables: { id: job.id },
      });
      const first = await events.next();
      const value = first.value as { data?: unknown; errors?: { message: string }[] } | undefined;
      expect(first.done ? undefined : (value?.data ?? null)).toBeNull();
      expect(value?.errors?.[0]?.message).toMatch(/No such job/);
    },
    scaled(120_000),
  );

  it(
    'should end the stream with FAILED and its error when the engine keeps failing',
    async () => {
      const { engines } = jobInternals(t.app.services.jobs.service).runner;
      const simulator = engines.get('simulator')!;
      engines.set('simulator', {
        id: 'simulator',
        simulated: true,
        run: () => Promise.reject(new Error('engine exploded')),
      });
      try {
        const job = (await queueVideo({ ...VIDEO, prompt: 'doomed' })).data!.queueVideo.data!;
        const events = sse(secret).iterate<{ jobUpdated: JobView & { error: string | null } }>({
          query: `subscription($id: ID!) { jobUpdated(id: $id) { ${JOB_FIELDS} } }`,
          variables: { id: job.id },
        });
        const seen: (JobView & { error: string | null })[] = [];
        for await (const event of events) seen.push(event.data!.jobUpdated);
        const last = seen.at(-1)!;
        expect(last).toMatchObject({ status: 'FAILED', media: null });
        expect(last.error).toBeTruthy();
        expect(last.error).not.toContain('exploded');
      } finally {
        engines.set('simulator', simulator);
      }
    },
    scaled(150_000),
  );

  it(
    'should page the caller’s jobs newest first',
    async () => {
      const ids: string[] = [];
      type Page = { jobs: { edges: { cursor: string; node: { id: string } }[]; pageInfo: { hasNextPage: boolean } } };
      let after: string | null = null;
      for (let page = 0; page < 10; page += 1) {
        const result: Awaited<ReturnType<typeof t.graphql<Page>>> = await t.graphql<Page>(
          'query($after: String) { jobs(first: 1, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage } } }',
          { after },
          secret,
        );
        const connection = result.data!.jobs;
        ids.push(...connection.edges.map((edge) => edge.node.id));
        if (!connection.pageInfo.hasNextPage) break;
        after = connection.edges.at(-1)!.cursor;
      }
      const all = await t.graphql<{ jobs: { edges: { node: { id: string } }[] } }>(
        'query { jobs(first: 100) { edges { node { id } } } }',
        {},
        secret,
      );
      expect(ids).toEqual(all.data!.jobs.edges.map((edge) => edge.node.id));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeGreaterThanOrEqual(3);
    },
    scaled(60_000),
  );
});
