import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { ValidationError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { EXTRACT_WORKER } from '../../runtime-files.ts';
import type { DocumentKind } from './detect.ts';
import type { PageRequest } from '../scrape/page-text.ts';
import type { ExtractLimits } from './extract.ts';

export interface WorkerRequest {
  readonly bytes: Uint8Array;
  readonly limits: ExtractLimits;
  /** A fetched web page (chat web scraping): HTML read as a page, the text cut to a token budget. */
  readonly page?: PageRequest | undefined;
}

export interface DocumentText {
  readonly kind: DocumentKind;
  readonly text: string;
  readonly tokens: number;
}

export interface PageText {
  /** The HTML title ('' for documents and plain text). */
  readonly title: string;
  readonly text: string;
  readonly tokens: number;
  /** The text was cut to the token budget. */
  readonly truncated: boolean;
}

type Extracted = ({ readonly type: 'done' } & DocumentText) | ({ readonly type: 'page' } & PageText);

export type WorkerReply =
  | { readonly type: 'ready' }
  | Extracted
  | { readonly type: 'refused'; readonly message: string }
  | { readonly type: 'failed'; readonly detail: string };

export interface PoolOptions {
  /** Documents parsed at once (one worker thread each); more wait their turn. */
  readonly size: number;
  /** A parse running longer is stopped (its thread terminated) and refused. */
  readonly timeoutMs: number;
  /** Heap cap of each worker; a document needing more is refused instead of taking the process down. */
  readonly maxHeapMb: number;
  /** An idle worker exits after this long. */
  readonly idleMs: number;
}

interface Slot {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  started: boolean;
  dead: boolean;
  idleTimer?: NodeJS.Timeout;
}

/**
 * Built, the worker is plain JavaScript. From the sources it is TypeScript: register tsx inside the thread itself,
 * so it loads the same way under `node --import tsx`, vitest or any other runner.
 */
function startWorker(resourceLimits: ResourceLimits): Worker {
  if (!EXTRACT_WORKER.typescript) return new Worker(EXTRACT_WORKER.url, { execArgv: [], resourceLimits });
  const tsxApi = new URL('index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api'))).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(EXTRACT_WORKER.url.href)}); });`;
  return new Worker(bootstrap, { eval: true, execArgv: [], resourceLimits });
}

/**
 * Runs document extraction in worker threads: the event loop of the API stays free while a 25 MB document is
 * parsed, a parse that hangs is really stopped (the thread is terminated), and a document that needs too much
 * memory kills only its worker. Workers are reused and exit when idle.
 */
export class ExtractionPool {
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly waiting: ((slot: Slot) => void)[] = [];

  constructor(private readonly options: PoolOptions, private readonly logger: Logger) {}

  async run(request: WorkerRequest & { page?: undefined }): Promise<DocumentText> {
    const reply = await this.runInWorker(request);
    if (reply.type !== 'done') throw unreadable();
    return reply;
  }

  async runPage(request: WorkerRequest & { page: PageRequest }): Promise<PageText> {
    const reply = await this.runInWorker(request);
    if (reply.type !== 'page') throw unreadable();
    return reply;
  }

  private async runInWorker(request: WorkerRequest): Promise<Extracted> {
    const slot = await this.acquire();
    try {
      return await this.execute(slot, request);
    } finally {
      this.release(slot);
    }
  }

  /** Stops every worker (running parses fail). */
  async close(): Promise<void> {
    const all = [...this.slots];
    this.slots.clear();
    this.idle.length = 0;
    await Promise.all(all.map((slot) => this.kill(slot)));
  }

  private execute(slot: Slot, request: WorkerRequest): Promise<Extracted> {
    const { worker } = slot;
    return new Promise((resolve, reject) => {
      let settled = false;
      const done = (action: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        worker.unref();
        action();
      };
      const onMessage = (reply: WorkerReply) => {
        if (reply.type === 'ready') return;
        if (reply.type === 'done' || reply.type === 'page') done(() => resolve(reply));
        else if (reply.type === 'refused') done(() => reject(new ValidationError(reply.message)));
        else {
          this.logger.warn({ detail: reply.detail }, 'text parser: a document library failed');
          done(() => reject(unreadable()));
        }
      };
      const onError = (error: Error) => {
        slot.dead = true;
        if (!slot.started) return done(() => reject(error));
        const outOfMemory = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
        this.logger.warn({ err: error }, 'text parser: worker failed');
        done(() => reject(outOfMemory ? new ValidationError('The document needs too much memory to parse; it is too large or too complex.') : unreadable()));
      };
      const onExit = () => {
        slot.dead = true;
        done(() => reject(unreadable()));
      };
      const timer = setTimeout(() => {
        slot.dead = true;
        void worker.terminate();
        done(() => reject(new ValidationError(`Parsing the document took longer than ${Math.round(this.options.timeoutMs / 1000)} s and was stopped; it may be damaged or too complex.`)));
      }, this.options.timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.ref();
      // A private copy is handed over (transferred), so the caller's bytes stay usable.
      const bytes = request.bytes.slice();
      slot.ready.then(
        () => worker.postMessage({ bytes, limits: request.limits, page: request.page } satisfies WorkerRequest, [bytes.buffer]),
        (error: unknown) => done(() => reject(error instanceof Error ? error : new Error(String(error)))),
      );
    });
  }

  private acquire(): Promise<Slot> {
    for (let slot = this.idle.pop(); slot; slot = this.idle.pop()) {
      clearTimeout(slot.idleTimer);
      if (!slot.dead) return Promise.resolve(slot);
    }
    if (this.slots.size < this.options.size) return Promise.resolve(this.spawn());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(slot: Slot): void {
    if (slot.dead) {
      this.slots.delete(slot);
      void this.kill(slot);
    }
    const next = this.waiting.shift();
    if (next) {
      next(slot.dead ? this.spawn() : slot);
      return;
    }
    if (slot.dead) return;
    slot.idleTimer = setTimeout(() => void this.kill(slot), this.options.idleMs);
    slot.idleTimer.unref();
    this.idle.push(slot);
  }

  private spawn(): Slot {
    const worker = startWorker({ maxOldGenerationSizeMb: this.options.maxHeapMb });
    worker.unref();
    const ready = new Promise<void>((resolve, reject) => {
      const onMessage = (reply: WorkerReply) => {
        if (reply.type !== 'ready') return;
        slot.started = true;
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve();
      };
      worker.on('message', onMessage);
      // Failing before it is ready is our fault (a broken install), not the document's: a 500, logged.
      worker.once('error', reject);
    });
    ready.catch((error: unknown) => this.logger.error({ err: error }, 'text parser: worker could not start'));
    const slot: Slot = { worker, ready, started: false, dead: false };
    // Always listening: an 'error' nobody handles (a worker failing between documents) would end the process.
    worker.on('error', () => {
      slot.dead = true;
    });
    worker.on('exit', () => {
      slot.dead = true;
      this.slots.delete(slot);
      const at = this.idle.indexOf(slot);
      if (at >= 0) this.idle.splice(at, 1);
      clearTimeout(slot.idleTimer);
    });
    this.slots.add(slot);
    return slot;
  }

  private async kill(slot: Slot): Promise<void> {
    slot.dead = true;
    clearTimeout(slot.idleTimer);
    await slot.worker.terminate().catch(() => undefined);
  }
}

const unreadable = () => new ValidationError('The document could not be read: the file is corrupted or not a valid document of its type.');
