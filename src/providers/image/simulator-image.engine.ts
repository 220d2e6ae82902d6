import { SIMULATOR_IMAGE_STYLES } from '../../operator-config/default-config.ts';
import { cancelledError } from '../upstream-errors.ts';
import {
  type EditImageRequest,
  type EngineImage,
  type GenerateImageRequest,
  type ImageCallOptions,
  type ImageEngine,
  type UpscaleImageRequest,
} from './image-engine.ts';
import { resampleUpscale, simulateEdit } from './local-edit.ts';
import { renderInThread } from './picture-thread.ts';

/*
 * The built-in image engine: no model, no network. Its pictures (simulator-picture.ts) are drawn from a hash of the
 * prompt, seed and style, in the picture thread, so the same request always gets the same picture, at any size.
 * Every picture says SIMULATED.
 */

/**
 * Test hook: a prompt containing this marks the pictures as adult content, so safe mode's blur can be exercised
 * without a real safety checker (docs/api.md).
 */
export const SIMULATE_ADULT_MARKER = '[simulate:adult]';

export class SimulatorImageEngine implements ImageEngine {
  readonly simulated = true;

  constructor(readonly id: string) {}

  async generate(
    _upstreamModel: string,
    request: GenerateImageRequest,
    options: ImageCallOptions,
  ): Promise<EngineImage[]> {
    const adult = request.prompt.toLowerCase().includes(SIMULATE_ADULT_MARKER);
    const images: EngineImage[] = [];
    for (let index = 0; index < request.variants; index += 1) {
      if (options.signal?.aborted) throw cancelledError();
      images.push({ bytes: await renderInThread(request, request.seed + index), adult });
    }
    if (options.signal?.aborted) throw cancelledError();
    return images;
  }

  styles(): Promise<string[]> {
    return Promise.resolve([...SIMULATOR_IMAGE_STYLES]);
  }

  /** A deterministic, visible edit (local-edit.ts): layers and a prompt-coloured band over the base. */
  async edit(_upstreamModel: string, request: EditImageRequest, options: ImageCallOptions): Promise<EngineImage> {
    const bytes = await simulateEdit(request, options.signal);
    if (options.signal?.aborted) throw cancelledError();
    return { bytes, adult: request.prompt.toLowerCase().includes(SIMULATE_ADULT_MARKER) };
  }

  /** A real resampler (Lanczos 3 and a mild sharpen), not an AI upscaler: `creativity` is ignored. */
  async upscale(_upstreamModel: string, request: UpscaleImageRequest, options: ImageCallOptions): Promise<EngineImage> {
    const bytes = await resampleUpscale(request, options.signal);
    if (options.signal?.aborted) throw cancelledError();
    return { bytes, adult: false };
  }
}
