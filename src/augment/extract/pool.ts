import type { Worker } from 'node:worker_threads';
import { AppError, RateLimitedError, ValidationError, type ErrorData } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { EXTRACT_WORKER } from '../../runtime-files.ts';
import { startWorker } from '../../worker-thread.ts';
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
  /** Documents of one account parsed at once; its further ones wait without taking a worker. */
  readonly perAccount: number;
  /** A parse running longer is stopped (its thread terminated and replaced) and refused. */
  readonly timeoutMs: number;
  /** A document that gets no worker within this long is answered 503 (429 when its own account's cap held it). */
  readonly queueTimeoutMs: number;
  /** Heap cap of each worker; a document needing more is refused instead of taking the process down. */
  readonly maxHeapMb: number;
  /** An idle worker exits after this long. */
  readonly idleMs: number;
  /** The worker module (tests swap in one that can be made to hang); the extraction worker by default. */
  readonly workerUrl?: URL | undefined;
}

/** No worker came free in time: 503 with the time the soonest running parse must end by. */
export class ParserBusyError extends AppError {
  readonly code = 'SERVICE_UNAVAILABLE' as const;
  constructor(readonly retryAfterSeconds: number) {
    super('Every document parser is busy; retry later.');
  }

  override data(): ErrorData {
    return { retryAfterSeconds: this.retryAfterSeconds };
  }
}

interface Waiter {
  readonly owner: string | undefined;
  readonly resolve: (slot: Slot, job: symbol) => void;
  readonly reject: (error: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  started: boolean;
  dead: boolean;
  idleTimer?: NodeJS.Timeout;
}

/**
 * Runs document extraction in worker threads: the event loop of the API stays free while a 25 MB document is
 * parsed, a parse that hangs is really stopped (the thread is terminated), and a document that needs too much
 * memory kills only its worker. Workers are reused and exit when idle.
 *
 * Fairness: one account has at most `perAccount` documents in the workers, and nobody waits longer than
 * `queueTimeoutMs` for one (a busy pool answers at once-ish, instead of holding the request for minutes).
 */
export class ExtractionPool {
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly waiting: Waiter[] = [];
  /** Parses holding a worker: whose (none for chat page reads) and when their budget ends. */
  private readonly running = new Map<symbol, { readonly owner: string | undefined; readonly deadline: number }>();
  private readonly perOwner = new Map<string, number>();

  constructor(
    private readonly options: PoolOptions,
    private readonly logger: Logger,
  ) {}

  /** `owner` (the account) counts against the per-account cap; none for work that is not a caller's document. */
  async run(request: WorkerRequest & { page?: undefined }, owner?: string): Promise<DocumentText> {
    const reply = await this.runInWorker(request, owner);
    if (reply.type !== 'done') throw unreadable();
    return reply;
  }

  async runPage(request: WorkerRequest & { page: PageRequest }): Promise<PageText> {
    const reply = await this.runInWorker(request, undefined);
    if (reply.type !== 'page') throw unreadable();
    return reply;
  }

  private async runInWorker(request: WorkerRequest, owner: string | undefined): Promise<Extracted> {
    const { slot, job } = await this.acquire(owner);
    try {
      return await this.execute(slot, request);
    } finally {
      this.running.delete(job);
      if (owner !== undefined) {
        const count = (this.perOwner.get(owner) ?? 1) - 1;
        if (count > 0) this.perOwner.set(owner, count);
        else this.perOwner.delete(owner);
      }
      this.release(slot);
    }
  }

  /** Stops every worker (running parses fail). */
  async close(): Promise<void> {
    for (const waiter of this.waiting.splice(0)) waiter.reject(new ParserBusyError(1));
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
        done(() =>
          reject(
            outOfMemory
              ? new ValidationError('The document needs too much memory to parse; it is too large or too complex.')
              : unreadable(),
          ),
        );
      };
      const onExit = () => {
        slot.dead = true;
        done(() => reject(unreadable()));
      };
      let timer: NodeJS.Timeout | undefined;
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.ref();
      // A private copy is handed over (transferred), so the caller's bytes stay usable.
      const bytes = request.bytes.slice();
      slot.ready.then(
        () => {
          if (settled) return;
          // The budget is the document's own: it starts when the worker has it (a cold worker's start is not counted).
          timer = setTimeout(() => {
            slot.dead = true;
            void worker.terminate();
            done(() =>
              reject(
                new ValidationError(
                  `Parsing the document took longer than ${Math.round(this.options.timeoutMs / 1000)} s and was stopped; it may be damaged or too complex.`,
                ),
              ),
            );
          }, this.options.timeoutMs);
          worker.postMessage({ bytes, limits: request.limits, page: request.page } satisfies WorkerRequest, [
            bytes.buffer,
          ]);
        },
        (error: unknown) => done(() => reject(error instanceof Error ? error : new Error(String(error)))),
      );
    });
  }

  /** A worker for the next document of `owner`, once both the pool and the owner's cap allow; else 503/429 in time. */
  private acquire(owner: string | undefined): Promise<{ slot: Slot; job: symbol }> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        owner,
        resolve: (slot, job) => {
          clearTimeout(timer);
          resolve({ slot, job });
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(waiter);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        reject(this.busy(owner));
      }, this.options.queueTimeoutMs);
      this.waiting.push(waiter);
      this.dispatch();
    });
  }

  /** Hands free workers to the oldest waiters whose account is under its cap. */
  private dispatch(): void {
    for (let at = 0; at < this.waiting.length && this.running.size < this.options.size;) {
      const waiter = this.waiting[at]!;
      if (waiter.owner !== undefined && (this.perOwner.get(waiter.owner) ?? 0) >= this.options.perAccount) {
        at += 1;
        continue;
      }
      this.waiting.splice(at, 1);
      if (waiter.owner !== undefined) this.perOwner.set(waiter.owner, (this.perOwner.get(waiter.owner) ?? 0) + 1);
      // Busy from here on. The deadline (for Retry-After) is close: the budget starts when the worker has the document.
      const job = Symbol('parse');
      this.running.set(job, { owner: waiter.owner, deadline: Date.now() + this.options.timeoutMs });
      waiter.resolve(this.takeSlot(), job);
    }
  }

  private takeSlot(): Slot {
    for (let slot = this.idle.pop(); slot; slot = this.idle.pop()) {
      clearTimeout(slot.idleTimer);
      if (!slot.dead) return slot;
    }
    return this.spawn();
  }

  /** 429 when the owner's own documents hold its cap, else 503; either says when a worker is sure to be free. */
  private busy(owner: string | undefined): AppError {
    const now = Date.now();
    const own = owner !== undefined && (this.perOwner.get(owner) ?? 0) >= this.options.perAccount;
    const deadlines = [...this.running.values()]
      .filter((job) => !own || job.owner === owner)
      .map((job) => job.deadline);
    const seconds = Math.max(1, Math.ceil(((deadlines.length > 0 ? Math.min(...deadlines) : now + 1000) - now) / 1000));
    if (own)
      return new RateLimitedError(
        `This account already has ${this.options.perAccount} documents being parsed; retry when one is done.`,
        seconds,
      );
    return new ParserBusyError(seconds);
  }

  private release(slot: Slot): void {
    if (slot.dead) {
      this.slots.delete(slot);
      void this.kill(slot);
    } else {
      slot.idleTimer = setTimeout(() => void this.kill(slot), this.options.idleMs);
      slot.idleTimer.unref();
      this.idle.push(slot);
    }
    this.dispatch();
  }

  private spawn(): Slot {
    const url = this.options.workerUrl ?? EXTRACT_WORKER.url;
    const worker = startWorker(
      { url, typescript: url.pathname.endsWith('.ts') },
      { resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb } },
    );
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

const unreadable = () =>
  new ValidationError('The document could not be read: the file is corrupted or not a valid document of its type.');
