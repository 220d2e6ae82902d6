/**
 * Aborts `target` when `source` aborts (at once if it already has); returns the function that stops following,
 * to call when the work ends. A listener rather than AbortSignal.any, which in Node 20 links the signals with
 * WeakRefs and a FinalizationRegistry entry that only a full garbage collection clears (one per call on hot paths).
 */
export function followAbort(source: AbortSignal | undefined, target: AbortController): () => void {
  if (!source) return () => undefined;
  const onAbort = () => target.abort();
  source.addEventListener('abort', onAbort, { once: true });
  if (source.aborted) target.abort();
  return () => source.removeEventListener('abort', onAbort);
}
