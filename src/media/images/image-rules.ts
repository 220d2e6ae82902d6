import type { Price, Usage } from '../../billing/billing.types.ts';
import { costNano, formatAtto } from '../../billing/money.ts';
import { attoPrice, type AttoPrice, type CatalogModel } from '../../catalog/model.ts';
import { ValidationError } from '../../errors.ts';
import { ImageConstraints } from '../../operator-config/model-spec-schema.ts';
import type { PricePair } from '../../operator-config/schema.ts';
import { RESOLUTION_LONG_SIDE, tierSize } from './edit-sizing.ts';
import { IMAGE_SIDE_DEFAULT } from './image.inputs.ts';

/*
 * An image model's rules from its catalog record (docs/api.md, Images): how it is sized — pixel models (no
 * aspectRatios in constraints) take width/height, aspect-ratio models take aspect_ratio, resolution-tier models
 * (constraints.resolutions) take aspect_ratio and resolution — its prompt limit and steps, and its price per image.
 */

export type SizingStyle = 'pixels' | 'aspect' | 'tier';

export interface ImageRules {
  readonly sizing: SizingStyle;
  readonly promptCharacterLimit: number | undefined;
  readonly steps: { readonly default: number; readonly max: number } | undefined;
  readonly divisor: number;
  readonly aspectRatios: readonly string[];
  readonly defaultAspectRatio: string;
  readonly resolutions: readonly string[];
  readonly defaultResolution: string | undefined;
}

const DEFAULT_DIVISOR = 8;
const rulesCache = new WeakMap<CatalogModel, ImageRules>();

/** The model's rules, read once per catalog snapshot (snapshot models are frozen and shared). */
export function imageRules(model: CatalogModel): ImageRules {
  let rules = rulesCache.get(model);
  if (!rules) {
    // The config loader validated the constraints; a failed parse here means none were given.
    const parsed = ImageConstraints.safeParse(model.spec.constraints ?? {});
    const c = parsed.success ? parsed.data : {};
    const resolutions = c.resolutions ?? [];
    const aspectRatios = (c.aspectRatios ?? []).filter((ratio) => ratio !== 'auto');
    rules = {
      sizing: resolutions.length > 0 ? 'tier' : aspectRatios.length > 0 ? 'aspect' : 'pixels',
      promptCharacterLimit: c.promptCharacterLimit,
      steps: c.steps,
      divisor: c.widthHeightDivisor ?? DEFAULT_DIVISOR,
      aspectRatios,
      defaultAspectRatio: c.defaultAspectRatio ?? aspectRatios[0] ?? '1:1',
      resolutions,
      defaultResolution: c.defaultResolution ?? resolutions[0],
    };
    rulesCache.set(model, rules);
  }
  return rules;
}

/** A 400 naming one field. */
export function fieldError(field: string, message: string): ValidationError {
  return new ValidationError(`Invalid request: ${field}: ${message}`, [{ path: [field], message }]);
}

export interface SizeRequest {
  readonly width?: number | undefined;
  readonly height?: number | undefined;
  readonly aspect_ratio?: string | undefined;
  readonly resolution?: string | undefined;
}

export interface ResolvedSize {
  readonly width: number;
  readonly height: number;
  readonly aspectRatio?: string;
  readonly resolution?: string;
}

const SIZING_FIELDS: Record<SizingStyle, string> = {
  pixels: 'width and height',
  aspect: 'aspect_ratio',
  tier: 'aspect_ratio and resolution',
};

/** The output size of a request, after the model's sizing rule; fields of another sizing style are refused. */
export function resolveSize(rules: ImageRules, request: SizeRequest): ResolvedSize {
  const takes = `this model is sized by ${SIZING_FIELDS[rules.sizing]}`;
  const refuse = (field: keyof SizeRequest) => {
    if (request[field] !== undefined) throw fieldError(field, `${takes}; do not send ${field}`);
  };
  if (rules.sizing === 'pixels') {
    refuse('aspect_ratio');
    refuse('resolution');
    const width = request.width ?? IMAGE_SIDE_DEFAULT;
    const height = request.height ?? IMAGE_SIDE_DEFAULT;
    for (const [field, value] of [
      ['width', width],
      ['height', height],
    ] as const) {
      if (value % rules.divisor !== 0) throw fieldError(field, `must be a multiple of ${rules.divisor} for this model`);
    }
    return { width, height };
  }
  refuse('width');
  refuse('height');
  if (rules.sizing === 'aspect') refuse('resolution');
  const aspectRatio = request.aspect_ratio ?? rules.defaultAspectRatio;
  if (rules.aspectRatios.length > 0 && !rules.aspectRatios.includes(aspectRatio))
    throw fieldError('aspect_ratio', `must be one of: ${rules.aspectRatios.join(', ')}`);
  if (parseRatio(aspectRatio) === undefined) throw fieldError('aspect_ratio', 'must look like 16:9');
  let resolution: string | undefined;
  if (rules.sizing === 'tier') {
    resolution = request.resolution ?? rules.defaultResolution;
    if (resolution === undefined || !rules.resolutions.includes(resolution))
      throw fieldError('resolution', `must be one of: ${rules.resolutions.join(', ')}`);
  }
  return { ...pixelsOf(rules, aspectRatio, resolution), aspectRatio, ...(resolution ? { resolution } : {}) };
}

function parseRatio(ratio: string): number | undefined {
  const match = /^(\d{1,4}):(\d{1,4})$/.exec(ratio);
  if (!match) return undefined;
  const [w, h] = [Number(match[1]), Number(match[2])];
  return w > 0 && h > 0 ? w / h : undefined;
}

/**
 * Pixels of an aspect ratio: at a tier of RESOLUTION_LONG_SIDE (1K, 2K, 4K) that long side, as edits are sized;
 * `<n>p` a short side of n; without a tier (aspect-ratio models) an area of 1024².
 */
function pixelsOf(rules: ImageRules, aspectRatio: string, resolution: string | undefined) {
  const ratio = parseRatio(aspectRatio) ?? 1;
  const lines = resolution === undefined ? undefined : /^(\d+)p$/i.exec(resolution);
  let width: number;
  let height: number;
  if (resolution !== undefined && RESOLUTION_LONG_SIDE[resolution] !== undefined) {
    ({ width, height } = tierSize({ width: ratio, height: 1 }, resolution));
  } else if (lines) {
    const short = Number(lines[1]);
    [width, height] = ratio >= 1 ? [short * ratio, short] : [short, short / ratio];
  } else {
    width = Math.sqrt(IMAGE_SIDE_DEFAULT * IMAGE_SIDE_DEFAULT * ratio);
    height = width / ratio;
  }
  const snap = (value: number) => Math.max(rules.divisor, Math.round(value / rules.divisor) * rules.divisor);
  return { width: snap(width), height: snap(height) };
}

/** The model's listed aspect ratio closest to a pixel size (OpenAI `size` on an aspect-ratio model). */
export function nearestAspectRatio(rules: ImageRules, width: number, height: number): string {
  const wanted = Math.log(width / height);
  let best = rules.defaultAspectRatio;
  let distance = Number.POSITIVE_INFINITY;
  for (const ratio of rules.aspectRatios) {
    const value = parseRatio(ratio);
    if (value === undefined) continue;
    const d = Math.abs(Math.log(value) - wanted);
    if (d < distance) [best, distance] = [ratio, d];
  }
  return best;
}

export interface ImagePrice {
  readonly sku: string;
  /** The analytics breakdown type. */
  readonly lineType: string;
  readonly perImage: AttoPrice;
  readonly perImageUsd: string;
}

interface ImagePricing {
  readonly generation?: PricePair;
  readonly resolutions?: Readonly<Record<string, PricePair>>;
}

/** The price of one picture: the resolution tier's when the model prices tiers, else `generation`. */
export function imagePrice(model: CatalogModel, resolution: string | undefined): ImagePrice {
  const pricing = model.spec.pricing as ImagePricing;
  const tiers = pricing.resolutions ?? {};
  const tier = resolution !== undefined && Object.hasOwn(tiers, resolution) ? resolution : undefined;
  const pair = tier !== undefined ? tiers[tier] : (pricing.generation ?? Object.values(tiers)[0]);
  // The config schema requires generation or resolutions; a model without either cannot be priced.
  if (!pair) throw new Error(`Image model ${model.id} has no generation price`);
  const perImage = attoPrice(pair);
  return {
    sku: tier === undefined ? `${model.id}-image-generation` : `${model.id}-image-${tier.toLowerCase()}`,
    lineType: tier === undefined ? 'Generation' : `Generation ${tier}`,
    perImage,
    perImageUsd: formatAtto(perImage.usd),
  };
}

export function imagesCost(price: ImagePrice, images: number): Price {
  return { usd: costNano(BigInt(images), price.perImage.usd), diem: costNano(BigInt(images), price.perImage.diem) };
}

/** The usage entry of a generation: one line, `images` units at the price per image. */
export function imageUsage(
  model: CatalogModel,
  price: ImagePrice,
  images: number,
  details: { requestId: string; executionTimeMs: number; notes: string; providerId: string },
): Usage {
  return {
    modelId: model.id,
    modelType: 'IMAGE',
    unitType: 'images',
    notes: details.notes,
    lines: [
      {
        sku: price.sku,
        lineType: price.lineType,
        units: String(images),
        pricePerUnitUsd: price.perImageUsd,
        cost: imagesCost(price, images),
      },
    ],
    inferenceDetails: { requestId: details.requestId, inferenceExecutionTime: details.executionTimeMs },
    providerId: details.providerId,
  };
}
