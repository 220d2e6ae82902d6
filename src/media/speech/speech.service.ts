import type { AuthContext } from '../../auth/auth-context.ts';
import { requireAccount } from '../../auth/permissions.ts';
import type { RateLimiter } from '../../rate-limits/rate-limiter.ts';
import type { BillingService } from '../../billing/billing.service.ts';
import type { SettledCharge } from '../../billing/billing.types.ts';
import type { PaidCall } from '../../billing/paid-call.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import type { CatalogModel } from '../../catalog/model.ts';
import type { Database } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import type { AudioFormat, SpeechRequest } from '../../providers/speech/speech-engine.ts';
import type { SpeechGateway } from '../../providers/speech/speech-gateway.ts';
import { cancelledError } from '../../providers/upstream-errors.ts';
import { parseInput } from '../../validation.ts';
import { billedCharacters, speechCost, speechUsage } from './speech-pricing.ts';
import {
  catalogVoice,
  CLONED_VOICE,
  fieldError,
  resolveSpeechModel,
  responseFormat,
  supportedOptions,
} from './speech-model.ts';
import { SpeechInput } from './speech.inputs.ts';
import { VoiceCloning, type CloneOutcome, type CloneUpload, type ModelVoices } from './voice-cloning.ts';
import { listVoicesFor, type ListedVoice } from './voice-list.ts';
import { findVoice, sweepExpiredVoices } from './voices.repository.ts';

export interface SpeechDescription {
  readonly model: string;
  readonly voice: string;
  readonly format: AudioFormat;
  readonly contentType: string;
  /** Characters billed (Unicode code points of `input`). */
  readonly characters: number;
}

/** A whole answer (charged), or a stream that is charged when it ends and not at all when it is abandoned. */
export type SpeechOutcome =
  | (SpeechDescription & { readonly streaming: false; readonly audio: Uint8Array; readonly charge: SettledCharge })
  | (SpeechDescription & { readonly streaming: true; readonly chunks: AsyncIterable<Uint8Array> });

export interface SpeechServiceDeps {
  readonly db: Database;
  readonly billing: BillingService;
  readonly catalog: CatalogService;
  readonly gateway: SpeechGateway;
  readonly logger: Logger;
  /** Per-key rate limits (none: unlimited). */
  readonly rateLimiter?: RateLimiter | undefined;
  readonly now?: () => Date;
}

/**
 * Text to speech (POST /audio/speech, GraphQL synthesizeSpeech) and voice cloning (POST /audio/voices, cloneVoice,
 * voices). Prices are per character of input, known before the call: the exact cost is held, the engine runs, and
 * the hold is settled when the audio was delivered in full (for a stream: when it ended) or released otherwise.
 */
export class SpeechService {
  private readonly cloning: VoiceCloning;
  private readonly now: () => Date;

  constructor(private readonly deps: SpeechServiceDeps) {
    this.now = deps.now ?? (() => new Date());
    this.cloning = new VoiceCloning({ ...deps, now: this.now });
  }

  get gateway(): SpeechGateway {
    return this.deps.gateway;
  }

  async synthesize(auth: AuthContext, raw: unknown, options: { signal?: AbortSignal } = {}): Promise<SpeechOutcome> {
    const account = requireAccount(auth);
    const input = parseInput(SpeechInput, raw);
    const model = await resolveSpeechModel(this.deps.catalog, account, input.model);
    const format = responseFormat(model, input.response_format);
    const voice = await this.voiceFor(account.accountId, model, input.voice);
    const request: SpeechRequest = {
      text: input.input,
      voice: voice.engineVoice,
      format,
      speed: input.speed,
      language: input.language,
      ...supportedOptions(model, input),
      streaming: input.streaming,
    };
    const characters = billedCharacters(input.input);
    await this.deps.rateLimiter?.admit(account, model); // before the hold: a 429 is never charged
    // An engine that fails, or a caller gone before the whole answer, releases the hold: nothing is charged.
    return this.deps.billing.paidCall<SpeechOutcome>(account, speechCost(model, characters), async (paid) => {
      const started = performance.now();
      const { providerId, audio: synthesized } = await this.deps.gateway.synthesize(model.providers, request, options);
      const { chunks, contentType } = synthesized;
      const description = { model: model.id, voice: voice.id, format, contentType, characters };
      const usage = () =>
        speechUsage(model, characters, {
          requestId: account.requestId,
          executionTimeMs: Math.round(performance.now() - started),
          notes: `Speech, ${characters} characters, voice ${voice.id}, ${format}`,
          providerId,
        });
      if (input.streaming)
        return { ...description, streaming: true, chunks: this.metered(chunks, paid.handOff(), usage) };
      const audio = await collect(chunks, options.signal);
      return { ...description, streaming: false, audio, charge: await paid.settle(usage()) };
    });
  }

  /** Clones a voice from a reference sample: `vv_<id>`, usable by this account with this model only. */
  cloneVoice(auth: AuthContext, upload: CloneUpload, options: { signal?: AbortSignal } = {}): Promise<CloneOutcome> {
    return this.cloning.clone(auth, upload, options);
  }

  /** Deletes expired cloned voices of every account (the Lifecycle runs it periodically); answers how many. */
  sweepExpiredVoices(now: Date = this.now()): Promise<number> {
    return sweepExpiredVoices(this.deps.db, now);
  }

  /** A model's catalog voices and the caller's cloned voices for it. */
  voices(auth: AuthContext, raw: unknown): Promise<ModelVoices> {
    return this.cloning.list(auth, raw);
  }

  /** Every voice the caller can speak with: the models' built-in voices and its own cloned ones (REST). */
  listVoices(auth: AuthContext, raw: unknown): Promise<ListedVoice[]> {
    return listVoicesFor({ catalog: this.deps.catalog, db: this.deps.db, now: this.now }, auth, raw);
  }

  close(): Promise<void> {
    return this.deps.gateway.close();
  }

  /** A catalog voice of the model, or a live cloned voice of this account made with this model. */
  private async voiceFor(
    accountId: string,
    model: CatalogModel,
    voice: string | undefined,
  ): Promise<{ id: string; engineVoice: SpeechRequest['voice'] }> {
    if (voice === undefined || !voice.startsWith('vv_')) {
      const id = catalogVoice(model, voice);
      return { id, engineVoice: id };
    }
    const stored = CLONED_VOICE.test(voice) ? await findVoice(this.deps.db, voice, this.now()) : undefined;
    // Another account's handle reads as unknown: whether it exists is not the caller's business.
    if (!stored || stored.accountId !== accountId)
      throw fieldError('voice', `Unknown or expired cloned voice ${voice}`);
    if (stored.modelId !== model.id)
      throw fieldError('voice', `Cloned voice ${voice} was made with model ${stored.modelId}; use it with that model`);
    if (!this.deps.gateway.primary(model.providers)?.canClone)
      throw fieldError('voice', `Model ${model.id} cannot use cloned voices`);
    return { id: voice, engineVoice: { handle: voice, clonedFrom: Buffer.from(stored.sample) } };
  }

  /** The stream as the client reads it: settled once it ended, released if it broke or the client left early. */
  private async *metered(
    chunks: AsyncIterable<Uint8Array>,
    paid: PaidCall,
    usage: () => ReturnType<typeof speechUsage>,
  ): AsyncGenerator<Uint8Array> {
    paid.keepAlive();
    try {
      for await (const chunk of chunks) yield chunk;
      await paid.settle(usage());
    } finally {
      await paid.release(); // a no-op once settled
    }
  }
}

/** Every chunk, joined; the caller's abort stops the engine (its chunks end with a cancellation). */
async function collect(chunks: AsyncIterable<Uint8Array>, signal: AbortSignal | undefined): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) {
    if (signal?.aborted) throw cancelledError();
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}
