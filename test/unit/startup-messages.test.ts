import { describe, expect, it } from 'vitest';
import { checkConnection, connectionTarget, describeConnectFailure } from '../../src/db/connect-failure.ts';
import { DatabaseUnavailableError } from '../../src/errors.ts';
import { isPublicHost, missingPublicSettings } from '../../src/public-settings.ts';

const URL = 'postgres://app:hunter2@db.internal:6543/lagoon_prod';
const failure = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('the message of a start that cannot reach PostgreSQL', () => {
  it('reads host, port, user and database from the URL, with pg’s defaults', () => {
    expect(connectionTarget(URL)).toEqual({ host: 'db.internal', port: '6543', user: 'app', database: 'lagoon_prod' });
    expect(connectionTarget('postgres://bob@localhost')).toMatchObject({
      host: 'localhost',
      port: '5432',
      database: 'bob',
    });
    expect(connectionTarget('postgres://[::1]:5433/x')).toMatchObject({ host: '::1', port: '5433' });
  });

  it.each([
    ['ECONNREFUSED', 'Check that PostgreSQL is running'],
    ['ENOTFOUND', 'the host name db.internal does not resolve'],
    ['ETIMEDOUT', 'does not answer'],
    ['28P01', 'PostgreSQL refused user "app". Check the user and password'],
    ['3D000', 'database "lagoon_prod" does not exist on db.internal:6543. Create it (createdb lagoon_prod)'],
    ['53300', 'no connection slot left'],
  ])('%s: names where, the code and what to check, never the password', (code, advice) => {
    const { message } = describeConnectFailure(URL, failure(code));
    expect(message).toContain('Cannot connect to PostgreSQL at db.internal:6543 (database "lagoon_prod", user "app")');
    expect(message).toContain(code);
    expect(message.toLowerCase()).toContain(advice.toLowerCase());
    expect(message).not.toContain('hunter2');
  });

  it('takes the code from the first of several addresses tried (localhost: ::1 and 127.0.0.1)', () => {
    const aggregate = Object.assign(new AggregateError([failure('ECONNREFUSED')], ''), {});
    expect(describeConnectFailure(URL, aggregate).code).toBe('ECONNREFUSED');
  });

  it('looks under the pool’s "database unavailable" for the driver’s error, and gives up after the timeout', async () => {
    const wrapped = new DatabaseUnavailableError({ cause: failure('ECONNREFUSED', 'connect ECONNREFUSED') });
    await expect(checkConnection(URL, () => Promise.reject(wrapped))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    const never = () => new Promise(() => undefined);
    await expect(checkConnection(URL, never, 50)).rejects.toMatchObject({
      code: 'ETIMEDOUT',
      message: expect.stringContaining('no answer within 0.05 s'),
    });
    await expect(checkConnection(URL, () => Promise.resolve())).resolves.toBeUndefined();
  });
});

describe('the settings a public deployment sets', () => {
  const base = { host: '127.0.0.1', corsOrigins: [], signInSource: 'listen address' as const, productionSet: false };

  it('tells loopback from public listen addresses', () => {
    for (const host of ['127.0.0.1', '127.0.1.1', 'localhost', '::1', '[::1]'])
      expect(isPublicHost(host), host).toBe(false);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'api.example.com']) expect(isPublicHost(host), host).toBe(true);
  });

  it('asks nothing of a developer’s loopback server', () => {
    expect(missingPublicSettings({ ...base, corsOrigins: ['*'] })).toEqual([]);
  });

  it('names each missing variable when listening beyond loopback or with NODE_ENV=production', () => {
    const names = (input: Parameters<typeof missingPublicSettings>[0]) =>
      missingPublicSettings(input).map((setting) => setting.env);
    expect(names({ ...base, host: '0.0.0.0' })).toEqual(['LAGOON_PUBLIC_URL (or LAGOON_SIWE_DOMAINS)']);
    expect(names({ ...base, productionSet: true, corsOrigins: ['*'] })).toEqual([
      'LAGOON_PUBLIC_URL (or LAGOON_SIWE_DOMAINS)',
      'CORS_ORIGINS',
    ]);
    expect(
      names({ ...base, host: '0.0.0.0', signInSource: 'LAGOON_PUBLIC_URL', corsOrigins: ['https://a.example'] }),
    ).toEqual([]);
  });
});
