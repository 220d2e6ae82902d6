import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMBEDDED_TEMPLATE, MIGRATIONS_DIR } from '../runtime-files.ts';
import { type Manifest, migrationNames, readManifest } from './embedded-template-read.ts';

/*
 * A first start on the embedded database used to run initdb (PostgreSQL in WebAssembly: some 10 s of CPU) and then
 * every migration. The build does both once (`npm run build` runs before every `npm start`, and redoes it only when
 * the migrations or PGlite changed), and dumps the result; a first start loads that tarball into its new data
 * directory (PGlite's loadDataDir) in about a second. Nothing instance-specific is in it: the bootstrap account and
 * the instance secrets are made by the start that loads it.
 */

/** The key of the template the migrations in `dir` and the installed PGlite make. */
export function templateKey(migrationsDir: string): string {
  const hash = createHash('sha256');
  // PGlite's entry module differs from one release to the next (its package.json is not exported).
  hash.update(readFileSync(createRequire(import.meta.url).resolve('@electric-sql/pglite')));
  for (const file of readdirSync(migrationsDir).sort()) {
    hash.update(file).update(readFileSync(join(migrationsDir, file)));
  }
  return hash.digest('hex');
}

/**
 * For the build: makes the template unless the one there already has this key. In a child process, since initdb
 * touches some 500 MB of WebAssembly memory that the build's own process (or the test runner's) would keep.
 */
export async function ensureEmbeddedTemplate(migrationsDir: string): Promise<boolean> {
  const key = templateKey(migrationsDir);
  if (readManifest()?.key === key) return false;
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), key], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`making the embedded database template failed (exit ${code})`)),
    );
  });
  return true;
}

/** The child's work: initdb in memory, every migration, the dump; written whole (rename), the manifest last. */
async function makeTemplate(key: string): Promise<void> {
  const [{ openDatabase, sharedConnectionOf }, { migrateToLatest }] = await Promise.all([
    import('./database.ts'),
    import('./migrate.ts'),
  ]);
  const handle = await openDatabase({ dataDir: 'memory://' });
  try {
    await migrateToLatest(handle.db);
    const shared = sharedConnectionOf(handle.db);
    if (shared?.kind !== 'pglite') throw new Error('the template needs the embedded database');
    const dump = await shared.pglite.dumpDataDir();
    const manifest: Manifest = { key, migrations: migrationNames(fileURLToPath(MIGRATIONS_DIR)) };
    const write = (url: URL, contents: string | Uint8Array) => {
      const path = fileURLToPath(url);
      writeFileSync(`${path}.${process.pid}.tmp`, contents);
      renameSync(`${path}.${process.pid}.tmp`, path);
    };
    write(EMBEDDED_TEMPLATE.tarball, dump);
    write(EMBEDDED_TEMPLATE.manifest, `${JSON.stringify(manifest)}\n`);
  } finally {
    await handle.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2]) {
  // Not a top-level await: database.ts imports this module, which must finish evaluating for that import to end.
  // The database's thread does not hold the process open by itself (src/worker-thread.ts): the interval does.
  const keepAlive = setInterval(() => undefined, 60_000);
  makeTemplate(process.argv[2])
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(() => clearInterval(keepAlive));
}
