import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { ADMIN_KEY, BASE } from '../helpers/app.ts';
import { createTestDatabase, testDatabaseKind } from '../helpers/db.ts';
import { slow, startBrave, startSearxng, status, type FakeUpstream } from '../helpers/search-upstreams.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * The privacy promise of docs/api.md: the service does not store or log queries. Every search path (success on both
 * upstreams, REST and GraphQL, upstream errors, a timeout, validation failures, an anonymous caller) runs with a
 * unique probe in the query while every log line is captured at trace level; afterwards the probe must appear in
 * no log line and in no row of any table of the database.
 */

const TOKEN = 'BSA-privacy-token';
const PROBE = `zqprobe${randomBytes(8).toString('hex')}`;
const QUERY = `where does ${PROBE} hide`;

describe(`web search privacy: the query is neither logged nor stored (${testDatabaseKind})`, () => {
  let searxng: FakeUpstream;
  let brave: FakeUpstream;
  let dir: string;
  let app: App;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const logLines: string[] = [];

  const call = (path: string, body: unknown, key: string | null) =>
    app.fetch(
      new Request(`${BASE}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify(body),
      }),
    );

  beforeAll(async () => {
    [searxng, brave] = await Promise.all([startSearxng(), startBrave(TOKEN)]);
    dir = await mkdtemp(join(tmpdir(), 'lagoon-privacy-'));
    const path = join(dir, 'operator.json');
    await writeFile(
      path,
      JSON.stringify({
        providers: [
          { id: 'searx', type: 'searxng', baseUrl: searxng.url, timeoutMs: 1_500 },
          { id: 'brave-api', type: 'brave', baseUrl: brave.url, apiKey: TOKEN, timeoutMs: 1_500 },
        ],
        search: { brave: 'brave-api', google: 'searx' },
      }),
    );
    database = await createTestDatabase();
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'trace',
      LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
      LAGOON_CONFIG: path,
    });
    const logger = createLogger('trace', { write: (line: string) => void logLines.push(line) });
    app = await createApp(config, { database, logger });
  });
  afterAll(async () => {
    await app.close();
    await database.drop();
    await Promise.all([searxng.close(), brave.close(), rm(dir, { recursive: true, force: true })]);
  });

  it('should leave no trace of the query in the logs or in any table', async () => {
    const { secret } = await createAccountWithKey(app.services, { credit: { USD: '1' }, type: 'INFERENCE' });
    const poor = await createAccountWithKey(app.services, { type: 'INFERENCE' });
    const statuses: number[] = [];
    const rest = async (body: unknown, key: string | null = secret) =>
      statuses.push((await call('/api/v1/augment/search', body, key)).status);
    const graphql = async (query: string, variables: Record<string, unknown>) =>
      statuses.push((await call('/graphql', { query, variables }, secret)).status);

    await rest({ query: QUERY });
    await rest({ query: QUERY, search_provider: 'google', limit: 20 });
    await graphql('mutation($q: String!) { search(input: { query: $q, searchProvider: GOOGLE }) { __typename } }', {
      q: QUERY,
    });
    await graphql(`mutation { search(input: { query: "${QUERY}" }) { __typename } }`, {});
    searxng.queue(status(500), status(500));
    await rest({ query: QUERY, search_provider: 'google' });
    brave.queue(status(401, { type: 'ErrorResponse', error: { code: 'SUBSCRIPTION_TOKEN_INVALID' } }));
    await rest({ query: QUERY });
    brave.queue(slow(5_000)); // well past the 1.5 s timeout, which leaves room for a loaded machine
    await rest({ query: QUERY });
    await rest({ query: `${QUERY} ${'x'.repeat(400)}` });
    await rest({ query: QUERY, limit: 99 });
    await rest({ query: QUERY, search_provider: PROBE });
    await rest({ query: QUERY }, poor.secret);
    await rest({ query: QUERY }, null);
    expect(statuses).toEqual([200, 200, 200, 200, 502, 502, 504, 400, 400, 400, 402, 402]);

    // The probe did travel: the upstreams saw it, and the capture saw the requests and the failures.
    expect(
      [...brave.requests, ...searxng.requests].filter((r) => r.params.get('q')?.includes(PROBE)).length,
    ).toBeGreaterThanOrEqual(8);
    const logText = logLines.join('');
    expect(logText).toContain('"msg":"request"');
    expect(logText).toContain('search upstream failed');
    expect(logText).toMatch(/"level":20/); // debug lines were captured too (GraphQL), not only info and above
    expect(logText).not.toContain(PROBE);

    const tables = await sql<{ schema: string; name: string }>`
      select table_schema as schema, table_name as name from information_schema.tables
      where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`.execute(
      app.database.db,
    );
    expect(tables.rows.map((t) => t.name)).toEqual(
      expect.arrayContaining(['usage_entries', 'reservations', 'account_ledger']),
    );
    const textColumns = await sql<{ schema: string; name: string; column: string }>`
      select table_schema as schema, table_name as name, column_name as column from information_schema.columns
      where table_schema not in ('pg_catalog', 'information_schema')
        and data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'USER-DEFINED', 'bytea')`.execute(
      app.database.db,
    );
    expect(textColumns.rows.length).toBeGreaterThan(10);

    let dumped = '';
    for (const table of tables.rows) {
      // Every column of every row, as Postgres prints a whole row (text, json, arrays, bytea in hex).
      const rows = await sql<{
        row: string;
      }>`select t::text as row from ${sql.table(`${table.schema}.${table.name}`)} as t`.execute(app.database.db);
      dumped += rows.rows.map((r) => r.row).join('\n');
      for (const { column } of textColumns.rows.filter((c) => c.schema === table.schema && c.name === table.name)) {
        const values = await sql<{
          value: string | null;
        }>`select ${sql.ref(column)}::text as value from ${sql.table(`${table.schema}.${table.name}`)}`.execute(
          app.database.db,
        );
        for (const { value } of values.rows) expect(value ?? '', `${table.name}.${column}`).not.toContain(PROBE);
      }
    }
    expect(dumped).toContain('augment-web-search'); // the successful searches were recorded, without their query
    expect(dumped).not.toContain(PROBE);
    expect(dumped).not.toContain(encodeURIComponent(QUERY));
  });
});
