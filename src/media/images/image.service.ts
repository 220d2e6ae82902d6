import { randomInt, randomUUID } from 'node:crypto';
import { modelPrivacyOf, type AccountAuthContext, type AuthContext } from '../../auth/auth-context.ts';
import { requireAccount } from '../../auth/permissions.ts';
import type { RateLimiter } from '../../rate-limits/rate-limiter.ts';
import type { BillingService } from '../../billing/billing.service.ts';
import type { SettledCharge } from '../../billing/billing.types.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import type { CatalogModel } from '../../catalog/model.ts';
import { clip, ForbiddenError, InvalidModelError, UpstreamError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { brokenError, cancelledError } from '../../providers/upstream-errors.ts';
import type { GenerateImageRequest, ImageFormat } from '../../providers/image/image-engine.ts';
import type { ImageGateway } from '../../providers/image/image-gateway.ts';
import { parseInput } from '../../validation.ts';
import { GenerateImageInput, ImageStylesQuery, OpenAIImageInput, SEED_LIMIT } from './image.inputs.ts';
import {
  fieldError,
  imagePrice,
  imageRules,
  imagesCost,
  imageUsage,
  nearestAspectRatio,
  resolveSize,
  type ImageRules,
  type ResolvedSize,
} from './image-rules.ts';
import { postProcess, type ProcessedImage } from './post-process.ts';
import type { Slots } from './slots.ts';

/*
 * Image generation for accounts (POST /image/generate, POST /images/generations, GraphQL generateImage): checks
 * the request against the model's rules, reserves the price of every picture before the engine runs, and charges
 * only once every picture is made and post-processed (billing.runMetered releases the hold on any failure or when
 * the caller went away). Prompts are neither logged nor stored.
 */

const DEFAULT_STEPS = 8;

export interface ImageTiming {
  /** Milliseconds the engine took. */
  readonly inferenceDuration: number;
  /** Checking the request and the model's rules. */
  readonly inferencePreprocessingTime: number;
  /** From the checks to the engine call (the reservation). */
  readonly inferenceQueueTime: number;
  readonly total: number;
}

export interface GeneratedImages {
  readonly id: string;
  readonly model: CatalogModel;
  readonly images: readonly ProcessedImage[];
  /** The seed used (drawn at random when the caller sent none or 0). */
  readonly seed: number;
  /** The request as it ran, with defaults and the seed filled in. */
  readonly request: Record<string, string | number | boolean | null>;
  readonly timing: ImageTiming;
  readonly simulated: boolean;
  /** Some picture was blurred as adult content. */
  readonly blurred: boolean;
  readonly charge: SettledCharge;
}

interface ImageJob {
  readonly model: CatalogModel;
  readonly size: ResolvedSize;
  readonly request: GenerateImageRequest;
  readonly format: ImageFormat;
  readonly metadata: boolean;
  /** The caller's `hide_watermark`; else the model's `watermark` setting decides (watermarkOf). */
  readonly hideWatermark: boolean;
  readonly safeMode: boolean;
  readonly started: number;
}

export interface ImageServiceDeps {
  readonly billing: BillingService;
  readonly catalog: CatalogService;
  readonly gateway: ImageGateway;
  readonly logger: Logger;
  /** Per-key rate limits (none: unlimited). */
  readonly rateLimiter?: RateLimiter | undefined;
  /** The process's queue for pixel work (pixel-work.ts). */
  readonly pixelWork: Slots;
  /** Providers whose engine runs in this process (the simulator): their calls take a turn whole. */
  readonly localProviders: ReadonlySet<string>;
}

export class ImageService {
  constructor(private readonly deps: ImageServiceDeps) {}

  /** POST /image/generate. */
  async generate(auth: AuthContext, input: unknown, options: { signal?: AbortSignal } = {}): Promise<GeneratedImages> {
    const started = performance.now();
    const account = requireAccount(auth);
    const body = parseInput(GenerateImageInput, input);
    if (body.inpaint !== undefined && body.inpaint !== null)
      throw fieldError('inpaint', 'inpainting through image generation is deprecated and disabled; use /image/edit');
    if (body.return_binary && body.variants > 1)
      throw fieldError('variants', 'only 1 with return_binary (one picture per binary answer)');
    if (body.enable_web_search)
      throw fieldError('enable_web_search', 'no image model of this service searches the web');
    const model = await this.resolveModel(account, body.model, false);
    const rules = imageRules(model);
    checkPrompt(rules, body.prompt);
    const size = resolveSize(rules, body);
    const steps = resolveSteps(rules, body.steps);
    if (body.style_preset !== undefined) await this.checkStyle(model, body.style_preset, options.signal);
    const seed = body.seed === 0 ? randomSeed() : body.seed;
    const request: GenerateImageRequest = {
      prompt: body.prompt,
      negativePrompt: body.negative_prompt,
      width: size.width,
      height: size.height,
      seed,
      steps,
      cfgScale: body.cfg_scale,
      stylePreset: body.style_preset,
      loraStrength: body.lora_strength,
      variants: body.variants,
    };
    const job: ImageJob = {
      model,
      size,
      request,
      format: body.format,
      metadata: body.embed_exif_metadata,
      hideWatermark: body.hide_watermark,
      safeMode: body.safe_mode,
      started,
    };
    const echo = {
      model: model.id,
      prompt: body.prompt,
      negative_prompt: body.negative_prompt ?? null,
      width: size.width,
      height: size.height,
      aspect_ratio: size.aspectRatio ?? null,
      resolution: size.resolution ?? null,
      seed,
      steps,
      cfg_scale: body.cfg_scale ?? null,
      style_preset: body.style_preset ?? null,
      lora_strength: body.lora_strength ?? null,
      variants: body.variants,
      format: body.format,
      safe_mode: body.safe_mode,
      hide_watermark: body.hide_watermark,
      embed_exif_metadata: body.embed_exif_metadata,
      return_binary: body.return_binary,
    };
    return this.produce(account, job, echo, options.signal);
  }

  /** POST /images/generations (OpenAI-compatible): one picture, any unknown model name means the default. */
  async generateOpenAI(
    auth: AuthContext,
    input: unknown,
    options: { signal?: AbortSignal } = {},
  ): Promise<GeneratedImages & { responseFormat: 'b64_json' | 'url' }> {
    const started = performance.now();
    const account = requireAccount(auth);
    const body = parseInput(OpenAIImageInput, input);
    const model = await this.resolveModel(account, body.model, true);
    const rules = imageRules(model);
    checkPrompt(rules, body.prompt);
    const size = openAISize(rules, body.size ?? 'auto');
    const seed = randomSeed();
    const steps = rules.steps?.default ?? DEFAULT_STEPS;
    const format = body.output_format ?? 'png';
    const job: ImageJob = {
      model,
      size,
      request: { prompt: body.prompt, width: size.width, height: size.height, seed, steps, variants: 1 },
      format,
      metadata: false,
      hideWatermark: false,
      safeMode: body.moderation !== 'low',
      started,
    };
    const echo = { model: model.id, prompt: body.prompt, width: size.width, height: size.height, seed, format };
    const generated = await this.produce(account, job, echo, options.signal);
    return { ...generated, responseFormat: body.response_format ?? 'b64_json' };
  }

  /** GET /image/styles: the style names of a model (default: the default image model). */
  async styles(auth: AuthContext, query: unknown, options: { signal?: AbortSignal } = {}): Promise<string[]> {
    const { model: name } = parseInput(ImageStylesQuery, query);
    const account = auth.kind === 'apiKey' || auth.kind === 'wallet' ? auth : undefined;
    const model = await this.resolveModel(account, name ?? 'default', name === undefined);
    return (await this.deps.gateway.styles(model.providers, { signal: options.signal })).result;
  }

  private async produce(
    account: AccountAuthContext,
    job: ImageJob,
    echo: GeneratedImages['request'],
    signal: AbortSignal | undefined,
  ): Promise<GeneratedImages> {
    const { model, request } = job;
    const price = imagePrice(model, job.size.resolution);
    await this.deps.rateLimiter?.admit(account, model); // before the hold: a 429 is never charged
    const checked = performance.now();
    let engineMs = 0;
    let queuedMs = 0;
    const { result, charge } = await this.deps.billing.runMetered(account, {
      maxCost: imagesCost(price, request.variants),
      run: async () => {
        const primary = model.providers[0]?.providerId;
        const local = primary !== undefined && this.deps.localProviders.has(primary);
        // A local engine's call is pixel work from start to end; a remote one's wait is not, only a re-encode is.
        const made = local
          ? await this.deps.pixelWork.run(() => this.make(job, signal, undefined), signal)
          : await this.make(job, signal, this.deps.pixelWork);
        engineMs = made.engineMs;
        queuedMs = made.calling - checked;
        // A caller that went away is not charged for pictures nobody will receive.
        if (signal?.aborted) throw cancelledError();
        return made;
      },
      usage: ({ images, simulated, providerId }) =>
        imageUsage(model, price, images.length, {
          requestId: account.requestId,
          executionTimeMs: Math.round(engineMs),
          notes:
            `Image generation (${model.id}), ${images.length} × ${job.size.width}x${job.size.height}` +
            (simulated ? ', simulated' : ''),
          providerId,
        }),
    });
    const total = performance.now() - job.started;
    return {
      id: randomUUID(),
      model,
      images: result.images,
      seed: request.seed,
      request: echo,
      timing: {
        inferenceDuration: Math.round(engineMs),
        inferencePreprocessingTime: Math.round(checked - job.started),
        inferenceQueueTime: Math.round(queuedMs),
        total: Math.round(total),
      },
      simulated: result.simulated,
      blurred: result.images.some((image) => image.blurred),
      charge,
    };
  }

  /** The engine's pictures, post-processed; `slots` is where a re-encode waits (none: the caller holds a turn). */
  private async make(job: ImageJob, signal: AbortSignal | undefined, slots: Slots | undefined) {
    const { model, request } = job;
    const calling = performance.now();
    const answer = await this.deps.gateway.generate(model.providers, request, { signal });
    const engineMs = performance.now() - calling;
    if (answer.result.length < request.variants) throw brokenError('sent fewer pictures than asked for');
    const watermark = !job.hideWatermark && watermarkOf(model, answer.simulated);
    const images = await Promise.all(
      answer.result.slice(0, request.variants).map((image) =>
        postProcess(image, {
          format: job.format,
          metadata: job.metadata ? { prompt: request.prompt, model: model.id, seed: request.seed } : undefined,
          watermark,
          safeMode: job.safeMode,
          slots,
          signal,
        }),
      ),
    );
    return { images, simulated: answer.simulated, providerId: answer.providerId, calling, engineMs };
  }

  /**
   * An image model by id, trait or compatibility name. Unknown names are 400 INVALID_MODEL, or the default image
   * model when `orDefault` (the OpenAI route, where clients send names such as gpt-image-1).
   */
  private async resolveModel(
    account: AccountAuthContext | undefined,
    name: string,
    orDefault: boolean,
  ): Promise<CatalogModel> {
    const { catalog } = this.deps;
    const lookup = await catalog.lookupModel(name, 'image');
    let model = lookup.model;
    if (!model && orDefault)
      model = (await catalog.resolveModel('default', 'image')) ?? (await catalog.listModels('image'))[0];
    if (!model) {
      const otherType = lookup.model === undefined ? lookup.otherType : undefined;
      if (orDefault) throw new UpstreamError('No image model is configured', 'SERVICE_UNAVAILABLE');
      throw new InvalidModelError(
        otherType
          ? `model: ${clip(name)} is a ${otherType} model; image generation needs an image model`
          : `model: unknown image model ${clip(name)}; use an image model id from GET /api/v1/models?type=image`,
      );
    }
    if (account && modelPrivacyOf(account) === 'PRIVATE_ONLY' && model.privacy !== 'private')
      throw new ForbiddenError(`This API key may only use private models; ${model.id} is ${model.privacy}`);
    if (model.offline) throw new UpstreamError(`Model ${model.id} is offline`, 'MODEL_OFFLINE');
    return model;
  }

  private async checkStyle(model: CatalogModel, style: string, signal: AbortSignal | undefined): Promise<void> {
    const { result: styles } = await this.deps.gateway.styles(model.providers, { signal });
    if (styles.includes(style)) return;
    throw fieldError(
      'style_preset',
      styles.length === 0 ? 'this model has no styles' : clip(`must be one of: ${styles.join(', ')}`, 280),
    );
  }
}

function checkPrompt(rules: ImageRules, prompt: string): void {
  const limit = rules.promptCharacterLimit;
  if (limit !== undefined && [...prompt].length > limit)
    throw fieldError('prompt', `at most ${limit} characters for this model`);
}

function resolveSteps(rules: ImageRules, steps: number | undefined): number {
  if (!rules.steps) return steps ?? DEFAULT_STEPS;
  if (steps !== undefined && steps > rules.steps.max)
    throw fieldError('steps', `at most ${rules.steps.max} for this model`);
  return steps ?? rules.steps.default;
}

/** OpenAI's `size` in the model's sizing style: pixels as asked, else the nearest aspect ratio at the default tier. */
function openAISize(rules: ImageRules, size: string): ResolvedSize {
  const match = /^(\d+)x(\d+)$/.exec(size);
  if (rules.sizing === 'pixels') {
    if (!match) return resolveSize(rules, {});
    const snap = (value: number) => Math.max(rules.divisor, Math.round(value / rules.divisor) * rules.divisor);
    return { width: snap(Number(match[1])), height: snap(Number(match[2])) };
  }
  const aspectRatio = match ? nearestAspectRatio(rules, Number(match[1]), Number(match[2])) : undefined;
  return resolveSize(rules, { aspect_ratio: aspectRatio });
}

/**
 * Whether a model's pictures carry the mark: the operator's `watermark` for the model, else only simulated
 * pictures (labelled as such); a remote engine's picture then needs no re-encode at all.
 */
function watermarkOf(model: CatalogModel, simulated: boolean): boolean {
  const configured = model.spec.watermark;
  return typeof configured === 'boolean' ? configured : simulated;
}

/** A random non-zero seed within the documented range. */
function randomSeed(): number {
  return randomInt(1, SEED_LIMIT + 1);
}
