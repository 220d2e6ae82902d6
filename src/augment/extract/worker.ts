import { parentPort } from 'node:worker_threads';
import { getResolvedPDFJS } from 'unpdf';
import { ValidationError } from '../../errors.ts';
import { countTextTokens } from '../../tokenizer.ts';
import { htmlPageMarkdown, htmlPageText, limitTokens, type PageRequest } from '../scrape/page-text.ts';
import { extractDocument, type ExtractLimits } from './extract.ts';
import type { WorkerReply, WorkerRequest } from './pool.ts';

/** The extraction worker: one document at a time, posted by ExtractionPool; replies with text and tokens. */
if (!parentPort) throw new Error('extract/worker.ts runs only as a worker thread');
const port = parentPort;

// PDF.js rejects some internal promises of a damaged file that nothing awaits, after the failure already reached
// the awaited call. Left unhandled they would end the thread; the job itself has its answer either way.
process.on('unhandledRejection', () => undefined);

port.on('message', (request: WorkerRequest) => {
  const reply = request.page
    ? handlePage(request.bytes, request.limits, request.page)
    : handle(request.bytes, request.limits);
  void reply.then((message) => port.postMessage(message));
});
// PDF.js is loaded on first use; load it before saying ready, so a document's time budget is spent on the document.
await getResolvedPDFJS();
port.postMessage({ type: 'ready' } satisfies WorkerReply);

async function handle(bytes: Uint8Array, limits: ExtractLimits): Promise<WorkerReply> {
  try {
    const { kind, text } = await extractDocument(bytes, limits);
    const tokens = countTextTokens(text);
    return { type: 'done', kind, text, tokens };
  } catch (error) {
    return failure(error);
  }
}

async function handlePage(bytes: Uint8Array, limits: ExtractLimits, page: PageRequest): Promise<WorkerReply> {
  try {
    const { title, text } = page.html
      ? (page.markdown ? htmlPageMarkdown : htmlPageText)(bytes, page.charset)
      : { title: '', text: (await extractDocument(bytes, limits)).text };
    return { type: 'page', title, ...limitTokens(text, page.maxTokens) };
  } catch (error) {
    return failure(error);
  }
}

function failure(error: unknown): WorkerReply {
  if (error instanceof ValidationError) return { type: 'refused', message: error.message };
  return { type: 'failed', detail: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
}
