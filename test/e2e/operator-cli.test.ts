import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { controlSocketPath, startControlSocket } from '../../src/cli/control-socket.ts';
import type { KeyInput } from '../../src/cli/key-input.ts';
import { runCli } from '../../src/cli/program.ts';
import { createLogger } from '../../src/logger.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { freePort } from '../helpers/free-port.ts';
import { runCliProcess } from '../helpers/server-process.ts';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

describe('operator CLI: help and --version need no database', () => {
  let env: Record<string, string>;
  beforeAll(async () => {
    // Nothing listens there: a CLI that connected first would fail instead of answering.
    env = { DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/lagoon` };
  });

  it('should print the help', async () => {
    const result = await runCliProcess(['--help'], env);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('Usage: lagoon');
    expect(result.stdout).toContain('accounts');
  });

  it("should print a command's help", async () => {
    const result = await runCliProcess(['accounts', 'credit', '--help'], env);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('Usage: lagoon accounts credit');
    expect(result.stdout).toContain('LAGOON_ADMIN_KEY');
  });

  it('should print the version', async () => {
    expect(await runCliProcess(['--version'], env)).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('should refuse an unknown command without connecting', async () => {
    const result = await runCliProcess(['acounts', 'list'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown command 'acounts'");
  });

  it('should connect for a command that acts (and fail here, as nothing listens)', async () => {
    const result = await runCliProcess(['accounts', 'list'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^lagoon: /);
  });
});

describe(`operator CLI: the key from LAGOON_ADMIN_KEY or stdin (${testDatabaseKind})`, () => {
  let t: TestApp;
  let accountId: string;
  let secret: string;

  beforeAll(async () => {
    t = await createTestApp();
    const created = await t.app.services.accounts.create(operator(), { name: 'cli keys' });
    accountId = created.account.id;
    secret = created.adminKey.secret;
  });
  afterAll(async () => t.close());

  const usd = async () =>
    (await t.app.services.accounts.list(operator()))
      .find((a) => a.id === accountId)
      ?.balances.find((b) => b.currency === 'USD')?.amount ?? 0n;

  const cli = async (argv: string[], keys?: KeyInput) => {
    let out = '';
    let err = '';
    const code = await runCli(argv, t.app.services, { out: (s) => (out += s), err: (s) => (err += s), keys });
    return { code, out, err };
  };

  it('should credit the account of LAGOON_ADMIN_KEY when neither --key nor --account is given', async () => {
    const before = await usd();
    const result = await cli(['accounts', 'credit', '--currency', 'USD', '--amount', '1', '--json'], {
      fromEnv: secret,
    });
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(result.out)).toMatchObject({ accountId, amountDecimal: '1' });
    expect(await usd()).toBe(before + 1_000_000_000n);
  });

  it('should prefer --account over LAGOON_ADMIN_KEY, and refuse a command with neither', async () => {
    const other = await t.app.services.accounts.create(operator(), { name: 'cli other' });
    const result = await cli(
      ['accounts', 'credit', '--account', other.account.id, '--currency', 'USD', '--amount', '2', '--json'],
      { fromEnv: secret },
    );
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(result.out)).toMatchObject({ accountId: other.account.id });

    const neither = await cli(['accounts', 'credit', '--currency', 'USD', '--amount', '2']);
    expect(neither.code).toBe(1);
    expect(neither.err).toContain('LAGOON_ADMIN_KEY');
  });

  it('should read the key from stdin for --key -', async () => {
    const result = await cli(['rpc-tier', '--key', '-', '--tier', 'staff', '--json'], {
      fromEnv: 'not-this-one',
      fromStdin: async () => secret,
    });
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(result.out)).toEqual({ accountId, rpcTier: 'staff' });

    const limits = await cli(['keys', 'rate-limits', '--key=-', '--rpm', '7', '--json'], {
      fromStdin: async () => secret,
    });
    expect(limits).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(limits.out)).toMatchObject({ rateLimits: { rpm: 7 } });

    expect((await cli(['rpc-tier', '--key', '-', '--tier', 'staff'])).err).toContain('no standard input');
  });

  describe('from a separate process, through a running server’s control socket', () => {
    let dataDir: string;
    let stop: () => Promise<void>;
    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'lagoon-cli-keys-'));
      stop = await startControlSocket(controlSocketPath(dataDir), t.app.services, createLogger('silent'));
    });
    afterAll(async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('should send LAGOON_ADMIN_KEY along, not the server’s own', async () => {
      const before = await usd();
      const result = await runCliProcess(['accounts', 'credit', '--currency', 'USD', '--amount', '3', '--json'], {
        LAGOON_DATA_DIR: dataDir,
        LAGOON_ADMIN_KEY: secret,
      });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(result.stdout)).toMatchObject({ accountId, amountDecimal: '3' });
      expect(await usd()).toBe(before + 3_000_000_000n);
    });

    it('should read --key - from its own stdin', async () => {
      const result = await runCliProcess(
        ['rpc-tier', '--key', '-', '--tier', 'standard', '--json'],
        { LAGOON_DATA_DIR: dataDir },
        `${secret}\n`,
      );
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(result.stdout)).toEqual({ accountId, rpcTier: 'standard' });
    });
  });
});
