import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type Reporter, type TestModule, type TestSpecification } from 'vitest/node';

/**
 * How long each test file took in a recent run of the embedded-database pass, in seconds (`LAGOON_RECORD_DURATIONS=1
 * npm test` rewrites it). The run hands files to its workers one at a time, so the order decides how long the last
 * worker runs alone: longest first, and the short files fill the gaps at the end (a fresh clone has no cache of
 * vitest's own to order by).
 */
const DURATIONS_FILE = new URL('./file-durations.json', import.meta.url);

type Durations = Record<string, number>;

function readDurations(): Durations {
  return existsSync(DURATIONS_FILE) ? (JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Durations) : {};
}

/** Longest recorded first; a file with no record (a new one) before them all, as it may be long. */
export function longestFirst<T>(files: readonly T[], recorded: (file: T) => number | undefined): T[] {
  // Stable: files with equal records, and the files with none, keep their order.
  const rank = (file: T) => {
    const seconds = recorded(file);
    return seconds === undefined ? Number.NEGATIVE_INFINITY : -seconds;
  };
  return [...files].sort((a, b) => {
    const [first, second] = [rank(a), rank(b)];
    return first === second ? 0 : first < second ? -1 : 1;
  });
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = readDurations();
    return longestFirst(files, (file) => durations[relative(this.ctx.config.root, file.moduleId)]);
  }
}

/** With LAGOON_RECORD_DURATIONS=1, writes each file's time (import, hooks and tests) to the durations file. */
export class DurationsRecorder implements Reporter {
  private root = '';

  onInit(vitest: { config: { root: string } }): void {
    this.root = vitest.config.root;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    // A file deleted since keeps no record; a file this run left out keeps its earlier one.
    const durations = Object.fromEntries(
      Object.entries(readDurations()).filter(([file]) => existsSync(new URL(`../${file}`, import.meta.url))),
    );
    for (const module of modules) {
      const { collectDuration, duration } = module.diagnostic();
      durations[relative(this.root, module.moduleId)] = Math.round((collectDuration + duration) / 100) / 10;
    }
    const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)));
    writeFileSync(DURATIONS_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
  }
}
