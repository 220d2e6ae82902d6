import { parentPort } from 'node:worker_threads';
import { ValidationError } from '../../errors.ts';
import { countTextTokens } from '../../tokenizer.ts';
import { extractDocument, type ExtractLimits } from './extract.ts';
import type { WorkerReply, WorkerRequest } from './pool.ts';

/** The extraction worker: one document at a time, posted by ExtractionPool; replies with text and tokens. */
if (!parentPort) throw new Error('extract/worker.ts runs only as a worker thread');
const port = parentPort;

// PDF.js rejects some internal promises of a damaged file that nothing awaits, after the failure already reached
// the awaited call. Left unhandled they would end the thread; the job itself has its answer either way.
process.on('unhandledRejection', () => undefined);

port.on('message', (request: WorkerRequest) => {
  void handle(request.bytes, request.limits).then((reply) => port.postMessage(reply));
});
port.postMessage({ type: 'ready' } satisfies WorkerReply);

async function handle(bytes: Uint8Array, limits: ExtractLimits): Promise<WorkerReply> {
  try {
    const { kind, text } = await extractDocument(bytes, limits);
    const tokens = countTextTokens(text);
    return { type: 'done', kind, text, tokens };
  } catch (error) {
    if (error instanceof ValidationError) return { type: 'refused', message: error.message };
    return { type: 'failed', detail: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}
