import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { AppError, type ErrorData } from '../../errors.ts';
import { ESPEAK_WORKER } from '../../runtime-files.ts';
import { startWorker } from '../../worker-thread.ts';
import type { EspeakJob, EspeakReply } from './espeak-worker.ts';

/*
 * eSpeak NG off the event loop: a few worker threads (src/providers/speech/espeak-worker.ts), each synthesising one
 * sentence at a time (a 78-character sentence takes ~0.25 s of CPU). Threads start on first use and exit when idle;
 * a job waits in a queue while all are busy. A thread that dies fails its job and is replaced on the next one.
 */

export interface EspeakPoolOptions {
  /** Threads at most (default: up to 2, fewer on a one-core machine). */
  readonly size?: number;
  /** An idle thread exits after this long (default 30 s). */
  readonly idleMs?: number;
  /**
   * Speech calls in flight at most (default 4 per thread): each holds an ffmpeg process and queues its sentences
   * behind the others', so past this a call is refused at once (503) instead of waiting minutes.
   */
  readonly maxCalls?: number;
}

/** Every speech slot of the built-in engine is taken: 503, try again shortly (nothing was charged). */
export class SpeechBusyError extends AppError {
  readonly code = 'SERVICE_UNAVAILABLE' as const;
  constructor() {
    super('The built-in speech engine is busy; retry shortly.');
  }

  override data(): ErrorData {
    return { retryAfterSeconds: 1 };
  }
}

export type SentenceJob = Omit<EspeakJob, 'id'>;

interface Queued {
  readonly job: EspeakJob;
  resolve(pcm: Uint8Array): void;
  reject(error: Error): void;
}

class EspeakThread {
  readonly worker: Worker;
  current: Queued | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  dead = false;

  constructor(onFree: (thread: EspeakThread) => void) {
    this.worker = startWorker(ESPEAK_WORKER);
    this.worker.on('message', (reply: EspeakReply) => {
      const job = this.current;
      this.current = undefined;
      if (job && job.job.id === reply.id) {
        if (reply.ok) job.resolve(reply.pcm);
        else job.reject(new Error(reply.message));
      }
      onFree(this);
    });
    const fail = (error: Error) => {
      if (this.dead) return;
      this.dead = true;
      this.current?.reject(error);
      this.current = undefined;
      onFree(this);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`eSpeak NG thread exited (${code})`)));
  }

  run(job: Queued): void {
    clearTimeout(this.idleTimer);
    this.current = job;
    this.worker.ref();
    this.worker.postMessage(job.job);
  }
}

export class EspeakPool {
  private readonly threads = new Set<EspeakThread>();
  private readonly idle: EspeakThread[] = [];
  private readonly queue: Queued[] = [];
  private readonly size: number;
  private readonly idleMs: number;
  private readonly maxCalls: number;
  private calls = 0;
  private nextId = 0;
  private closed = false;

  constructor(options: EspeakPoolOptions = {}) {
    this.size = Math.max(1, options.size ?? Math.min(2, availableParallelism()));
    this.idleMs = options.idleMs ?? 30_000;
    this.maxCalls = Math.max(1, options.maxCalls ?? this.size * 4);
  }

  /** Takes a call slot (SpeechBusyError when none is free); the answer gives it back, once however often called. */
  admit(): () => void {
    if (this.calls >= this.maxCalls) throw new SpeechBusyError();
    this.calls += 1;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.calls -= 1;
    };
  }

  /** The PCM of one sentence (16-bit mono at 22,050 Hz). */
  synthesize(job: SentenceJob): Promise<Uint8Array> {
    if (this.closed) return Promise.reject(new Error('The speech engine is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ job: { ...job, id: (this.nextId += 1) }, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const queued of this.queue.splice(0)) queued.reject(new Error('The speech engine is closed'));
    await Promise.all([...this.threads].map((thread) => thread.worker.terminate()));
    this.threads.clear();
    this.idle.length = 0;
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let thread = this.idle.pop();
      while (thread?.dead) thread = this.idle.pop();
      if (!thread) {
        for (const known of this.threads) if (known.dead) this.threads.delete(known);
        if (this.threads.size >= this.size) return;
        thread = new EspeakThread((free) => this.freed(free));
        this.threads.add(thread);
      }
      thread.run(this.queue.shift()!);
    }
  }

  private freed(thread: EspeakThread): void {
    if (thread.dead) {
      this.threads.delete(thread);
    } else {
      thread.worker.unref();
      this.idle.push(thread);
      thread.idleTimer = setTimeout(() => this.retire(thread), this.idleMs).unref();
    }
    this.dispatch();
  }

  private retire(thread: EspeakThread): void {
    const at = this.idle.indexOf(thread);
    if (at < 0 || thread.current) return;
    this.idle.splice(at, 1);
    this.threads.delete(thread);
    thread.dead = true;
    void thread.worker.terminate();
  }
}
