import type { SharedConnection } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';

/*
 * Waking idle workers when a job is queued. pg-boss 10 has no LISTEN/NOTIFY of its own, so a send also runs
 * `pg_notify(WAKE_CHANNEL, <queue name>)` in the transaction that inserts the job (delivered at commit, never for a
 * job that rolled back), and each process with workers listens here and wakes that queue's idle workers, which
 * then fetch at once instead of at their next poll. A lost notification costs one poll, never a job.
 */

export const WAKE_CHANNEL = 'lagoon_queue_wake';

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

export interface WakeHandlers {
  /** A job was queued on this queue. */
  readonly onWake: (queueName: string) => void;
  /** Listening (again) after a gap in which notifications may have been missed: every worker should fetch. */
  readonly onListening: () => void;
}

/** Starts listening (in the background; until it works, workers only poll). Returns the function that stops it. */
export async function listenForWakes(
  connection: SharedConnection,
  handlers: WakeHandlers,
  logger: Logger,
): Promise<() => Promise<void>> {
  if (connection.kind === 'pglite') {
    // One in-process database: no connection to lose, so nothing to reconnect.
    const unlisten = await connection.pglite.listen(WAKE_CHANNEL, (payload) => handlers.onWake(payload));
    handlers.onListening();
    return unlisten;
  }
  return postgresListener(connection.url, handlers, logger);
}

/** A connection of its own, held open for LISTEN, opened again (with growing pauses) whenever it is lost. */
async function postgresListener(url: string, handlers: WakeHandlers, logger: Logger): Promise<() => Promise<void>> {
  const { default: pg } = await import('pg');
  let closed = false;
  let current: InstanceType<typeof pg.Client> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delayMs = FIRST_RETRY_MS;

  const connect = () => {
    const client = new pg.Client({ connectionString: url, application_name: 'lagoon-queue-wake' });
    current = client;
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost || closed) return;
      lost = true;
      if (error) logger.warn({ err: error }, 'the job queue wake-up listener lost its connection; reconnecting');
      void client.end().catch(() => undefined);
      retry = setTimeout(connect, delayMs);
      retry.unref();
      delayMs = Math.min(delayMs * 2, MAX_RETRY_MS);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel === WAKE_CHANNEL && message.payload) handlers.onWake(message.payload);
    });
    client
      .connect()
      .then(() => client.query(`listen ${WAKE_CHANNEL}`))
      .then(() => {
        if (closed || lost) return;
        delayMs = FIRST_RETRY_MS;
        handlers.onListening();
      })
      .catch(onLost);
  };
  connect();

  return async () => {
    closed = true;
    clearTimeout(retry);
    await current?.end().catch(() => undefined);
  };
}
