import { workerData } from 'node:worker_threads';
import sharp from 'sharp';
import { backgroundThisThread, thisThreadId, type BackgroundPriority } from '../../thread-priority.ts';
import { serveCalls } from '../../worker-thread.ts';
import { encodePicture } from './picture-encode.ts';
import type { PictureCall, PictureReply } from './picture-thread.ts';
import { renderPicture } from './simulator-picture.ts';

/*
 * The picture thread (picture-thread.ts): draws the built-in engine's pictures and runs re-encodes. Its own work is
 * setting up pipelines and taking their results, background work like libvips' (src/thread-priority.ts).
 */
const settings = workerData as { priority?: BackgroundPriority; threadId?: SharedArrayBuffer } | null;
// The thread's id first, so the process can move the thread even while it is starved of CPU (picture-priority.ts).
if (settings?.threadId) Atomics.store(new Int32Array(settings.threadId), 0, Number(thisThreadId() ?? 0));
backgroundThisThread(settings?.priority ?? 'idle');
// libvips' settings are the process's: the operation cache stays off, as pixel-work.ts set it.
sharp.cache(false);

serveCalls<PictureCall, PictureReply>(async (call) => {
  if (call.kind === 'render') return { data: await renderPicture(call.request, call.seed) };
  return encodePicture(call.bytes, call.plan);
});
