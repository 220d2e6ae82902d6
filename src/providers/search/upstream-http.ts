import { readAllLimited } from '../../byte-stream.ts';
import { UpstreamError } from '../../errors.ts';
import { Backoff } from '../backoff.ts';
import type { SearchUpstreamSettings } from './search-engine.ts';

/** More than any search answer needs; a larger body is refused rather than buffered. */
const MAX_BODY_BYTES = 5 * 1024 * 1024;
/** The pause before a retry, as every upstream's (src/providers/backoff.ts). */
const backoff = new Backoff();

/**
 * GETs a JSON document from a search upstream: one deadline for the whole call (retries included), a retry
 * on a connection error or a 5xx status (only before any body was read), and every failure as an UpstreamError
 * whose message holds neither the URL nor the query (they carry the caller's search terms).
 */
export async function getUpstreamJson(
  url: URL,
  headers: Record<string, string>,
  settings: SearchUpstreamSettings,
  callerSignal?: AbortSignal,
): Promise<unknown> {
  const deadline = AbortSignal.timeout(settings.timeoutMs);
  const signal = callerSignal ? AbortSignal.any([deadline, callerSignal]) : deadline;
  const abortError = () =>
    deadline.aborted
      ? new UpstreamError(`The search upstream did not answer within ${settings.timeoutMs} ms`, 'REQUEST_TIMEOUT')
      : new UpstreamError('The search was cancelled', 'UPSTREAM_ERROR');

  for (let attempt = 0; ; attempt += 1) {
    const retriesLeft = attempt < settings.maxRetries;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'GET',
        headers: { ...settings.headers, ...headers },
        signal,
        redirect: 'follow',
      });
    } catch {
      if (!signal.aborted && retriesLeft && (await backoff.pause(attempt, signal))) continue;
      throw signal.aborted
        ? abortError()
        : new UpstreamError('The search upstream could not be reached', 'UPSTREAM_ERROR');
    }
    if (response.status >= 500 && retriesLeft) {
      await response.body?.cancel().catch(() => undefined);
      if (await backoff.pause(attempt, signal)) continue;
      throw abortError();
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new UpstreamError(`The search upstream answered HTTP ${response.status}`, 'UPSTREAM_ERROR');
    }
    let text: string;
    try {
      text = await readText(response);
    } catch (error) {
      if (error instanceof UpstreamError) throw error;
      throw signal.aborted
        ? abortError()
        : new UpstreamError('The search upstream broke off its answer', 'UPSTREAM_ERROR');
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new UpstreamError('The search upstream did not answer with JSON', 'UPSTREAM_ERROR');
    }
  }
}

async function readText(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    throw new UpstreamError('The search upstream answer is too large', 'UPSTREAM_ERROR');
  }
  if (!response.body) return '';
  const body = await readAllLimited(
    response.body,
    MAX_BODY_BYTES,
    () => new UpstreamError('The search upstream answer is too large', 'UPSTREAM_ERROR'),
  );
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
}
