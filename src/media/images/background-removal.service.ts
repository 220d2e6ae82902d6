import { z } from 'zod';
import type { AuthContext } from '../../auth/auth-context.ts';
import { requireAccount } from '../../auth/permissions.ts';
import type { BillingService } from '../../billing/billing.service.ts';
import type { Price, SettledCharge, Usage } from '../../billing/billing.types.ts';
import { parseNano } from '../../billing/money.ts';
import { ValidationError } from '../../errors.ts';
import {
  HttpBackgroundRemover,
  LocalBackgroundRemover,
  type BackgroundRemover,
} from '../../providers/image/background-removal.ts';
import { PRODUCTS } from '../../rate-limits/products.ts';
import type { RateLimiter } from '../../rate-limits/rate-limiter.ts';
import { parseInput } from '../../validation.ts';
import { blameUndecodable, ImageInputLoader } from './image-input.ts';

export const BACKGROUND_REMOVAL_MODEL = 'background-remove';

/** The JSON or form fields of POST /image/background-remove: exactly one of `image` (or a file part) and `image_url`. */
export const BackgroundRemoveInput = z.strictObject({
  image: z.string().min(1).optional().describe('The picture as base64 or a data URL (or a file part named image)'),
  image_url: z
    .string()
    .refine(isPictureUrl, 'Must be an http or https URL, or a base64 data URL')
    .optional()
    .describe('The picture by URL (public addresses only), or as a base64 data URL (data:image/png;base64,…)'),
});

/** An http(s) URL, or a data URL (decoded like `image`, with its limits, by the input loader). */
function isPictureUrl(text: string): boolean {
  if (/^data:/i.test(text)) return true;
  return URL.canParse(text) && /^https?:$/.test(new URL(text).protocol);
}

export interface BackgroundRemovalOutcome {
  /** A PNG with a transparent background. */
  readonly bytes: Buffer;
  readonly charge: SettledCharge;
}

/**
 * Background removal, one price per picture: the picture is loaded and checked like edit inputs (25 MB, pixel
 * bounds, URLs under the public-address policy), cut out by the configured engine and charged only when a
 * cut-out comes back.
 */
export class BackgroundRemovalService {
  private readonly price: Price;

  constructor(
    private readonly deps: {
      billing: BillingService;
      inputs: ImageInputLoader;
      engine: BackgroundRemover;
      priceUsd: string;
      rateLimiter?: RateLimiter | undefined;
    },
  ) {
    const nano = parseNano(deps.priceUsd);
    this.price = { usd: nano, diem: nano };
  }

  async remove(
    auth: AuthContext,
    input: unknown,
    context: { file?: Uint8Array | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<BackgroundRemovalOutcome> {
    const account = requireAccount(auth);
    const body = parseInput(BackgroundRemoveInput, input);
    const given = [context.file ?? body.image, body.image_url].filter((source) => source !== undefined);
    if (given.length !== 1)
      throw new ValidationError('Invalid request: give exactly one of image (base64 or a file part) and image_url', [
        {
          path: [body.image_url === undefined ? 'image' : 'image_url'],
          message: 'Give exactly one of image and image_url',
        },
      ]);
    const field = body.image_url === undefined ? 'image' : 'image_url';
    const image = await this.deps.inputs.load([field], given[0]!, context.signal);
    await this.deps.rateLimiter?.admit(account, PRODUCTS.backgroundRemoval); // before the hold: a 429 is never charged
    let started = 0;
    const { result, charge } = await this.deps.billing.runMetered(account, {
      maxCost: this.price,
      run: async () => {
        started = performance.now();
        let bytes: Buffer;
        try {
          bytes = await this.deps.engine.remove(image.bytes, context.signal);
        } catch (error) {
          // Throwing releases the reservation: a picture that does not decode is the caller's 400, never charged.
          throw context.signal?.aborted ? error : await blameUndecodable(error, [image]);
        }
        // A caller that went away before its answer is not charged: throwing releases the reservation.
        context.signal?.throwIfAborted();
        return bytes;
      },
      usage: () => this.usage(`Background removal (${image.width}×${image.height})`, account.requestId, started),
    });
    return { bytes: result, charge };
  }

  private usage(notes: string, requestId: string, started: number): Usage {
    return {
      modelId: BACKGROUND_REMOVAL_MODEL,
      modelType: 'IMAGE',
      unitType: 'images',
      notes: `${notes}, ${this.deps.engine.id} engine`,
      lines: [
        {
          sku: `${BACKGROUND_REMOVAL_MODEL}-image-unit`,
          lineType: 'Image',
          units: '1',
          pricePerUnitUsd: this.deps.priceUsd,
          cost: this.price,
        },
      ],
      inferenceDetails: { requestId, inferenceExecutionTime: Math.round(performance.now() - started) },
    };
  }
}

const DEFAULT_SETTINGS = { url: undefined, model: 'small', priceUsd: '0.02' } as const;

/**
 * The service over the configured engine (an HTTP engine when a URL is set, else the local model), loading inputs
 * under the operator's web-scraping address policy like the edit routes. `close` ends the URL fetcher's sockets.
 */
export function createBackgroundRemovalService(deps: {
  billing: BillingService;
  settings?: { url: string | undefined; model: 'small' | 'medium'; priceUsd: string } | undefined;
  scraping: { allowNetworks: readonly string[]; timeoutMs: number };
  rateLimiter?: RateLimiter | undefined;
  /** The most pixels an input may have in all its frames (image-input.ts; default MAX_INPUT_TOTAL_PIXELS). */
  maxInputTotalPixels?: number | undefined;
}): { service: BackgroundRemovalService; close(): Promise<void> } {
  const settings = deps.settings ?? DEFAULT_SETTINGS;
  const inputs = new ImageInputLoader({
    allowNetworks: deps.scraping.allowNetworks,
    timeoutMs: deps.scraping.timeoutMs,
    maxTotalPixels: deps.maxInputTotalPixels,
  });
  const engine = settings.url ? new HttpBackgroundRemover(settings.url) : new LocalBackgroundRemover(settings.model);
  return {
    service: new BackgroundRemovalService({
      billing: deps.billing,
      inputs,
      engine,
      priceUsd: settings.priceUsd,
      rateLimiter: deps.rateLimiter,
    }),
    close: () => inputs.close(),
  };
}
