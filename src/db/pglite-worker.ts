import { PGlite, types } from '@electric-sql/pglite';
import { workerData } from 'node:worker_threads';
import { lowerThisThreadPriority } from '../thread-priority.ts';
import { postEvent, serveCalls } from '../worker-thread.ts';
import type { PgliteCall, PgliteReply, PgliteThreadData } from './pglite-thread.ts';
import { PglitePreparedStatements } from './pglite-prepared.ts';
import { preparedNameOf } from './prepared-tag.ts';

/*
 * The embedded database's thread (pglite-thread.ts): one PGlite instance, answering statements in the order they
 * arrive (PGlite runs one at a time), and posting the notifications of the channels it was asked to listen on.
 */
const { dataDir, loadDataDir, engine } = workerData as PgliteThreadData;

// Below the event loop (nice 10, not idle): when both want a core the requests go first, and the statements, most
// of them the money core's batched writes that no caller waits for, take the rest. On two cores this held chat's
// p99 at 2,000 req/s where the thread at the event loop's priority let it grow to seconds (bench/RESULTS.md).
// Lowered once the database is open: a start loads the app's modules meanwhile, and waits for both.

const opening = PGlite.create(dataDir, {
  // Postgres touches all of its shared buffers at start, and WebAssembly memory is never given back: 16 MB
  // (instead of 128) is plenty for Lagoon's hot rows and keeps the server ~110 MB smaller.
  postgresqlconf: ['shared_buffers = 16MB'],
  ...(loadDataDir ? { loadDataDir: new Blob([loadDataDir]) } : {}),
  ...(engine && {
    pgliteWasmModule: engine.pgliteWasmModule,
    initdbWasmModule: engine.initdbWasmModule,
    fsBundle: new Blob([engine.fsBundle]),
  }),
  // int8 columns hold money and arrive as bigint, as from pg (src/db/database.ts); dates stay calendar strings.
  parsers: {
    [types.INT8]: (value: string) => BigInt(value),
    [types.DATE]: (value: string) => value,
  },
});
// A failed start is the answer to every call, not an unhandled rejection of its own.
opening.then(() => lowerThisThreadPriority()).catch(() => undefined);

const prepared = opening.then((pglite) => new PglitePreparedStatements(pglite));
prepared.catch(() => undefined);
const listening = new Map<string, () => Promise<void>>();
/**
 * Transaction control has no parameters and nothing to plan: the simple protocol takes it in one message, where
 * `query` sends six (0.36 → 0.16 ms for a begin and its commit, in every batch of the money core).
 */
const TRANSACTION_CONTROL = /^(begin|commit|rollback)$/;

serveCalls<PgliteCall, PgliteReply>(async (call) => {
  const pglite = await opening;
  switch (call.op) {
    case 'open':
      return undefined;
    case 'query': {
      if (call.params.length === 0 && TRANSACTION_CONTROL.test(call.text)) {
        const [result] = await pglite.exec(call.text);
        return { rows: result?.rows ?? [], affectedRows: result?.affectedRows };
      }
      const name = preparedNameOf(call.text);
      const { rows, affectedRows } =
        name === undefined
          ? await pglite.query(call.text, [...call.params])
          : await (await prepared).query(name, call.text, call.params);
      return { rows, affectedRows };
    }
    case 'exec':
      return (await pglite.exec(call.text)).map(({ rows, affectedRows }) => ({ rows, affectedRows }));
    case 'listen':
      if (!listening.has(call.channel))
        listening.set(
          call.channel,
          await pglite.listen(call.channel, (payload) => postEvent({ channel: call.channel, payload })),
        );
      return undefined;
    case 'unlisten':
      await listening.get(call.channel)?.();
      listening.delete(call.channel);
      return undefined;
    case 'dump':
      return new Uint8Array(await (await pglite.dumpDataDir('gzip')).arrayBuffer());
    case 'close':
      await pglite.close();
      return undefined;
  }
});
