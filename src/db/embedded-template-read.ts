import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EMBEDDED_TEMPLATE, MIGRATIONS_DIR } from '../runtime-files.ts';

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
 * rest as usual); undefined otherwise, and the start runs initdb as before.
 */
export function loadEmbeddedTemplate(): Uint8Array<ArrayBuffer> | undefined {
  const manifest = readManifest();
  if (!manifest) return undefined;
  const current = migrationNames(fileURLToPath(MIGRATIONS_DIR));
  if (manifest.migrations.some((name, index) => current[index] !== name)) return undefined;
  try {
    return new Uint8Array(readFileSync(EMBEDDED_TEMPLATE.tarball));
  } catch {
    return undefined;
  }
}
