import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { AppError } from '../../errors.ts';
import type { UpstreamChatChunk, UpstreamChatStream } from './chat-engine.ts';
import { parseJson, reportsError, type ChunkNormaliser } from './openai-wire.ts';
import { brokenError, cancelledError } from '../upstream-errors.ts';

export type ResponseBody = Readable & { text(): Promise<string>; dump(options?: { limit: number }): Promise<void> };

/** One SSE event larger than this means a broken stream. */
const MAX_EVENT_BYTES = 4 * 1024 * 1024;

const END: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * An upstream's SSE answer read as normalised chunks, until `data: [DONE]` (or the end of a body whose choices all
 * finished; an end before that is a broken stream). Its own iterator, not an async generator: every event of every
 * stream goes through `next()`, which answers from the events already parsed without awaiting, and reads the body
 * only when none is left. Errors are mapped by the adapter's `mapError` (undefined: cancelled by us, end quietly).
 */
export class SseChunkStream implements UpstreamChatStream, AsyncIterator<UpstreamChatChunk, undefined> {
  /** Chunks parsed from what has been read, not yet handed out. */
  private readonly queue: UpstreamChatChunk[] = [];
  private readonly parser: EventSourceParser;
  // Not TextDecoder: in streaming mode it holds a native ICU converter per stream, freed only through a weak
  // handle at a full garbage collection, whose pause grows with the number of such handles.
  private readonly decoder = new StringDecoder('utf8');
  private readonly bytes: AsyncIterator<unknown>;
  /** The first bad event (malformed, an error report, oversized): thrown once the chunks before it are out. */
  private failure: AppError | undefined;
  private sawDone = false;
  /** Some choice has a finish_reason: a body that ends without [DONE] after that is complete. */
  private finished = false;
  private closed = false;
  private iterating = false;

  constructor(
    private readonly body: ResponseBody,
    private readonly normaliser: ChunkNormaliser,
    private readonly controller: AbortController,
    /** Maps a read failure to the caller's error; undefined when the stream was cancelled by us (end quietly). */
    private readonly mapError: (error: unknown) => AppError | undefined,
    /** Stops following the caller's signal; called once the stream has ended, however it ended. */
    private readonly detach: () => void,
  ) {
    this.parser = createParser({
      maxBufferSize: MAX_EVENT_BYTES,
      onEvent: (event) => this.accept(event.event, event.data),
      onError: (error) => {
        // Unknown fields and bad retry values are ignored, as the SSE spec says; an endless event is not.
        if (error.type === 'max-buffer-size-exceeded') this.failure ??= brokenError('sent an oversized stream event');
      },
    });
    this.bytes = body.iterator({ destroyOnReturn: false });
  }

  /** Resolves once the first chunk is in: a failure before any output can still be retried elsewhere. */
  async start(): Promise<void> {
    let first: UpstreamChatChunk | undefined;
    try {
      first = await this.fill();
    } catch (error) {
      const mapped = this.mapError(error) ?? cancelledError();
      this.close(false);
      throw mapped;
    }
    if (first === undefined) {
      this.close(false);
      throw brokenError('ended the stream without any output');
    }
    this.queue.unshift(first);
  }

  cancel(): void {
    if (!this.controller.signal.aborted) this.controller.abort();
    this.detach();
  }

  [Symbol.asyncIterator](): AsyncIterator<UpstreamChatChunk, undefined> {
    if (this.iterating) throw new Error('An upstream chat stream can be read once');
    this.iterating = true;
    return this;
  }

  async next(): Promise<IteratorResult<UpstreamChatChunk, undefined>> {
    if (this.closed) return END;
    // cancel() ends the stream at once, even if more chunks were already read.
    if (this.controller.signal.aborted) return this.fail(undefined);
    let chunk: UpstreamChatChunk | undefined;
    try {
      chunk = this.queue.length > 0 ? this.queue.shift() : await this.fill();
    } catch (error) {
      return this.fail(error);
    }
    if (chunk === undefined) {
      this.close(true);
      return END;
    }
    return { done: false, value: chunk };
  }

  /** The reader stopped early (break / return): the upstream must not go on generating. */
  async return(): Promise<IteratorResult<UpstreamChatChunk, undefined>> {
    this.close(false);
    return END;
  }

  private fail(error: unknown): IteratorResult<UpstreamChatChunk, undefined> {
    // Mapped before closing: closing aborts the request, which mapError would take for our own cancel.
    const mapped = this.mapError(error);
    this.close(false);
    if (mapped === undefined) return END;
    throw mapped;
  }

  /** The next chunk, reading the body as far as needed; undefined at the end of the stream. */
  private async fill(): Promise<UpstreamChatChunk | undefined> {
    for (;;) {
      if (this.queue.length > 0) return this.queue.shift();
      if (this.failure) throw this.failure;
      if (this.sawDone) return undefined;
      const read = await this.bytes.next();
      if (read.done) {
        // Some servers end without [DONE]; that is fine once every choice finished.
        if (!this.finished) throw brokenError('broke off the stream');
        this.accept(undefined, '[DONE]');
      } else {
        this.parser.feed(this.decoder.write(read.value as Buffer));
      }
    }
  }

  /** One SSE event: queued as a chunk, or the end, or the failure that stops the stream. */
  private accept(type: string | undefined, data: string): void {
    if (this.sawDone || this.failure) return;
    if (data.trim() === '[DONE]') {
      this.sawDone = true;
      const rest = this.normaliser.drain();
      if (rest) this.queue.push(rest);
      return;
    }
    const event = type === 'error' ? undefined : parseJson(data);
    if (type === 'error' || reportsError(event)) {
      this.failure = brokenError('reported an error in the stream');
      return;
    }
    const chunk = this.normaliser.normalise(event);
    if (chunk === undefined) {
      this.failure = brokenError('sent a malformed stream event');
      return;
    }
    if (chunk.choices.some((choice) => choice.finish_reason !== null)) this.finished = true;
    this.queue.push(chunk);
  }

  /**
   * Ends the stream once, however it ended. A stream that ended on its own needs no abort (aborting costs an error
   * object per stream, and the connection is reused): after [DONE] the end of the answer (usually already received)
   * is read in the background, so the kept-alive connection goes back to the pool; any other way out ends the body.
   */
  private close(completed: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    if (completed) this.detach();
    else this.cancel(); // aborts the request and stops following the caller's signal
    void this.bytes.return?.(undefined).catch(() => undefined);
    if (completed && this.sawDone) this.body.dump({ limit: MAX_EVENT_BYTES }).catch(() => undefined);
    else if (!this.body.destroyed) this.body.destroy();
  }
}
