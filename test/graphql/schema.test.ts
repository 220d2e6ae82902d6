import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printSdl } from '../../codegen.ts';

describe('GraphQL SDL', () => {
  it('should match the committed schema/schema.graphql (run `npm run codegen` after schema changes)', () => {
    const committed = readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(printSdl()).toBe(committed);
  });
});
