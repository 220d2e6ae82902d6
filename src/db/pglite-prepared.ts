import { parse, protocol, type PGlite, type Results } from '@electric-sql/pglite';

/*
 * Named prepared statements on the embedded database. PGlite's `query` parses and plans its statement on every call;
 * for the money core's two large batch statements that was over half of the database thread's time per batch
 * (bench/RESULTS.md). A statement tagged `prepared:` (prepared-tag.ts) is parsed once under its name, as on
 * PostgreSQL, and then only bound and executed: the same protocol messages PGlite's own `query` sends, with a name.
 */

type Messages = Parameters<typeof parse.parseResults>[0];

/** The prepared statements of one PGlite instance, by name, with their parameter types. */
export class PglitePreparedStatements {
  private readonly parameterTypes = new Map<string, number[]>();

  constructor(private readonly pglite: PGlite) {}

  /** Runs `text` as the prepared statement `name` (preparing it the first time), like `pglite.query` would. */
  query(name: string, text: string, params: readonly unknown[]): Promise<Results> {
    return this.pglite.runExclusive(async () => {
      const messages: Messages = [];
      try {
        const types = this.parameterTypes.get(name) ?? (await this.prepare(name, text));
        messages.push(
          ...(await this.send(protocol.serialize.bind({ statement: name, values: this.serialize(types, params) }))),
          ...(await this.send(protocol.serialize.describe({ type: 'P' }))),
          ...(await this.send(protocol.serialize.execute({}))),
        );
      } finally {
        messages.push(...(await this.send(protocol.serialize.sync())));
      }
      await this.pglite.syncToFs();
      const [result] = parse.parseResults(messages, this.pglite.parsers);
      if (!result) throw new Error(`The prepared statement ${name} gave no result`);
      return result;
    });
  }

  /** Parses the statement under its name; one that failed to describe is closed, so that it can be tried again. */
  private async prepare(name: string, text: string): Promise<number[]> {
    await this.send(protocol.serialize.parse({ name, text }));
    try {
      const types = parse.parseDescribeStatementResults(
        await this.send(protocol.serialize.describe({ type: 'S', name })),
      );
      this.parameterTypes.set(name, types);
      return types;
    } catch (error) {
      await this.send(protocol.serialize.sync()).catch(() => undefined);
      await this.send(protocol.serialize.close({ type: 'S', name })).catch(() => undefined);
      throw error;
    }
  }

  /** Each parameter as PGlite's `query` would send it: its type's serializer, else its text. */
  private serialize(types: readonly number[], params: readonly unknown[]): (string | null)[] {
    return params.map((value, index) => {
      if (value === null || value === undefined) return null;
      const serializer = this.pglite.serializers[types[index] ?? 0];
      return serializer ? (serializer(value) as string) : String(value);
    });
  }

  private async send(message: Uint8Array): Promise<Messages> {
    return (await this.pglite.execProtocol(message, { syncToFs: false })).messages;
  }
}
