import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class DataDirLockedError extends Error {}

/**
 * PGlite is a single-process database: two processes opening one data directory corrupt it. The opener writes
 * its pid to a lock file; another process finding a live pid there refuses to open.
 */
export function lockDataDir(dataDir: string): () => void {
  const lockPath = join(dataDir, 'lagoon.lock');
  const holder = readHolder(lockPath);
  if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
    throw new DataDirLockedError(
      `The data directory ${dataDir} is in use by process ${holder} (a running Lagoon server?). ` +
        'Use the operator CLI while the server runs (it talks to the server), or stop the server first.',
    );
  }
  writeFileSync(lockPath, String(process.pid), { mode: 0o600 });
  return () => {
    if (readHolder(lockPath) === process.pid) rmSync(lockPath, { force: true });
  };
}

function readHolder(lockPath: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(lockPath, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
