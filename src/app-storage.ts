import { CompiledQuery } from 'kysely';
import type { Config } from './config.ts';
import { openDatabase, type DatabaseHandle } from './db/database.ts';
import { checkConnection, connectionTarget } from './db/connect-failure.ts';
import { migrateToLatest } from './db/migrate.ts';
import type { Logger } from './logger.ts';
import { withEnvProviders } from './operator-config/env-providers.ts';
import { loadOperatorConfig } from './operator-config/load.ts';
import type { OperatorConfig } from './operator-config/schema.ts';
import { quietReport, type StartupReport } from './startup-report.ts';

/*
 * The first part of a start: the operator config read and checked, the database opened and migrated. Kept apart
 * from the app's module graph so that src/main.ts can begin it before loading that graph: the embedded database
 * opens in its own thread while this one compiles the modules (an embedded start 0.4-0.6 s sooner to /healthz on a
 * 2-core host, docs/performance.md).
 */

export interface AppStorage {
  /** The operator config, with the env shortcuts' providers merged into its list. */
  readonly operatorConfig: OperatorConfig;
  readonly database: DatabaseHandle;
}

/** Reads the operator config, opens the configured database (or takes `database`) and migrates it. */
export async function openAppStorage(
  config: Config,
  options: { logger: Logger; report?: StartupReport; database?: DatabaseHandle },
): Promise<AppStorage> {
  const { logger, report = quietReport } = options;
  // A bad operator config stops the start before anything else happens (the error names each bad path).
  // The env shortcuts' providers join the file's here, once: every gateway reads the one list.
  const operatorConfig = withEnvProviders(await loadOperatorConfig(config.operatorConfigPath), config, (message) =>
    logger.warn(message),
  );
  const database =
    options.database ??
    (await report.phase('database', () => openConfiguredDatabase(config, report), databaseLine(config)));
  await report.phase(
    'migrations',
    () => migrateToLatest(database.db, (names) => report.announce(`applying ${names.length} migrations…`)),
    (result) => (result.results?.length ? `applied ${result.results.length} migrations` : 'schema up to date'),
  );
  return { operatorConfig, database };
}

/** The configured database, opened; PostgreSQL answers once (or the start stops saying where and why). */
async function openConfiguredDatabase(config: Config, report: StartupReport): Promise<DatabaseHandle> {
  const { url, dataDir, preparedStatements } = config.database;
  const database = await openDatabase({
    url,
    dataDir,
    preparedStatements,
    onCreate: (from) =>
      report.announce(
        from === 'template'
          ? `creating the embedded database in ${dataDir} from the build's template (first start only)…`
          : `creating the embedded database in ${dataDir} (first start only; a minute or more on a busy host)…`,
      ),
  });
  if (url) {
    await checkConnection(url, () => database.db.executeQuery(CompiledQuery.raw('select 1'))).catch(
      async (error: unknown) => {
        await database.close();
        throw error;
      },
    );
  }
  return database;
}

function databaseLine(config: Config): () => string {
  const { url, dataDir } = config.database;
  if (!url) return () => `opened the embedded database in ${dataDir}`;
  const target = connectionTarget(url);
  return () => `connected to PostgreSQL at ${target.host}:${target.port}`;
}
