import { PICTURE_WORKER } from '../../runtime-files.ts';
import type { Logger } from '../../logger.ts';
import { scheduleThread, type BackgroundPriority } from '../../thread-priority.ts';
import { CallThread, ThreadCallError } from '../../worker-thread.ts';
import type { GenerateImageRequest } from './image-engine.ts';
import { encodePicture, type EncodedPicture, type EncodePlan } from './picture-encode.ts';
import { renderPicture } from './simulator-picture.ts';

/*
 * sharp's calls off the event loop. libvips does the pixel work in its own threads anyway, but building each
 * pipeline and taking its result costs the calling thread about half a millisecond a picture, and with pictures
 * coming many a second those pauses show in the p99 of every other request (bench/RESULTS.md). So the built-in
 * engine's pictures are drawn, and every re-encode runs, in one worker thread at background priority; its event loop
 * keeps any number of pictures in flight. Should the thread fail, the work runs in place.
 */

export type PictureCall =
  | { readonly kind: 'render'; readonly request: GenerateImageRequest; readonly seed: number }
  | { readonly kind: 'encode'; readonly bytes: Uint8Array; readonly plan: EncodePlan };

/** What the thread answers: the picture's bytes, and for a re-encode its size. */
export interface PictureReply {
  readonly data: Uint8Array;
  readonly info?: { readonly width: number; readonly height: number };
}

/** Set by createPixelWork (LAGOON_IMAGE_PRIORITY, the process's logger) before the thread starts. */
let settings: { priority: BackgroundPriority; logger?: Logger | undefined } = { priority: 'idle' };
let thread: CallThread<PictureCall, PictureReply> | undefined;
/** The thread's id in the system, which it writes here as it starts (0 until then, and off Linux). */
let threadId = new Int32Array(new SharedArrayBuffer(4));
/** Calls run in place because the thread failed (0 while it works). */
let inPlaceCalls = 0;
/** When the thread last failed: for a while after, calls run in place rather than start one again. */
let failedAt = Number.NEGATIVE_INFINITY;
const RETRY_AFTER_MS = 30_000;
/** Pictures larger than this are re-encoded in place (encodeInThread). */
const THREAD_MAX_BYTES = 4 * 1024 * 1024;

export function pictureCallsInPlace(): number {
  return inPlaceCalls;
}

export function configurePictureThread(value: { priority: BackgroundPriority; logger?: Logger | undefined }): void {
  const moved = value.priority !== settings.priority;
  settings = value;
  // A thread an earlier configuration started follows this one.
  if (moved) setPictureThreadPriority(value.priority);
}

/** Moves the thread, running or started later, to `priority` (picture-priority.ts raises it when pictures starve). */
export function setPictureThreadPriority(priority: BackgroundPriority): void {
  settings = { ...settings, priority };
  const tid = thread ? Atomics.load(threadId, 0) : 0;
  if (tid > 0) scheduleThread(String(tid), priority);
}

/** The running thread's id in the system, once it has started. */
export function pictureThreadId(): string | undefined {
  const tid = thread ? Atomics.load(threadId, 0) : 0;
  return tid > 0 ? String(tid) : undefined;
}

/** Stops the thread: calls in it finish in place, and the next call starts a new one (a stop is no failure). */
export async function closePictureThread(): Promise<void> {
  const stopping = thread;
  thread = undefined;
  await stopping?.close();
}

/** A Buffer over a reply's bytes (a Buffer arrives from a thread as a plain Uint8Array), without a copy. */
const bufferOf = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

async function inThread<T>(call: PictureCall, inPlace: () => Promise<T>, read: (reply: PictureReply) => T): Promise<T> {
  if (thread?.dead) {
    thread = undefined;
    failedAt = Date.now();
  }
  if (Date.now() - failedAt < RETRY_AFTER_MS) return inPlaceAfterFailure(inPlace);
  let used = thread;
  try {
    if (!used) {
      threadId = new Int32Array(new SharedArrayBuffer(4));
      used = thread = new CallThread<PictureCall, PictureReply>('picture', PICTURE_WORKER, {
        workerData: { priority: settings.priority, threadId: threadId.buffer },
      });
    }
    return read(await used.call(call));
  } catch (error) {
    // The work itself failed (a picture sharp cannot read): that is the answer. Else the thread did.
    if (error instanceof ThreadCallError) throw error;
    // The thread could not start, died with this call in it, or was closed under it (then the next call starts one).
    if (thread === used) thread = undefined;
    if (!used?.closed) {
      failedAt = Date.now();
      if (inPlaceCalls === 0)
        settings.logger?.warn({ err: error }, 'picture thread failed: pictures are made in place');
    }
    return inPlaceAfterFailure(inPlace);
  }
}

function inPlaceAfterFailure<T>(inPlace: () => Promise<T>): Promise<T> {
  inPlaceCalls += 1;
  return inPlace();
}

/** The built-in engine's picture (simulator-picture.ts) as PNG bytes. */
export function renderInThread(request: GenerateImageRequest, seed: number): Promise<Buffer> {
  return inThread(
    { kind: 'render', request, seed },
    () => renderPicture(request, seed),
    (reply) => bufferOf(reply.data),
  );
}

/**
 * A re-encode (picture-encode.ts), in the thread up to THREAD_MAX_BYTES. A picture crosses to the thread as a copy
 * (three for a moment, with the message's own), and for a large one that memory weighs more than the half
 * millisecond of the event loop the thread saves: 20 concurrent 4-megapixel edits peaked ~100 MB higher.
 */
export function encodeInThread(bytes: Uint8Array, plan: EncodePlan): Promise<EncodedPicture> {
  if (bytes.byteLength > THREAD_MAX_BYTES) return encodePicture(bytes, plan);
  return inThread(
    { kind: 'encode', bytes, plan },
    () => encodePicture(bytes, plan),
    (reply) => {
      // A reply without its size is the thread's fault: the call runs again in place.
      if (!reply.info) throw new Error('The picture thread answered a re-encode without its size');
      return { data: bufferOf(reply.data), info: reply.info };
    },
  );
}
