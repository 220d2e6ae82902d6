import { UpstreamError } from '../../errors.ts';
import { QueueApiOptionsSchema, type QueueApiOptions } from '../../operator-config/queue-api-options.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { pause } from '../backoff.ts';
import { JobRefusedError, type JobEngine, type JobRequest, type JobResult, type JobRunContext } from './job-engine.ts';
import { pickField, upstreamBody } from './queue-api.fields.ts';

/*
 * A generic queue API, as fal.ai's queue and Replicate's predictions work: POST the job (submit), GET its status
 * until it is done (poll), GET the result (fetch), whose media is either the answer's bytes or a URL in its JSON.
 * Paths and field names come from the provider's `options` (docs/job-engines.md). Every HTTP call is retried with
 * exponential backoff on upstream faults (5xx, 429, timeouts, connection errors); a 4xx refusal ends the job
 * (JobRefusedError: FAILED, no retry). A fault that outlasts the retries fails this attempt: the queue tries the
 * whole job again, and after its last attempt the job is FAILED and its hold released.
 */

const DEFAULT_TIMEOUT_MS = 30_000;
const CONTENT_TYPES: Record<string, string> = { mp3: 'audio/mpeg', wav: 'audio/wav', flac: 'audio/flac' };

/** A fault worth another try of the same call (the message is shown to callers: no URL, no provider name). */
class UpstreamFault extends UpstreamError {
  constructor(
    message: string,
    readonly detail: string,
  ) {
    super(message, 'UPSTREAM_ERROR');
  }
}

export class QueueApiJobEngine implements JobEngine {
  readonly id: string;
  readonly simulated = false;
  private readonly options: QueueApiOptions;
  private readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(provider: ProviderConfig) {
    this.id = provider.id;
    this.options = QueueApiOptionsSchema.parse(provider.options ?? {});
    this.baseUrl = (provider.baseUrl ?? '').replace(/\/+$/, '');
    this.timeoutMs = provider.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.headers = {
      ...provider.headers,
      ...(provider.apiKey ? { authorization: `${this.options.authScheme} ${provider.apiKey}` } : {}),
    };
  }

  async run(upstreamModel: string, request: JobRequest, context: JobRunContext): Promise<JobResult> {
    const o = this.options;
    const fields = upstreamBody(request);
    const body = o.inputField ? { [o.inputField]: fields } : fields;
    const submitted = await this.json('POST', this.path(o.submitPath, upstreamModel), context, body);
    const id = pickField(submitted, o.idField);
    if (typeof id !== 'string' && typeof id !== 'number')
      throw new UpstreamFault('The engine did not accept the job', `no ${o.idField} in the submit answer`);
    const jobPath = (template: string) => this.path(template, upstreamModel, String(id));
    for (;;) {
      const status = await this.json('GET', jobPath(o.statusPath), context);
      const state = String(pickField(status, o.statusField) ?? '');
      if (o.completedStatuses.includes(state)) break;
      if (o.failedStatuses.includes(state))
        throw new UpstreamFault(
          'The engine failed to produce the media',
          `upstream job ${id} ${state}: ${JSON.stringify(pickField(status, o.errorField) ?? null)}`,
        );
      const progress = o.progressField ? Number(pickField(status, o.progressField)) : Number.NaN;
      if (Number.isFinite(progress)) context.progress(progress);
      if (!(await pause(o.pollIntervalMs, context.signal))) context.signal.throwIfAborted();
    }
    const fallbackType = request.kind === 'video' ? 'video/mp4' : (CONTENT_TYPES[request.format] ?? 'audio/mpeg');
    const result = await this.call('GET', jobPath(o.resultPath), context);
    if (!result.contentType.startsWith('application/json'))
      return { kind: 'media', bytes: result.bytes, contentType: result.contentType || fallbackType };
    const found = pickField(parseJson(result.bytes), o.mediaUrlField);
    const url = Array.isArray(found) ? (found as unknown[])[0] : found;
    if (typeof url !== 'string' || !/^https?:\/\//.test(url))
      throw new UpstreamFault('The engine answered without the media', `no URL at ${o.mediaUrlField}`);
    const media = await this.call('GET', url, context);
    const contentType = media.contentType && media.contentType !== 'application/octet-stream' ? media.contentType : '';
    return { kind: 'media', bytes: media.bytes, contentType: contentType || fallbackType };
  }

  private path(template: string, model: string, id = ''): string {
    const path = template.replaceAll('{model}', model).replaceAll('{id}', encodeURIComponent(id));
    return `${this.baseUrl}${path}`;
  }

  private async json(method: string, url: string, context: JobRunContext, body?: unknown): Promise<unknown> {
    const answer = await this.call(method, url, context, body);
    return parseJson(answer.bytes);
  }

  /** One HTTP call, tried again after upstream faults; a 4xx is a refusal (no retry). */
  private async call(
    method: string,
    url: string,
    context: JobRunContext,
    body?: unknown,
  ): Promise<{ bytes: Buffer; contentType: string }> {
    const { retries, retryBaseMs } = this.options;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.once(method, url, context.signal, body);
      } catch (error) {
        if (!(error instanceof UpstreamFault) || attempt >= retries) throw error;
        const delay = retryBaseMs * 2 ** attempt * (1 + Math.random() / 2);
        if (!(await pause(delay, context.signal))) context.signal.throwIfAborted();
      }
    }
  }

  private async once(
    method: string,
    url: string,
    signal: AbortSignal,
    body?: unknown,
  ): Promise<{ bytes: Buffer; contentType: string }> {
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: { ...this.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)]),
      });
    } catch (error) {
      signal.throwIfAborted();
      const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
      throw new UpstreamFault(
        timedOut ? `The engine did not answer within ${this.timeoutMs} ms` : 'The engine could not be reached',
        error instanceof Error ? error.message : String(error),
      );
    }
    if (response.status >= 400) {
      const text = (await response.text().catch(() => '')).slice(0, 500);
      if (response.status >= 500 || response.status === 429 || response.status === 408)
        throw new UpstreamFault(`The engine failed (HTTP ${response.status})`, text);
      throw new JobRefusedError(`The engine refused the job (HTTP ${response.status})`);
    }
    const declared = Number(response.headers.get('content-length') ?? 0);
    if (declared > this.options.maxResultBytes) throw new JobRefusedError('The engine answered with too large a file');
    const bytes = Buffer.from(await response.arrayBuffer());
    if (bytes.length > this.options.maxResultBytes)
      throw new JobRefusedError('The engine answered with too large a file');
    return { bytes, contentType: (response.headers.get('content-type') ?? '').split(';')[0]!.trim() };
  }
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    throw new UpstreamFault('The engine sent an unreadable answer', bytes.subarray(0, 200).toString('utf8'));
  }
}
