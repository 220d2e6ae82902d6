import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/server-process.ts';

/*
 * The build (made by test/global-setup.ts) compiles `graphql` in with every package that imports it (build.ts): a
 * server file importing it from node_modules would load a second copy, and a schema made by one copy is refused by
 * the other ("Cannot use GraphQLSchema from another module or realm").
 */
describe('the build', () => {
  it('imports graphql from no package outside the bundle', () => {
    const dist = join(ROOT, 'dist');
    const files = readdirSync(dist).filter((name) => name.endsWith('.js'));
    expect(files).toContain('main.js');
    const texts = new Map(files.map((name) => [name, readFileSync(join(dist, name), 'utf8')]));
    // esbuild writes its own imports with double quotes (the bundled sources' comments quote examples with single).
    const importing = files.filter((name) => /(from\s*|import\(|require\()"graphql(\/[^"]*)?"/.test(texts.get(name)!));
    expect(importing).toEqual([]);
    // The copy compiled in is there.
    expect([...texts.values()].some((text) => text.includes('// node_modules/graphql/'))).toBe(true);
  });
});
