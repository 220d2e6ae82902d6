import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderTypes } from '../../src/db/generate-types.ts';

describe('database table types', () => {
  it('should match the migrated schema (run `npm run db:types` after adding a migration)', async () => {
    const committed = readFileSync(new URL('../../src/db/types.generated.ts', import.meta.url), 'utf8');
    expect(await renderTypes()).toBe(committed);
  });
});
