import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderTypesOf } from '../../src/db/generate-types.ts';
import { createTestDatabase } from '../helpers/db.ts';

/*
 * On a copy of the run's migrated template (test/global-setup.ts checks it holds every migration): the same schema
 * `npm run db:types` reads off a fresh in-memory database, without its initdb and migrations (some 6 s of CPU).
 */
describe('database table types', () => {
  it('should match the migrated schema (run `npm run db:types` after adding a migration)', async () => {
    const committed = readFileSync(new URL('../../src/db/types.generated.ts', import.meta.url), 'utf8');
    const database = await createTestDatabase();
    try {
      expect(await renderTypesOf(database.db)).toBe(committed);
    } finally {
      await database.drop();
    }
  });
});
