import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, testDatabaseKind } from '../helpers/db.ts';
import { runCliProcess, serverStorage, startServer, type ServerProcess } from '../helpers/server-process.ts';
import { scaled } from '../helpers/time-scale.ts';

const ADMIN = 'e2e-admin-key';

describe(`lagoon server process (${testDatabaseKind})`, () => {
  let dataDir: string;
  let env: Record<string, string>;
  let server: ServerProcess;
  let removeStorage: () => Promise<void>;

  beforeAll(async () => {
    const storage = await serverStorage('lagoon-e2e-');
    ({ dataDir, remove: removeStorage } = storage);
    env = { ...storage.env, LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN };
    server = await startServer(env);
  });

  afterAll(async () => {
    if (server.child.exitCode === null) await server.stop();
    await removeStorage();
  });

  const get = (path: string, key: string | null = ADMIN) =>
    fetch(`${server.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

  it('should serve REST and GraphQL over HTTP with the bootstrap key', async () => {
    const keys = await get('/api/v1/api_keys');
    expect(keys.status).toBe(200);
    expect(((await keys.json()) as { data: { last6Chars: string }[] }).data[0]?.last6Chars).toBe(ADMIN.slice(-6));
    const denied = await get('/api/v1/api_keys', null);
    expect(denied.status).toBe(401);
    expect(await denied.json()).toMatchObject({ code: 'AUTHENTICATION_FAILED', error: expect.any(String) });
    const gql = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ apiKeys { last6Chars } }' }),
    });
    expect(await gql.json()).toEqual({ data: { apiKeys: [{ last6Chars: ADMIN.slice(-6) }] } });
  });

  it('should let the operator CLI credit an account by key while the server runs', async () => {
    const balance = async () => {
      const list = await runCliProcess(['accounts', 'list', '--json'], env);
      expect(list.code, list.stderr).toBe(0);
      const accounts = JSON.parse(list.stdout) as { name: string; balancesDecimal: Record<string, string> }[];
      return accounts.find((a) => a.name === 'bootstrap')!.balancesDecimal.USD!;
    };
    const before = await balance();
    const credit = await runCliProcess(
      ['accounts', 'credit', '--key', ADMIN, '--currency', 'USD', '--amount', '5', '--json'],
      env,
    );
    expect(credit.code, credit.stderr).toBe(0);
    expect(JSON.parse(credit.stdout)).toMatchObject({ currency: 'USD', amount: 5, amountDecimal: '5' });
    const after = await balance();
    expect(Number(after) - Number(before)).toBe(5);
    const bad = await runCliProcess(
      ['accounts', 'credit', '--key', 'no-such-key', '--currency', 'USD', '--amount', '5'],
      env,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('No active API key matches');
  }, 90_000); // three CLI processes and a server start: slow on a loaded machine

  it(
    'should finish an in-flight request on SIGTERM, exit 0 and come back with its data',
    async () => {
      // A request whose body trickles in keeps the server busy while SIGTERM arrives.
      const url = new URL(`${server.url}/api/v1/api_keys`);
      const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          url,
          { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' } },
          (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.write('{"apiKeyType": "INFERENCE", ');
        setTimeout(() => req.end('"description": "drained"}'), 700);
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const exitCode = server.stop();
      const finished = await inFlight;
      expect(finished.status).toBe(200);
      expect(JSON.parse(finished.body)).toMatchObject({ success: true, data: { description: 'drained' } });
      expect(await exitCode).toBe(0);
      if (!TEST_DATABASE_URL) expect(existsSync(join(dataDir, 'lagoon.lock'))).toBe(false);

      server = await startServer(env);
      const keys = (await (await get('/api/v1/api_keys')).json()) as { data: { description: string }[] };
      expect(keys.data.map((k) => k.description)).toContain('drained');
      expect(server.output()).not.toContain('First start');
    },
    scaled(90_000),
  );
});
