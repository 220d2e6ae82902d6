import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from './schema/index.ts';

/** Prints the SDL of the running schema into schema/schema.graphql (committed; CI fails when it is stale). */
export const printSdl = (): string => `${printSchema(lexicographicSortSchema(schema))}\n`;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = fileURLToPath(new URL('./schema/schema.graphql', import.meta.url));
  await writeFile(target, printSdl());
  console.log(`wrote ${target}`);
}
