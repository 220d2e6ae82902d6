import { modelPrivacyOf, type AuthContext } from '../../auth/auth-context.ts';
import { requireAccount } from '../../auth/permissions.ts';
import type { BillingService } from '../../billing/billing.service.ts';
import type { Price, SettledCharge, Usage } from '../../billing/billing.types.ts';
import { ATTO_DIGITS, costNano, formatScaled } from '../../billing/money.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import { attoPrice, type CatalogModel } from '../../catalog/model.ts';
import { clip, ValidationError } from '../../errors.ts';
import type { AsrPricing } from '../../operator-config/schema.ts';
import { decodeToPcm } from '../../providers/speech/ffmpeg.ts';
import type { Transcript } from '../../providers/transcription/transcription-engine.ts';
import type { TranscriptionGateway } from '../../providers/transcription/transcription-gateway.ts';
import type { RateLimiter } from '../../rate-limits/rate-limiter.ts';
import { parseInput } from '../../validation.ts';
import { resolveTypedModel } from '../../catalog/typed-model.ts';
import { renderTranscript } from './transcript-formats.ts';
import { TranscriptionFields } from './transcription.inputs.ts';

/** Audio is analysed at 8 kHz mono (16 KB a second): an hour is ~58 MB in memory. */
const ANALYSIS_RATE = 8_000;
export const TRANSCRIPTION_MAX_SECONDS = 3_600;

export interface TranscriptionUpload {
  readonly bytes: Uint8Array;
  readonly filename: string | undefined;
  readonly contentType: string | undefined;
  readonly fields: Readonly<Record<string, string>>;
}

export interface TranscriptionOutcome {
  readonly model: string;
  readonly transcript: Transcript;
  readonly seconds: number;
  readonly billedSeconds: number;
  readonly simulated: boolean;
  /** The answer in the requested response_format. */
  readonly rendered: { readonly contentType: string; readonly body: string };
  readonly charge: SettledCharge;
}

const fieldError = (field: string, message: string) =>
  new ValidationError(`Invalid request: ${field}: ${message}`, [{ path: [field], message }]);

/**
 * Speech to text (POST /audio/transcriptions, GraphQL transcribeAudio): the file is decoded once with the bundled
 * ffmpeg (any format it reads; its length is the price: the model's `pricing.per_audio_second` per started
 * second), the hold is that exact price, the engine runs through the gateway, and the hold is settled, or released
 * when the engine fails.
 */
export class TranscriptionService {
  constructor(
    private readonly deps: {
      billing: BillingService;
      catalog: CatalogService;
      gateway: TranscriptionGateway;
      rateLimiter?: RateLimiter | undefined;
    },
  ) {}

  async transcribe(
    auth: AuthContext,
    upload: TranscriptionUpload,
    options: { signal?: AbortSignal } = {},
  ): Promise<TranscriptionOutcome> {
    const account = requireAccount(auth);
    const fields = parseInput(TranscriptionFields, upload.fields);
    const model = await resolveTypedModel(
      this.deps.catalog,
      { name: fields.model, type: 'asr', purpose: 'transcription' },
      modelPrivacyOf(account),
    );
    if (upload.bytes.byteLength === 0) throw fieldError('file', 'The file is empty');
    let decoded;
    try {
      decoded = await decodeToPcm(upload.bytes, {
        rate: ANALYSIS_RATE,
        maxSeconds: TRANSCRIPTION_MAX_SECONDS,
        signal: options.signal,
      });
    } catch (error) {
      throw fieldError(
        'file',
        `Not an audio file ffmpeg can read (${clip(error instanceof Error ? error.message : '')})`,
      );
    }
    if (decoded.seconds <= 0) throw fieldError('file', 'The audio has no samples');
    if (decoded.seconds > TRANSCRIPTION_MAX_SECONDS)
      throw fieldError('file', `The audio is longer than ${TRANSCRIPTION_MAX_SECONDS / 60} minutes`);
    const granularity = fields['timestamp_granularities[]'] ?? fields.timestamp_granularities;
    // veniceai-cli asks for the json timestamps with OpenAI's timestamp_granularities[] (word and segment), not
    // with `timestamps`: in json either asks for them.
    const timestamps = fields.timestamps === true || (fields.response_format === 'json' && granularity !== undefined);
    const billedSeconds = Math.max(1, Math.ceil(decoded.seconds));
    await this.deps.rateLimiter?.admit(account, model); // before the hold: a 429 is never charged
    const started = performance.now();
    const { result, charge } = await this.deps.billing.runMetered(account, {
      maxCost: audioCost(model, billedSeconds),
      run: () =>
        this.deps.gateway.transcribe(
          model.providers,
          {
            audio: upload.bytes,
            filename: upload.filename ?? 'audio',
            contentType: upload.contentType,
            seconds: decoded.seconds,
            samples: decoded.samples,
            rate: decoded.rate,
            language: fields.language,
            prompt: fields.prompt,
            temperature: fields.temperature,
            words: timestamps || granularity === 'word',
          },
          { signal: options.signal },
        ),
      usage: ({ providerId }) =>
        transcriptionUsage(model, billedSeconds, {
          requestId: account.requestId,
          executionTimeMs: Math.round(performance.now() - started),
          seconds: decoded.seconds,
          providerId,
        }),
    });
    const { simulated, providerId: _answeredBy, ...transcript } = result;
    return {
      model: model.id,
      transcript,
      seconds: decoded.seconds,
      billedSeconds,
      simulated,
      rendered: renderTranscript(transcript, fields.response_format, {
        seconds: decoded.seconds,
        timestamps,
        simulated,
      }),
      charge,
    };
  }

  close(): Promise<void> {
    return this.deps.gateway.close();
  }
}

const secondPrice = (model: CatalogModel) => attoPrice((model.spec.pricing as AsrPricing).per_audio_second);

export function audioCost(model: CatalogModel, seconds: number): Price {
  const price = secondPrice(model);
  return { usd: costNano(BigInt(seconds), price.usd), diem: costNano(BigInt(seconds), price.diem) };
}

function transcriptionUsage(
  model: CatalogModel,
  billedSeconds: number,
  details: { requestId: string; executionTimeMs: number; seconds: number; providerId: string },
): Usage {
  return {
    modelId: model.id,
    providerId: details.providerId,
    modelType: 'ASR',
    unitType: 'seconds',
    notes: `Transcription, ${Math.round(details.seconds * 10) / 10} s of audio`,
    lines: [
      {
        sku: `${model.id}-asr-audio-second`,
        lineType: 'Audio',
        units: String(billedSeconds),
        pricePerUnitUsd: formatScaled(secondPrice(model).usd, ATTO_DIGITS),
        cost: audioCost(model, billedSeconds),
      },
    ],
    inferenceDetails: { requestId: details.requestId, inferenceExecutionTime: details.executionTimeMs },
  };
}
