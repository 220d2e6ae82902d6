/**
 * A statement whose text starts with `/* prepared:<name> *\/` runs as a named prepared statement, on PostgreSQL
 * (database.ts) and on the embedded database (pglite-prepared.ts) alike: parsed and planned once per connection.
 */
const PREPARED_TAG = /^\/\* prepared:([a-z_]+) \*\//;

/** The server-side name of a tagged statement, or undefined for one without the tag. */
export function preparedNameOf(statement: string): string | undefined {
  const tag = PREPARED_TAG.exec(statement)?.[1];
  return tag === undefined ? undefined : `lagoon_${tag}`;
}
