import { randomBytes } from 'node:crypto';
import type { AuthContext } from '../../auth/auth-context.ts';
import { requireAccount } from '../../auth/permissions.ts';
import type { BillingService } from '../../billing/billing.service.ts';
import type { SettledCharge } from '../../billing/billing.types.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import type { Database } from '../../db/database.ts';
import { PayloadTooLargeError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { cancelledError } from '../../providers/upstream-errors.ts';
import { decodeToPcm } from '../../providers/speech/ffmpeg.ts';
import type { SpeechGateway } from '../../providers/speech/speech-gateway.ts';
import { parseInput } from '../../validation.ts';
import { voiceClonePrice, voiceCloneUsage } from './speech-pricing.ts';
import { fieldError, FALLBACK_VOICE, resolveSpeechModel, specOf } from './speech-model.ts';
import { CloneVoiceInput, VoicesQueryInput } from './speech.inputs.ts';
import { deleteExpiredVoices, insertVoice, listVoices, type VoiceSummary } from './voices.repository.ts';

/*
 * Voice cloning: a reference sample (WAV or MP3, 5–60 s, at most 15 MB) becomes a `vv_<id>` handle of the caller's
 * account and of one model, kept `voice_cloning.retention_days` days. Only models whose `model_spec` declares
 * `voice_cloning` and whose engine can clone accept samples. The sample is stored as uploaded; the engine derives
 * what it needs from it when the voice is first used.
 */

export const VOICE_SAMPLE_MAX_BYTES = 15 * 1024 * 1024;
export const VOICE_SAMPLE_MAX_SECONDS = 60;
const MIN_SECONDS = 5;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface CloneUpload {
  readonly bytes: Uint8Array;
  /** The tts model the voice is for (default: the default tts model). */
  readonly model?: string | undefined;
}

export interface CloneOutcome {
  readonly voice: string;
  readonly model: string;
  readonly sampleSeconds: number;
  readonly expiresAt: Date;
  /** Null when the model's pricing has no voice_clone price (cloning is free). */
  readonly charge: SettledCharge | null;
}

export interface ModelVoices {
  readonly model: string;
  readonly voices: readonly string[];
  readonly defaultVoice: string;
  readonly cloned: readonly VoiceSummary[];
}

/** The container of a sample, from its first bytes. */
export function sampleFormat(bytes: Uint8Array): 'wav' | 'mp3' | undefined {
  const ascii = (from: number, to: number) => Buffer.from(bytes.subarray(from, to)).toString('latin1');
  if (bytes.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'wav';
  if (bytes.length >= 3 && ascii(0, 3) === 'ID3') return 'mp3';
  // An MPEG audio frame header: 11 sync bits, layer III.
  if (bytes.length >= 2 && bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0 && (bytes[1]! & 0x06) === 0x02)
    return 'mp3';
  return undefined;
}

export class VoiceCloning {
  constructor(
    private readonly deps: {
      readonly db: Database;
      readonly billing: BillingService;
      readonly catalog: CatalogService;
      readonly gateway: SpeechGateway;
      readonly logger: Logger;
      readonly now: () => Date;
    },
  ) {}

  async clone(auth: AuthContext, upload: CloneUpload, options: { signal?: AbortSignal }): Promise<CloneOutcome> {
    const account = requireAccount(auth);
    const { model: name } = parseInput(CloneVoiceInput, { model: upload.model });
    const model = await resolveSpeechModel(this.deps.catalog, account, name);
    const cloning = specOf(model).voice_cloning;
    if (!cloning || !this.deps.gateway.primary(model.providers)?.canClone)
      throw fieldError('model', `Model ${model.id} cannot clone voices`);
    if (upload.bytes.byteLength > VOICE_SAMPLE_MAX_BYTES) throw new PayloadTooLargeError(VOICE_SAMPLE_MAX_BYTES);
    const format = sampleFormat(upload.bytes);
    if (!format || !cloning.accepted_formats.includes(format))
      throw fieldError('file', `The sample must be audio in one of: ${cloning.accepted_formats.join(', ')}`);
    const minSeconds = Math.max(MIN_SECONDS, cloning.min_sample_seconds);
    const seconds = await this.measure(upload.bytes, options.signal);
    if (seconds < minSeconds)
      throw fieldError('file', `The sample is ${seconds.toFixed(1)} s long; at least ${minSeconds} s are needed`);
    if (seconds > VOICE_SAMPLE_MAX_SECONDS)
      throw fieldError('file', `The sample is longer than ${VOICE_SAMPLE_MAX_SECONDS} s`);

    const now = this.deps.now();
    const voice = {
      id: `vv_${randomBytes(12).toString('hex')}`,
      accountId: account.accountId,
      modelId: model.id,
      sample: upload.bytes,
      sampleFormat: format,
      sampleSeconds: Math.round(seconds * 100) / 100,
      createdAt: now,
      expiresAt: new Date(now.getTime() + Math.max(1, cloning.retention_days) * DAY_MS),
    };
    const started = performance.now();
    const store = async () => {
      await deleteExpiredVoices(this.deps.db, account.accountId, now);
      await insertVoice(this.deps.db, voice);
    };
    const price = voiceClonePrice(model);
    let charge: SettledCharge | null = null;
    if (price) {
      ({ charge } = await this.deps.billing.runMetered(account, {
        maxCost: price.price,
        run: store,
        usage: () =>
          voiceCloneUsage(model, price, {
            requestId: account.requestId,
            executionTimeMs: Math.round(performance.now() - started),
            voice: voice.id,
          }),
      }));
    } else {
      await store();
    }
    return { voice: voice.id, model: model.id, sampleSeconds: voice.sampleSeconds, expiresAt: voice.expiresAt, charge };
  }

  async list(auth: AuthContext, raw: unknown): Promise<ModelVoices> {
    const account = requireAccount(auth);
    const { model: name } = parseInput(VoicesQueryInput, raw);
    const model = await resolveSpeechModel(this.deps.catalog, account, name);
    const spec = specOf(model);
    const cloned = spec.voice_cloning
      ? await listVoices(this.deps.db, account.accountId, model.id, this.deps.now())
      : [];
    return {
      model: model.id,
      voices: spec.voices ?? [],
      defaultVoice: spec.default_voice ?? FALLBACK_VOICE,
      cloned,
    };
  }

  /** The sample's length, decoded (a header can claim anything); a sample ffmpeg cannot read is a 400. */
  private async measure(bytes: Uint8Array, signal: AbortSignal | undefined): Promise<number> {
    try {
      const decoded = await decodeToPcm(bytes, { rate: 8_000, maxSeconds: VOICE_SAMPLE_MAX_SECONDS, signal });
      return decoded.seconds;
    } catch (error) {
      if (signal?.aborted) throw cancelledError();
      throw fieldError('file', `The sample cannot be decoded: ${error instanceof Error ? error.message : 'unknown'}`);
    }
  }
}
