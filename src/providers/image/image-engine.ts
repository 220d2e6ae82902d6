/**
 * The image capability (src/providers/): one interface, one adapter per engine (the built-in simulator and
 * resampler, an OpenAI-compatible images API, an AUTOMATIC1111/Forge API). Adapters only produce pixels; sizing
 * rules, pricing and post-processing (format, EXIF, watermark, blur) belong to the image service, so every engine's
 * output goes through the same path. Which adapter serves a model, with retries, fallback and cooldown, is decided
 * by the image gateway from the model's provider bindings, as chat's gateway does.
 */

export type ImageFormat = 'png' | 'jpeg' | 'webp';

export interface ImageCallOptions {
  /** Aborts the engine call (the client went away, or the service's deadline passed). */
  readonly signal?: AbortSignal | undefined;
}

/** One picture as an engine returned it (any format sharp reads), with the engine's adult-content verdict. */
export interface EngineImage {
  readonly bytes: Buffer;
  /** The picture's canonical base64 as the engine sent it, if it did: answered as is when nothing changes it. */
  readonly base64?: Buffer | undefined;
  /** The engine flagged it as adult content (an upstream NSFW flag, a safety checker's output, a test hook). */
  readonly adult: boolean;
}

export interface GenerateImageRequest {
  readonly prompt: string;
  readonly negativePrompt?: string | undefined;
  /** Output size in pixels, already resolved from width/height, aspect ratio or resolution tier. */
  readonly width: number;
  readonly height: number;
  /** Never 0: the service draws a random seed when the caller gave none, and reports it. */
  readonly seed: number;
  readonly steps: number;
  readonly cfgScale?: number | undefined;
  readonly stylePreset?: string | undefined;
  /** 0–100. */
  readonly loraStrength?: number | undefined;
  /** 1–4 pictures, seeds seed, seed+1, … */
  readonly variants: number;
}

export interface EditImageRequest {
  readonly prompt: string;
  /** The base image first, then layers/masks (multi-edit); each as the caller sent it (any format sharp reads). */
  readonly images: readonly Buffer[];
  /** Output size in pixels, resolved from the aspect ratio (or the input's) and the resolution tier. */
  readonly width: number;
  readonly height: number;
}

export interface UpscaleImageRequest {
  readonly image: Buffer;
  /** 2–4; already reduced by the service so the output stays under the pixel cap. */
  readonly scale: number;
  /** 0–0.02: how much detail an AI upscaler may add (a resampler ignores it). */
  readonly creativity: number;
}

export interface ImageEngine {
  readonly id: string;
  /** True for engines whose pictures are not real model output (the simulator): the service labels them. */
  readonly simulated: boolean;
  generate(upstreamModel: string, request: GenerateImageRequest, options: ImageCallOptions): Promise<EngineImage[]>;
  /** Absent: this engine cannot edit (the service answers 400 for models bound only to such engines). */
  edit?(upstreamModel: string, request: EditImageRequest, options: ImageCallOptions): Promise<EngineImage>;
  upscale?(upstreamModel: string, request: UpscaleImageRequest, options: ImageCallOptions): Promise<EngineImage>;
  /** Style names this engine accepts for `style_preset` (absent: none). */
  styles?(options: ImageCallOptions): Promise<string[]>;
  close?(): Promise<void>;
}

/**
 * zlib level of re-encoded PNGs. Measured on 1024² pictures against libvips' default 6: a noisy one encodes in 39
 * instead of 59 ms for 28 % more bytes (2.57 instead of 2.01 MB), a flat simulated one in 5 instead of 12 ms
 * (0.16 instead of 0.09 MB); level 2 saves only 8 % of the time (bench/RESULTS.md, "Media after the pass-through").
 */
export const PNG_COMPRESSION_LEVEL = 1;
