import type { Metadata } from 'sharp';
import { AddressPolicy } from '../../augment/scrape/address-policy.ts';
import { PageFetchError, PageFetcher } from '../../augment/scrape/page-fetch.ts';
import { AppError, PayloadTooLargeError, UpstreamError, ValidationError } from '../../errors.ts';
import { loadSharp } from './sharp-module.ts';

/*
 * Input pictures of the edit and upscale routes: a file part, base64, a data URL or an http(s) URL. URLs are fetched
 * with the web scraper's fetcher and address policy (src/augment/scrape/), so a caller cannot make the server read
 * its own loopback, the cloud metadata endpoint or the operator's private network through an image URL.
 */

/** Inputs must be under 25 MB (as the text parser counts a megabyte: 10^6 bytes). */
export const MAX_INPUT_BYTES = 25_000_000;
export const MIN_INPUT_PIXELS = 65_536;
export const MAX_INPUT_PIXELS = 33_177_600;
/**
 * Pixels of an input over all its frames (width × height × frames), by default as many as the largest still picture:
 * engines that decode every frame of an animation (an upstream may) then hold no more than for that picture.
 * LAGOON_IMAGE_INPUT_MAX_TOTAL_PIXELS.
 */
export const MAX_INPUT_TOTAL_PIXELS = MAX_INPUT_PIXELS;
/** A base64 string of a picture just under MAX_INPUT_BYTES, for JSON body limits. */
export const MAX_INPUT_BASE64_CHARS = Math.ceil(MAX_INPUT_BYTES / 3) * 4;

export interface LoadedImage {
  /** The request path of the value it came from (`image`, `images.1`), named in every refusal. */
  readonly field: readonly (string | number)[];
  readonly bytes: Buffer;
  readonly width: number;
  readonly height: number;
  /** sharp's name of the input format (png, jpeg, webp, gif, …). */
  readonly format: string;
}

export interface ImageInputSettings {
  /** Non-public networks URLs may reach (CIDR or address), as the scraper's `allowNetworks`. */
  readonly allowNetworks: readonly string[];
  /** The whole fetch of one URL, redirects included. */
  readonly timeoutMs: number;
  /** Smallest picture accepted, in pixels (upscale has the same floor as edit). */
  readonly minPixels?: number;
  /** Largest width × height × frames accepted (default MAX_INPUT_TOTAL_PIXELS). */
  readonly maxTotalPixels?: number | undefined;
}

const DATA_URL = /^data:([^,;]*)((?:;[^,;]*)*),/i;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Loads and checks input pictures: size under 25 MB (413), a picture sharp reads, pixel count within bounds and
 * frames × pixels within bounds (400), all from the header, before anything is held or decoded.
 */
export class ImageInputLoader {
  private readonly fetcher: PageFetcher;

  constructor(private readonly settings: ImageInputSettings) {
    // One byte past the limit is enough to know the picture is too large.
    this.fetcher = new PageFetcher(new AddressPolicy(settings.allowNetworks), {
      timeoutMs: settings.timeoutMs,
      maxBytes: MAX_INPUT_BYTES,
      maxRedirects: 5,
    });
  }

  /**
   * One input: `source` is the file part's bytes, or the field's text (base64, a data URL or an http(s) URL).
   * `field` is the request path of the value, named in every refusal.
   */
  async load(field: readonly (string | number)[], source: Uint8Array | string, signal?: AbortSignal) {
    const bytes = typeof source === 'string' ? await this.fromText(field, source.trim(), signal) : Buffer.from(source);
    if (bytes.byteLength >= MAX_INPUT_BYTES) throw new PayloadTooLargeError(MAX_INPUT_BYTES);
    return inspect(field, bytes, {
      min: this.settings.minPixels ?? MIN_INPUT_PIXELS,
      maxTotal: this.settings.maxTotalPixels ?? MAX_INPUT_TOTAL_PIXELS,
    });
  }

  close(): Promise<void> {
    return this.fetcher.close();
  }

  private async fromText(field: readonly (string | number)[], text: string, signal?: AbortSignal): Promise<Buffer> {
    if (/^https?:\/\//i.test(text)) return this.fetchUrl(field, text, signal);
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text))
      throw invalid(field, 'Must be base64 image data, a data URL or an http(s) URL');
    const data = DATA_URL.exec(text);
    if (data) {
      if (!/;base64$/i.test(data[2] ?? '')) throw invalid(field, 'A data URL must be base64-encoded (";base64,")');
      return decodeBase64(field, text.slice(data[0].length));
    }
    return decodeBase64(field, text);
  }

  private async fetchUrl(field: readonly (string | number)[], url: string, signal?: AbortSignal): Promise<Buffer> {
    try {
      const page = await this.fetcher.fetch(url, signal);
      if (page.truncated) throw new PayloadTooLargeError(MAX_INPUT_BYTES);
      return Buffer.from(page.bytes.buffer, page.bytes.byteOffset, page.bytes.byteLength);
    } catch (error) {
      if (error instanceof PageFetchError) throw invalid(field, `Could not fetch the image URL: ${error.reason}`);
      if (error instanceof TypeError) throw invalid(field, 'Not a valid URL');
      throw error;
    }
  }
}

function decodeBase64(field: readonly (string | number)[], text: string): Buffer {
  // Most callers send no line breaks: no copy of a 30 MB string then.
  const compact = /\s/.test(text) ? text.replace(/\s+/g, '') : text;
  if (compact.length === 0) throw invalid(field, 'Must not be empty');
  refuseOversizedBase64(compact.length);
  if (!BASE64.test(compact)) throw invalid(field, 'Must be base64 image data, a data URL or an http(s) URL');
  return Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64');
}

/** An oversized picture is refused before it is decoded: `chars` of base64 hold at least this many bytes. */
function refuseOversizedBase64(chars: number): void {
  if (Math.floor((chars * 3) / 4) - 2 >= MAX_INPUT_BYTES) throw new PayloadTooLargeError(MAX_INPUT_BYTES);
}

/** base64 text decoded per slice: a multiple of 4 characters, so every slice but the last decodes whole. */
const DECODE_SLICE_CHARS = 64 * 1024;
const BASE64_RUN = /^[A-Za-z0-9+/_-]*$/;
/** Where a data URL's header must end, to be read from bytes (real ones are a few dozen characters). */
const DATA_URL_HEADER_MAX = 256;

/**
 * A picture's base64 text (plain, or a data URL) decoded from the bytes a JSON body carried it in, slice by slice: no
 * string of the whole text is made. Such a string is a large object V8 keeps until a full collection, and a few
 * megabytes of it per request add up when many edits wait their turn. Undefined for any text this does not take (an
 * http(s) URL, whitespace, a character outside base64): the caller reads that as text, which refuses it properly.
 */
export function decodeBase64Bytes(text: Buffer): Buffer | undefined {
  const data = DATA_URL.exec(text.toString('latin1', 0, Math.min(text.length, DATA_URL_HEADER_MAX)));
  if (data && !/;base64$/i.test(data[2] ?? '')) return undefined;
  const payload = data ? text.subarray(data[0].length) : text;
  if (payload.length === 0) return undefined;
  refuseOversizedBase64(payload.length);
  const bytes = Buffer.allocUnsafe(Math.ceil(payload.length / 4) * 3);
  let written = 0;
  for (let from = 0; from < payload.length; from += DECODE_SLICE_CHARS) {
    const to = Math.min(payload.length, from + DECODE_SLICE_CHARS);
    const slice = payload.toString('latin1', from, to);
    if (!(to === payload.length ? BASE64 : BASE64_RUN).test(slice)) return undefined;
    written += bytes.write(slice, written, 'base64');
  }
  return bytes.subarray(0, written);
}

/**
 * Reads the header only (sharp does not decode the pixels for metadata), so a huge picture costs nothing here. An
 * animation's frames are counted from its header too (`pages`): a GIF of thousands of large frames is small in bytes.
 */
async function inspect(
  field: readonly (string | number)[],
  bytes: Buffer,
  bounds: { min: number; maxTotal: number },
): Promise<LoadedImage> {
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    throw invalid(field, 'Not an image sharp can read (PNG, JPEG, WebP, GIF, AVIF, TIFF)');
  }
  const { width, format } = meta;
  // Animated pictures: one frame counts.
  const height = meta.pageHeight ?? meta.height;
  if (!width || !height || !format) throw invalid(field, 'Not an image with a width and a height');
  const pixels = width * height;
  const count = (n: number) => n.toLocaleString('en-US');
  if (pixels < bounds.min || pixels > MAX_INPUT_PIXELS) {
    throw invalid(
      field,
      `Must have ${count(bounds.min)} to ${count(MAX_INPUT_PIXELS)} pixels; ` +
        `this one is ${width}×${height} (${count(pixels)})`,
    );
  }
  const frames = Math.max(1, meta.pages ?? 1);
  if (pixels * frames > bounds.maxTotal) {
    throw invalid(
      field,
      `Must have at most ${count(bounds.maxTotal)} pixels in all its frames; this one has ${count(frames)} ` +
        `frames of ${width}×${height} (${count(pixels * frames)})`,
    );
  }
  return { field, bytes, width, height, format };
}

/**
 * What a failed engine call is to the caller: a 400 naming the first of its pictures whose data does not decode, else
 * the failure itself. A picture's header is read at load, its data only where an engine decodes it (in this process
 * or upstream), after the hold; a picture cut short or damaged past its header fails there. Checked only once a call
 * has failed: a call that succeeds decodes its pictures once, in its engine. The caller's own mistakes (other 4xx)
 * are kept as they are.
 */
export async function blameUndecodable(error: unknown, images: readonly LoadedImage[]): Promise<unknown> {
  if (error instanceof AppError && !(error instanceof UpstreamError)) return error;
  for (const image of images) {
    const failure = await decodeFailure(image.bytes);
    if (failure !== undefined)
      return invalid(image.field, `The picture's data cannot be decoded; it is cut short or damaged (${failure})`);
  }
  return error;
}

/**
 * Why the picture's first frame (what the engines read) does not decode to its end, or undefined when it does. Read
 * in sequence into a thumbnail: nothing of the picture's size is held.
 */
async function decodeFailure(bytes: Buffer): Promise<string | undefined> {
  const sharp = await loadSharp();
  try {
    await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, sequentialRead: true })
      .resize(64, 64, { fit: 'inside' })
      .raw()
      .toBuffer();
    return undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return message.split('\n')[0]?.slice(0, 200) ?? 'unknown error';
  }
}

export function invalid(field: readonly (string | number)[], message: string): ValidationError {
  return new ValidationError(`Invalid request: ${field.join('.')}: ${message}`, [{ path: [...field], message }]);
}
