import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { extract as tarExtract } from 'tar';
import { EMBEDDED_TEMPLATE, MIGRATIONS_DIR } from '../runtime-files.ts';

const require = createRequire(import.meta.url);

/*
 * Reading the build's migrated embedded database (src/db/embedded-template.ts makes it): apart from the maker, which
 * opens databases itself, so that src/db/database.ts can load it without an import cycle.
 */

export interface Manifest {
  /** The migrations and PGlite release the tarball was made from (a hash of their files). */
  readonly key: string;
  /** The migrations it carries, in order. */
  readonly migrations: readonly string[];
}

export const migrationNames = (dir: string): string[] =>
  readdirSync(dir)
    .filter((file) => /\.(ts|js)$/.test(file) && !file.endsWith('.d.ts'))
    .sort()
    .map((file) => file.replace(/\.(ts|js)$/, ''));

export function readManifest(): Manifest | undefined {
  try {
    return JSON.parse(readFileSync(EMBEDDED_TEMPLATE.manifest, 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}

/**
 * The build's template, if there is one whose migrations are the first of this code's (the start migrates the
 * rest as usual): the tarball's path. Undefined otherwise, and the start runs initdb as before.
 */
export function embeddedTemplateFile(): string | undefined {
  const manifest = readManifest();
  if (!manifest) return undefined;
  const current = migrationNames(fileURLToPath(MIGRATIONS_DIR));
  if (manifest.migrations.some((name, index) => current[index] !== name)) return undefined;
  const file = fileURLToPath(EMBEDDED_TEMPLATE.tarball);
  return existsSync(file) ? file : undefined;
}

/**
 * Unpacks the template into `dataDir` with node-tar, in about 0.3 s: PGlite's own loadDataDir writes the same
 * 1,200 files through its WebAssembly file system in about 2 s. PG_VERSION, which marks a data directory as made,
 * comes last, so a start cut short in the middle leaves a directory the next start unpacks again.
 */
export function extractEmbeddedTemplate(file: string, dataDir: string): void {
  const isVersionFile = (path: string) => path.replace(/^[/.]+/, '') === 'PG_VERSION';
  // Loaded for a first start only: every later one does without node-tar.
  const { extract } = require('tar') as { extract: typeof tarExtract };
  extract({ file, cwd: dataDir, sync: true, filter: (path) => !isVersionFile(path) });
  extract({ file, cwd: dataDir, sync: true, filter: isVersionFile });
}
