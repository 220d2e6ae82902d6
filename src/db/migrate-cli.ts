import { loadConfig } from '../config.ts';
import { openDatabase } from './database.ts';
import { migrateToLatest } from './migrate.ts';

/** `npm run db:migrate`: runs pending migrations and exits non-zero on failure. */
const config = loadConfig();
const handle = await openDatabase({ url: config.database.url, dataDir: config.database.dataDir, poolSize: 1 });
try {
  const { results } = await migrateToLatest(handle.db);
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date.');
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
} finally {
  await handle.close();
}
