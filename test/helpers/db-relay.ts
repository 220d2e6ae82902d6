import { connect, createServer, type Server, type Socket } from 'node:net';

export interface DatabaseRelay {
  /** A connection URL like `target` that goes through the relay. */
  readonly url: string;
  /** Drops every connection and refuses new ones (the database is away). */
  cut(): void;
  /** Accepts connections again. */
  mend(): void;
  /**
   * The next COMMIT sent on a connection that ran `statement` (text or prepared statement name) reaches the
   * server, and then that connection drops before the answer comes back: the client cannot tell whether it committed.
   */
  loseNextCommitAfter(statement: string): Promise<void>;
  close(): Promise<void>;
}

const COMMIT = Buffer.from('commit\0');

/** A loopback TCP relay to the PostgreSQL server of `target` that a test can break in chosen ways. */
export async function startDatabaseRelay(target: string): Promise<DatabaseRelay> {
  const upstreamUrl = new URL(target);
  const sockets = new Set<Socket>();
  let open = true;
  let commitLoss: { statement: Buffer; lost: () => void } | undefined;
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(upstreamUrl.port || 5432), upstreamUrl.hostname);
    let ranStatement = false;
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (commitLoss && chunk.includes(commitLoss.statement)) ranStatement = true;
      if (commitLoss && ranStatement && chunk[0] === 0x51 && chunk.includes(COMMIT)) {
        const { lost } = commitLoss;
        commitLoss = undefined;
        // The server reads the COMMIT before the end of the stream; its answer is never passed on.
        upstream.end(chunk);
        client.destroy();
        lost();
        return;
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const url = new URL(target);
  url.host = `127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url: url.toString(),
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    mend() {
      open = true;
    },
    loseNextCommitAfter: (statement) =>
      new Promise((lost) => (commitLoss = { statement: Buffer.from(statement), lost })),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
