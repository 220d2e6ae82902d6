import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_ENTRY } from '../../build.ts';
import { freePort } from '../helpers/free-port.ts';
import { childEnv, ROOT, shortLivedNode } from '../helpers/server-process.ts';

describe('lagoon start with an operator config file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lagoon-badconfig-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const start = async (configPath: string) => {
    const child = spawn(process.execPath, shortLivedNode(SERVER_ENTRY), {
      cwd: ROOT,
      env: childEnv({ PORT: String(await freePort()), LAGOON_DATA_DIR: join(dir, 'data'), LAGOON_CONFIG: configPath }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    return { code, output };
  };

  it('should refuse to start on an invalid file and name every bad path', async () => {
    const path = join(dir, 'bad.yaml');
    writeFileSync(
      path,
      [
        'models:',
        '  - id: broken',
        '    type: text',
        '    name: Broken',
        '    provider: nowhere',
        '    pricing: { input: { usd: "cheap" }, output: { usd: 1 } }',
        '',
      ].join('\n'),
    );
    const { code, output } = await start(path);
    expect(code).toBe(1);
    expect(output).toContain(path);
    expect(output).toContain('models[0].pricing.input.usd');
  });

  it('should refuse to start when the file does not exist', async () => {
    const { code, output } = await start(join(dir, 'missing.yaml'));
    expect(code).toBe(1);
    expect(output).toContain('missing.yaml');
  });
});
