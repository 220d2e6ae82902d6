import { modelPrivacyOf, type AccountAuthContext, type AuthContext } from '../../auth/auth-context.ts';
import { requireAccount } from '../../auth/permissions.ts';
import type { BillingService } from '../../billing/billing.service.ts';
import type { SettledCharge } from '../../billing/billing.types.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import type { CatalogModel, ModelType } from '../../catalog/model.ts';
import { clip, ForbiddenError, InvalidModelError, UpstreamError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderBinding } from '../../catalog/model-types.ts';
import type {
  EditImageRequest,
  EngineImage,
  ImageCallOptions,
  ImageFormat,
  UpscaleImageRequest,
} from '../../providers/image/image-engine.ts';
import { parseInput } from '../../validation.ts';
import { fitTo } from './edit-sizing.ts';
import { postProcess, type ProcessedImage } from './post-process.ts';
import { editCharge, imageUsage, upscaleCharge, type EditCharge } from './edit-pricing.ts';
import { effectiveScale, outputFormat, outputSize, resolveResolution } from './edit-sizing.ts';
import { EditImageInput, MultiEditImageInput, UpscaleImageInput, type AspectRatio } from './edit.inputs.ts';
import { blameUndecodable, invalid, type ImageInputLoader, type LoadedImage } from './image-input.ts';
import type { RateLimiter } from '../../rate-limits/rate-limiter.ts';
import type { Slots } from './slots.ts';

/** What the service needs of the image gateway (src/providers/image/image-gateway.ts). */
export interface ImageEditGateway {
  edit(bindings: readonly ProviderBinding[], request: EditImageRequest, options: ImageCallOptions): Promise<Answer>;
  upscale(
    bindings: readonly ProviderBinding[],
    request: UpscaleImageRequest,
    options: ImageCallOptions,
  ): Promise<Answer>;
}
interface Answer {
  readonly providerId: string;
  readonly simulated: boolean;
  readonly result: EngineImage;
}

export interface ImageEditOutcome extends ProcessedImage {
  readonly model: string;
  /** The picture is not real model output (the built-in simulator). */
  readonly simulated: boolean;
  readonly charge: SettledCharge;
}

export interface ImageCallContext {
  readonly signal?: AbortSignal | undefined;
  /** The picture as a multipart file part, in place of the body's `image` field. */
  readonly file?: Uint8Array | undefined;
  /** Multi-edit: the pictures as multipart file parts, in place of the body's `images` field. */
  readonly files?: readonly Uint8Array[] | undefined;
}

interface InpaintConstraints {
  promptCharacterLimit?: number;
  aspectRatios?: string[];
  resolutions?: string[];
  defaultResolution?: string;
  combineImages?: boolean;
  maxInputImages?: number;
  singleImageAspectRatio?: boolean;
}

const DEFAULT_CREATIVITY = 0.01;
const MAX_CREATIVITY = 0.02;

/**
 * Image edit, multi-edit and upscale for accounts (POST /image/edit, /image/multi-edit, /image/upscale): validates,
 * loads the input pictures (image-input.ts), reserves the exact price before any engine call, runs the model's
 * engines through the gateway, re-encodes the answer and settles; a failed call is released, never charged.
 */
export class ImageEditService {
  private readonly slots: Slots;

  constructor(
    private readonly deps: {
      billing: BillingService;
      catalog: CatalogService;
      gateway: ImageEditGateway;
      inputs: ImageInputLoader;
      logger: Logger;
      /** Closes a gateway this service owns (none when it shares the app's). */
      closeGateway?: (() => Promise<void>) | undefined;
      /**
       * The process's queue for pixel work (local engine calls, output steps; pixel-work.ts): bounding the pictures
       * in flight bounds CPU and memory, whatever the number of concurrent requests.
       */
      pixelWork: Slots;
      /** Providers whose engine runs in this process (the simulator): their calls take a slot whole. */
      localProviders?: ReadonlySet<string> | undefined;
      rateLimiter?: RateLimiter | undefined;
    },
  ) {
    this.slots = deps.pixelWork;
  }

  /** Closes the URL fetcher's connections (and an own gateway's). */
  async close(): Promise<void> {
    await Promise.all([this.deps.inputs.close(), this.deps.closeGateway?.()]);
  }

  async edit(auth: AuthContext, input: unknown, context: ImageCallContext = {}): Promise<ImageEditOutcome> {
    const account = requireAccount(auth);
    const body = parseInput(EditImageInput, input);
    if (body.model !== undefined && body.modelId !== undefined && body.model !== body.modelId)
      throw invalid(['modelId'], 'modelId is a deprecated alias of model; send one of them, or the same value');
    const source = context.file ?? body.image;
    if (source === undefined) throw invalid(['image'], 'Required: base64, a data URL, an http(s) URL or a file part');
    const model = await this.model(account, body.model ?? body.modelId, 'inpaint', body.model ? 'model' : 'modelId');
    return this.runEdit(account, model, body, [source], 'image', context.signal);
  }

  async multiEdit(auth: AuthContext, input: unknown, context: ImageCallContext = {}): Promise<ImageEditOutcome> {
    const account = requireAccount(auth);
    const uploads = context.files;
    // Uploaded pictures stand in for `images`, checked by the same rules (count, and the field named in errors).
    const fields =
      uploads && typeof input === 'object' && input !== null ? { ...input, images: uploads.map(() => '-') } : input;
    const body = parseInput(MultiEditImageInput, fields);
    if (body.model !== undefined && body.modelId !== undefined && body.model !== body.modelId)
      throw invalid(['model'], 'model is an alias of modelId; send one of them, or the same value');
    const model = await this.model(account, body.modelId ?? body.model, 'inpaint', body.modelId ? 'modelId' : 'model');
    const constraints = (model.spec.constraints ?? {}) as InpaintConstraints;
    const max = constraints.maxInputImages ?? (constraints.combineImages === false ? 1 : 3);
    if (body.images.length > max) throw invalid(['images'], `This model takes at most ${max} images`);
    return this.runEdit(account, model, body, uploads ?? body.images, 'images', context.signal);
  }

  async upscale(auth: AuthContext, input: unknown, context: ImageCallContext = {}): Promise<ImageEditOutcome> {
    const account = requireAccount(auth);
    const body = parseInput(UpscaleImageInput, input);
    const source = context.file ?? body.image;
    if (source === undefined) throw invalid(['image'], 'Required: base64, a data URL, an http(s) URL or a file part');
    const model = await this.model(account, body.model, 'upscale', 'model');
    const image = await this.deps.inputs.load(['image'], source, context.signal);
    const scale = effectiveScale(body.scale ?? 2, image);
    const creativity = Math.min(MAX_CREATIVITY, Math.max(0, body.creativity ?? DEFAULT_CREATIVITY));
    const charge = upscaleCharge(model, scale);
    if (!charge) throw new InvalidModelError(`Model ${model.id} has no upscale price for this scale`);
    const notes = `Upscale ×${scale} (${image.width}×${image.height})`;
    return this.metered(account, model, charge, notes, context.signal, {
      inputs: [image],
      call: () =>
        this.deps.gateway.upscale(
          model.providers,
          { image: image.bytes, scale, creativity },
          { signal: context.signal },
        ),
      // Upscales answer PNG at the engine's size, unmarked: the caller's own picture, enlarged.
      finish: (result) => postProcess(result, { format: 'png', safeMode: true, watermark: false }),
    });
  }

  private async runEdit(
    account: AccountAuthContext,
    model: CatalogModel,
    body: {
      prompt: string;
      aspect_ratio?: AspectRatio | undefined;
      resolution?: string | undefined;
      output_format?: string | undefined;
      safe_mode?: boolean | undefined;
    },
    sources: readonly (Uint8Array | string)[],
    field: 'image' | 'images',
    signal: AbortSignal | undefined,
  ): Promise<ImageEditOutcome> {
    const constraints = (model.spec.constraints ?? {}) as InpaintConstraints;
    const limit = constraints.promptCharacterLimit;
    if (limit !== undefined && body.prompt.length > limit)
      throw invalid(['prompt'], `At most ${limit} characters for model ${model.id}`);
    const resolution = resolveResolution(body.resolution ?? constraints.defaultResolution, constraints.resolutions);
    const format: ImageFormat = outputFormat(body.output_format, resolution);
    // Cheap checks first: the ratio is checked before any picture is fetched.
    outputSize(body.aspect_ratio, constraints.aspectRatios, resolution, { width: 1, height: 1 });
    const images: LoadedImage[] = [];
    // One at a time: three 25 MB pictures are never fetched and decoded at once for one request.
    for (const [index, source] of sources.entries())
      images.push(await this.deps.inputs.load(field === 'image' ? ['image'] : ['images', index], source, signal));
    const first = images[0]!;
    const size =
      constraints.singleImageAspectRatio === false
        ? { width: first.width, height: first.height }
        : outputSize(body.aspect_ratio, constraints.aspectRatios, resolution, first);
    const charge = editCharge(model, resolution, images.length);
    const notes = `Image edit, ${images.length} input image${images.length > 1 ? 's' : ''}, ${size.width}×${size.height}`;
    return this.metered(account, model, charge, notes, signal, {
      inputs: images,
      call: () =>
        this.deps.gateway.edit(
          model.providers,
          { prompt: body.prompt, images: images.map((image) => image.bytes), ...size },
          { signal },
        ),
      // Engines may answer another size than asked: the caller gets the size the rules promise.
      finish: async (result) =>
        postProcess(
          // The engine's base64 stands for its own bytes only: not for a resized picture.
          { adult: result.adult, bytes: await fitTo(result.bytes, size) },
          { format, safeMode: body.safe_mode ?? true, watermark: false },
        ),
    });
  }

  private async metered(
    account: AccountAuthContext,
    model: CatalogModel,
    charge: EditCharge,
    notes: string,
    signal: AbortSignal | undefined,
    steps: {
      /** The caller's pictures: named in the 400 when the call fails on one that does not decode. */
      inputs: readonly LoadedImage[];
      call: () => Promise<Answer>;
      finish: (result: EngineImage) => Promise<ProcessedImage>;
    },
  ): Promise<ImageEditOutcome> {
    await this.deps.rateLimiter?.admit(account, model); // before the hold: a 429 is never charged
    let started = 0;
    // Pixel work in this process takes a slot: all of a call served by a local engine, else only the output step
    // (a remote engine's wait holds no decoded picture, and must not hold up other calls).
    const primary = model.providers[0]?.providerId;
    const local = primary !== undefined && (this.deps.localProviders?.has(primary) ?? false);
    const run = async () => {
      if (local)
        return this.slots.run(async () => {
          const answer = await steps.call();
          return { answer, output: await steps.finish(answer.result) };
        }, signal);
      const answer = await steps.call();
      return { answer, output: await this.slots.run(() => steps.finish(answer.result), signal) };
    };
    const { result, charge: settled } = await this.deps.billing.runMetered(account, {
      maxCost: charge.total,
      run: async () => {
        started = performance.now();
        let done: Awaited<ReturnType<typeof run>>;
        try {
          done = await run();
        } catch (error) {
          // Throwing releases the reservation: a picture that does not decode is the caller's 400, never charged.
          throw signal?.aborted ? error : await blameUndecodable(error, steps.inputs);
        }
        // A caller that went away before its answer is not charged: throwing releases the reservation.
        signal?.throwIfAborted();
        return done;
      },
      usage: ({ answer }) =>
        imageUsage(model, charge, {
          requestId: account.requestId,
          executionTimeMs: Math.round(performance.now() - started),
          notes,
          providerId: answer.providerId,
        }),
    });
    return { ...result.output, model: model.id, simulated: result.answer.simulated, charge: settled };
  }

  /** The named model of this type (id, trait or compatibility name), else the type's `default` trait model. */
  private async model(
    account: AccountAuthContext,
    name: string | undefined,
    type: ModelType,
    field: string,
  ): Promise<CatalogModel> {
    const { catalog } = this.deps;
    const wanted = name ?? (await catalog.traits(type)).default ?? (await catalog.listModels(type))[0]?.id;
    if (wanted === undefined) throw new UpstreamError(`No ${type} model is configured`, 'SERVICE_UNAVAILABLE');
    const lookup = await catalog.lookupModel(wanted, type);
    if (!lookup.model) {
      const other = lookup.otherType ? ` (it is a ${lookup.otherType} model)` : '';
      throw new InvalidModelError(
        `${field}: unknown ${type} model ${clip(wanted)}${other}; see GET /models?type=${type}`,
      );
    }
    const model = lookup.model;
    if (modelPrivacyOf(account) === 'PRIVATE_ONLY' && model.privacy !== 'private')
      throw new ForbiddenError(`This API key may only use private models; ${model.id} is ${model.privacy}`);
    if (model.offline) throw new UpstreamError(`Model ${model.id} is offline`, 'MODEL_OFFLINE');
    return model;
  }
}
