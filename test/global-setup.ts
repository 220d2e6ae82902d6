import type { TestProject } from 'vitest/node';
import { buildServer } from '../build.ts';
import { prepareTemplate } from './helpers/db-template.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated database each test file clones (see test/helpers/db-template.ts). */
    lagoonTemplate: string;
  }
}

/**
 * Once per run: the build the end-to-end tests start (as `npm start` does), and one migrated database that every
 * test file clones instead of migrating its own. Returns the teardown that drops the template.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [template] = await Promise.all([prepareTemplate(), buildServer()]);
  project.provide('lagoonTemplate', template.ref);
  return template.remove;
}
