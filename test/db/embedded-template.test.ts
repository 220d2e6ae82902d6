import { existsSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { embeddedTemplateFile, extractEmbeddedTemplate } from '../../src/db/embedded-template-read.ts';
import { schemaReady } from '../../src/db/migrate.ts';
import { embeddedThreadOptions } from '../helpers/db.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * A first start on an empty data directory unpacks the build's migrated template (test/global-setup.ts builds it)
 * instead of running initdb and the migrations. PG_VERSION marks a directory as made, so it is written last: a
 * first start cut short leaves a directory without it, which the next start unpacks again.
 */
describe('the embedded database template', () => {
  const dirs: string[] = [];
  const newDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'lagoon-template-test-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const open = async (dataDir: string) => {
    const created: string[] = [];
    // The worker's compiled engine (test/helpers/db.ts): what is under test is the data directory, not the compile.
    const handle = await openDatabase({
      dataDir,
      onCreate: (how) => created.push(how),
      ...(await embeddedThreadOptions()),
    });
    try {
      return { created, ready: await schemaReady(handle.db) };
    } finally {
      await handle.close();
    }
  };

  it(
    'should give a first start a database with every migration applied',
    async () => {
      const dataDir = newDir();
      expect(await open(dataDir)).toEqual({ created: ['template'], ready: true });
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
      // The next start finds it made.
      expect(await open(dataDir)).toEqual({ created: [], ready: true });
    },
    scaled(60_000),
  );

  it(
    'should unpack again over a first start that was cut short before PG_VERSION',
    async () => {
      const file = embeddedTemplateFile();
      expect(file, 'the build made no template').toBeDefined();
      const dataDir = newDir();
      extractEmbeddedTemplate(file!, dataDir);
      // What an interrupted unpacking leaves: files, one of them half written, and no PG_VERSION.
      unlinkSync(join(dataDir, 'PG_VERSION'));
      writeFileSync(join(dataDir, 'postgresql.conf'), '# cut sho');
      expect(await open(dataDir)).toEqual({ created: ['template'], ready: true });
    },
    scaled(60_000),
  );
});
