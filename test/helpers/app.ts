import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { Logger } from '../../src/logger.ts';
import { testLogger } from './test-logs.ts';
import { createTestDatabase } from './db.ts';

import { ADMIN_KEY } from './admin-key.ts';

export { ADMIN_KEY };
export const BASE = 'http://lagoon.test';

export interface TestApp {
  app: App;
  /** A request to the in-process fetch handler; `key` sets the Bearer header, `body` is sent as JSON. */
  call(
    path: string,
    init?: { method?: string; key?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  /** A GraphQL operation; returns the parsed body. */
  graphql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    key?: string | null,
  ): Promise<{ data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] }>;
  close(): Promise<void>;
}

/** The whole app in-process on a fresh database, with a known bootstrap ADMIN key. */
export async function createTestApp(
  env: Record<string, string> = {},
  options: { logger?: Logger } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  // Media files (the default local store) go to a directory of this app's own, removed on close.
  const mediaDir = env.LAGOON_MEDIA_DIR ? undefined : await mkdtemp(join(tmpdir(), 'lagoon-test-media-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
    // Job workers poll the database; only the job suites turn them on.
    LAGOON_JOB_WORKERS: 'false',
    // The suite keeps the cores busy itself: under SCHED_IDLE (the default) many pictures would first wait out a
    // starvation window (src/media/images/picture-priority.ts). LAGOON_IMAGE_PRIORITY=idle tests the default.
    LAGOON_IMAGE_PRIORITY: process.env.LAGOON_IMAGE_PRIORITY ?? 'low',
    ...(mediaDir && { LAGOON_MEDIA_DIR: mediaDir }),
    ...env,
  });
  const app = await createApp(config, { database, logger: options.logger ?? testLogger() });
  const call: TestApp['call'] = (path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    const key = init.key === undefined ? ADMIN_KEY : init.key;
    if (key) headers.authorization = `Bearer ${key}`;
    if (init.body !== undefined) headers['content-type'] ??= 'application/json';
    return app.fetch(
      new Request(`${BASE}${path}`, {
        method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
        headers,
        ...(init.body !== undefined
          ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }
          : {}),
      }),
    );
  };
  return {
    app,
    call,
    async graphql<T>(query: string, variables?: Record<string, unknown>, key?: string | null) {
      const response = await call('/graphql', {
        body: { query, variables },
        key,
        headers: { accept: 'application/graphql-response+json, application/json' },
      });
      return (await response.json()) as {
        data?: T;
        errors?: { message: string; extensions?: Record<string, unknown> }[];
      };
    },
    async close() {
      await app.close();
      await database.drop();
      if (mediaDir) await rm(mediaDir, { recursive: true, force: true });
    },
  };
}
