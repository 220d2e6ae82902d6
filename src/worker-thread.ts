import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { parentPort, Worker, type ResourceLimits, type TransferListItem } from 'node:worker_threads';

/*
 * Worker threads of Lagoon's own modules (src/runtime-files.ts says where each one is), and the call protocol of the
 * threads that answer one message per call: `{id, request}` in, `{id, ok, reply | message}` out.
 */

/** A module a thread runs: built JavaScript, or a TypeScript source that needs tsx registered in the thread. */
export interface ThreadModule {
  readonly url: URL;
  readonly typescript: boolean;
}

/** Built, the module is loaded as it is; from the sources tsx is registered inside the thread first. */
export function startWorker(
  module: ThreadModule,
  options: { resourceLimits?: ResourceLimits; workerData?: unknown } = {},
): Worker {
  if (!module.typescript) return new Worker(module.url, { execArgv: [], ...options });
  const tsxApi = new URL('index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api'))).href;
  const bootstrap =
    `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); ` +
    `return import(${JSON.stringify(module.url.href)}); });`;
  return new Worker(bootstrap, { eval: true, execArgv: [], ...options });
}

/**
 * A call the thread answered with an error: the work failed, not the thread. `details` holds the error's own fields
 * that were plain strings or numbers (a database error's SQLSTATE `code`, `constraint`, …).
 */
export class ThreadCallError extends Error {
  constructor(
    message: string,
    readonly details: Readonly<Record<string, string | number>> = {},
  ) {
    super(message);
  }
}

interface CallMessage<Request> {
  readonly id: number;
  readonly request: Request;
}

type ReplyMessage<Reply> =
  | { readonly id: number; readonly ok: true; readonly reply: Reply }
  | {
      readonly id: number;
      readonly ok: false;
      readonly message: string;
      readonly details: Readonly<Record<string, string | number>>;
    };

/** What a thread posts on its own, outside any call (postEvent): handed to CallThread's `onEvent`. */
interface EventMessage {
  readonly event: unknown;
}

interface Pending<Reply> {
  resolve(reply: Reply): void;
  reject(error: Error): void;
}

/**
 * One worker thread answering calls, any number in flight (the thread's own event loop interleaves them). It keeps
 * the process alive only while a call is out. Once it has failed (`dead`), every call is refused: the owner starts a
 * new one or does the work in place.
 */
export class CallThread<Request, Reply> {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending<Reply>>();
  private nextId = 0;
  dead = false;
  /** Stopped by its owner (close), not failed. */
  closed = false;

  constructor(
    private readonly name: string,
    module: ThreadModule,
    options: { workerData?: unknown; onEvent?: (event: unknown) => void } = {},
  ) {
    this.worker = startWorker(module, { workerData: options.workerData });
    this.worker.unref();
    this.worker.on('message', (message: ReplyMessage<Reply> | EventMessage) => {
      if ('event' in message) return options.onEvent?.(message.event);
      const call = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (this.pending.size === 0) this.worker.unref();
      if (message.ok) call?.resolve(message.reply);
      else call?.reject(new ThreadCallError(message.message, message.details));
    });
    const fail = (error: Error) => {
      this.dead = true;
      for (const call of this.pending.values()) call.reject(error);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`${this.name} thread exited (${code})`)));
  }

  call(request: Request, transfer: readonly TransferListItem[] = []): Promise<Reply> {
    if (this.dead) return Promise.reject(new Error(`${this.name} thread is not running`));
    const id = (this.nextId += 1);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, request } satisfies CallMessage<Request>, [...transfer]);
    });
  }

  async close(): Promise<void> {
    this.dead = true;
    this.closed = true;
    await this.worker.terminate();
  }
}

/**
 * The thread side of CallThread: answers each call with `answer`'s result, or its error's message. `transfer` names
 * the parts of a reply that move to the caller instead of being copied.
 */
export function serveCalls<Request, Reply>(
  answer: (request: Request) => Promise<Reply> | Reply,
  transfer: (reply: Reply) => readonly TransferListItem[] = () => [],
): void {
  const port = parentPort;
  if (!port) throw new Error('serveCalls runs only in a worker thread');
  port.on('message', ({ id, request }: CallMessage<Request>) => {
    Promise.resolve()
      .then(() => answer(request))
      .then(
        (reply) => port.postMessage({ id, ok: true, reply } satisfies ReplyMessage<Reply>, [...transfer(reply)]),
        (error: unknown) =>
          port.postMessage({
            id,
            ok: false,
            message: error instanceof Error ? error.message : String(error),
            details: plainFieldsOf(error),
          } satisfies ReplyMessage<Reply>),
      );
  });
}

/** The thread side of CallThread's `onEvent`: posts `event` to the owner, outside any call. */
export function postEvent(event: unknown): void {
  if (!parentPort) throw new Error('postEvent runs only in a worker thread');
  parentPort.postMessage({ event } satisfies EventMessage);
}

function plainFieldsOf(error: unknown): Record<string, string | number> {
  const fields: Record<string, string | number> = {};
  if (typeof error !== 'object' || error === null) return fields;
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number') fields[key] = value;
  }
  return fields;
}
