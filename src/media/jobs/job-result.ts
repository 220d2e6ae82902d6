import { UpstreamError } from '../../errors.ts';
import type { JobResult } from '../../providers/jobs/job-engine.ts';

/*
 * An engine may keep its result and answer a URL to it (JobResult `download`): the runner copies those bytes into
 * Lagoon's media storage, so every result is served, signed, revoked and swept alike, and the engine's own URL
 * (and whatever credential it carries) never reaches a caller. The URL comes from the operator's configured
 * engine, so it is fetched as the engine itself is (no public-address policy), with a size and time cap.
 */

/** The largest result copied (a long 4K clip stays well below). */
export const MAX_RESULT_BYTES = 2 * 1024 ** 3 - 1;
const FETCH_TIMEOUT_MS = 600_000;

export async function resultMedia(
  result: JobResult,
  signal: AbortSignal,
  limitBytes = MAX_RESULT_BYTES,
): Promise<{ bytes: Buffer; contentType: string }> {
  if (result.kind === 'media') return result;
  let response: Response;
  try {
    response = await fetch(result.url, { signal: AbortSignal.any([signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]) });
  } catch {
    throw new UpstreamError("The engine's result could not be fetched", 'UPSTREAM_ERROR');
  }
  // A fault worth a retry: the attempt fails and the job is delivered again (the engine runs it again).
  if (!response.ok || !response.body)
    throw new UpstreamError(`The engine's result answered ${response.status}`, 'UPSTREAM_ERROR');
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > limitBytes)
    throw new UpstreamError(`The engine's result is larger than ${limitBytes} bytes`, 'UPSTREAM_ERROR');
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += part.byteLength;
    if (size > limitBytes)
      throw new UpstreamError(`The engine's result is larger than ${limitBytes} bytes`, 'UPSTREAM_ERROR');
    parts.push(part);
  }
  return { bytes: Buffer.concat(parts, size), contentType: result.contentType };
}
