import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import { ADMIN_KEY, BASE } from '../helpers/app.ts';
import { scenarioAccount } from '../helpers/billing.ts';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../helpers/db.ts';
import { startDatabaseRelay, type DatabaseRelay } from '../helpers/db-relay.ts';

const suite = TEST_DATABASE_URL ? describe : describe.skip;

/*
 * Lagoon's connections to PostgreSQL are cut under it (a restart, a failover): requests that need the database get
 * a 503 in the error shape with Retry-After (a coded error on GraphQL), never a 500, and the process keeps running;
 * once the database is reachable again, the same requests succeed.
 */
suite('a lost database connection answers 503, not 500 (on PGlite skipped: needs TEST_DATABASE_URL)', () => {
  let database: TestDatabase;
  let link: DatabaseRelay;
  let app: App;
  let admin: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    link = await startDatabaseRelay(database.url!);
    const handle = await openDatabase({ url: link.url, poolSize: 4 });
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
      DATABASE_URL: link.url,
    });
    app = await createApp(config, { database: handle, logger: createLogger('silent') });
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });

  afterAll(async () => {
    await app?.close();
    await admin?.end();
    await link?.close();
    await database?.drop();
  });

  const call = (path: string, init: RequestInit = {}) =>
    app.fetch(
      new Request(`${BASE}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', ...init.headers },
      }),
    );
  const graphqlAccount = () =>
    call('/graphql', { method: 'POST', body: JSON.stringify({ query: '{ apiKeys { id } }' }) });

  it('should answer 503 SERVICE_UNAVAILABLE with Retry-After on REST and a coded error on GraphQL while the database is away', async () => {
    expect((await call('/api/v1/api_keys')).status).toBe(200);
    link.cut();
    try {
      const rest = await call('/api/v1/api_keys');
      expect(rest.status).toBe(503);
      expect(rest.headers.get('retry-after')).toBe('1');
      expect(await rest.json()).toEqual({ error: expect.any(String), code: 'SERVICE_UNAVAILABLE' });
      const graphql = (await (await graphqlAccount()).json()) as { errors?: { extensions?: { code?: string } }[] };
      expect(graphql.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
      const ready = await call('/readyz');
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ reason: 'database unreachable' });
    } finally {
      link.mend();
    }
    expect((await call('/api/v1/api_keys')).status).toBe(200);
    expect((await call('/readyz')).status).toBe(200);
  });

  it('should survive a backend ended inside a transaction, fail that transaction with 503, and send a read again', async () => {
    const db = app.database.db;
    const end = () =>
      admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
      );
    // Ended while the transaction holds its connection between two statements: pg-pool listens to no 'error' then.
    const transaction = db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      await end();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await sql`select 1`.execute(trx);
    });
    await expect(transaction).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    // A read whose backend is ended while it runs is sent again on a new connection.
    const slow = sql<{ one: number }>`select 1 as one from pg_sleep(0.5)`.execute(db);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await end();
    expect((await slow).rows).toEqual([{ one: 1 }]);
    // A write whose backend is ended while it runs is not sent again (its outcome is unknown): 503.
    // The expectation is attached before the backend is ended: the write may fail before end() returns, and a
    // rejection with no handler yet is reported as unhandled.
    const write = expect(
      sql`update instance_meta set value = value where pg_sleep(0.5) is not null`.execute(db),
    ).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await new Promise((resolve) => setTimeout(resolve, 150));
    await end();
    await write;
    expect((await call('/api/v1/api_keys')).status).toBe(200);
  });

  it('should write each settled charge once when the answer to a billing COMMIT is lost, and keep writing the next ones', async () => {
    const account = await scenarioAccount(app.services, 'lost-commit');
    const chat = async () => {
      const response = await call('/api/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${account.inferenceSecret}` },
        body: JSON.stringify({
          model: 'default',
          messages: [{ role: 'user', content: 'Hello' }],
          max_completion_tokens: 8,
        }),
      });
      expect(response.status).toBe(200);
      return response.headers.get('x-request-id')!;
    };
    const charges = async () => {
      await app.services.billing.flush(account.accountId);
      const { rows } = await admin.query<{ request_id: string; n: number }>(
        `select request_id, count(*)::int as n from account_ledger where account_id = $1 and type = 'CHARGE' group by 1`,
        [account.accountId],
      );
      return new Map(rows.map((row) => [row.request_id, row.n]));
    };
    const ids = [await chat(), await chat()];
    expect([...(await charges()).values()]).toEqual([1, 1]);
    // The batch writing the next charges commits, but its answer never arrives.
    const lost = link.loseNextCommitAfter('lagoon_batch_claim_and_lock');
    ids.push(await chat(), await chat());
    await lost;
    ids.push(await chat());
    const written = await charges();
    expect(ids.map((id) => written.get(id) ?? 0)).toEqual([1, 1, 1, 1, 1]);
    expect(written.size).toBe(ids.length);
    // The account's money adds up: balance change = charges = usage entries, and what leases hold matches the rows.
    const { rows } = await admin.query<{ ledger: string; usage: string; reserved: string; held: string }>(
      `select (select sum(amount)::text from account_ledger where account_id = $1 and type = 'CHARGE') as ledger,
        (select sum(amount)::text from usage_entries where account_id = $1) as usage,
        (select sum(reserved)::text from balances where account_id = $1) as reserved,
        (select sum(amount)::text from reservations where account_id = $1 and status = 'held') as held`,
      [account.accountId],
    );
    expect(rows[0]!.usage).toBe(rows[0]!.ledger);
    expect(rows[0]!.reserved).toBe(rows[0]!.held);
  });
});
