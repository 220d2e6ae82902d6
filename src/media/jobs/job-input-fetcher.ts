import { AddressPolicy } from '../../augment/scrape/address-policy.ts';
import { PageFetchError, PageFetcher } from '../../augment/scrape/page-fetch.ts';
import type { JobInput, JobInputRole } from '../../providers/jobs/job-engine.ts';
import { probeMedia } from '../media-probe.ts';
import { loadSharp } from '../images/sharp-module.ts';
import { checkProbedInputs, fieldError, INPUT_LIMITS, maxFetchBytes, type ProbedInput } from './job-rules.ts';
import type { RemoteInput } from './video-rules.ts';

/*
 * A video job's remote media (image_url, video_url, reference_*_urls, elements, …), fetched before anything is
 * held: http(s) URLs with the web scraper's fetcher and address policy (src/augment/scrape/), as the image routes
 * do (src/media/images/image-input.ts), so a URL cannot reach loopback, the metadata endpoint or a private network;
 * data URLs decoded. Each input is capped at its role's size (maxFetchBytes) while it downloads, then typed and
 * measured from its bytes (sharp for pictures, ffmpeg's reading of the container for sound and video) and checked
 * against the limits of input-limits.ts: any refusal is a 400 naming the body field.
 */

export interface JobInputFetchSettings {
  /** Non-public networks URLs may reach, as the scraper's `allowNetworks`. */
  readonly allowNetworks: readonly string[];
  /** One URL's whole fetch, redirects included. */
  readonly timeoutMs: number;
}

/**
 * The inputs of one job together: they travel base64-encoded in the job's jsonb request (jobs.repository.ts), and
 * PostgreSQL refuses a jsonb value past 255 MB, so a 200 MB video_url alone would fail there (a 500) instead of here.
 */
export const MAX_JOB_INPUT_BYTES = 150 * 1024 * 1024;
const DATA_URL = /^data:([^,;]*)((?:;[^,;]*)*),/i;
const IMAGE_FORMATS: Readonly<Record<string, string>> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
};

export class JobInputFetcher {
  private readonly policy: AddressPolicy;
  /** One fetcher per size cap, so an image URL is cut at 20 MB and a video_url at 200 MB. */
  private readonly fetchers = new Map<number, PageFetcher>();

  constructor(private readonly settings: JobInputFetchSettings) {
    this.policy = new AddressPolicy(settings.allowNetworks);
  }

  /** Every remote input fetched, probed and checked; in the order given. */
  async fetchAll(remote: readonly RemoteInput[], signal?: AbortSignal): Promise<JobInput[]> {
    const inputs: JobInput[] = [];
    const probed: ProbedInput[] = [];
    // One at a time: at most one large body in memory beyond those already accepted.
    let total = 0;
    for (const item of remote) {
      const bytes = await this.load(item, signal);
      total += bytes.byteLength;
      if (total > MAX_JOB_INPUT_BYTES)
        throw fieldError(
          item.field,
          `the media of one job must be at most ${MAX_JOB_INPUT_BYTES / (1024 * 1024)} MB together`,
        );
      const facts = await probe(item.role, bytes);
      const fact: ProbedInput = { role: item.role, field: item.field, bytes: bytes.byteLength, ...facts };
      probed.push(fact);
      // Checked as it arrives, so a bad first input does not wait for the others' downloads.
      checkProbedInputs(probed);
      inputs.push({
        role: item.role,
        ...(item.element !== undefined && { element: item.element }),
        bytes,
        contentType: facts.contentType,
        ...(facts.durationSeconds !== undefined && { durationSeconds: facts.durationSeconds }),
      });
    }
    return inputs;
  }

  async close(): Promise<void> {
    for (const fetcher of this.fetchers.values()) await fetcher.close();
    this.fetchers.clear();
  }

  private async load(item: RemoteInput, signal?: AbortSignal): Promise<Buffer> {
    const max = maxFetchBytes(item.role);
    const data = DATA_URL.exec(item.url);
    if (data) {
      const body = item.url.slice(data[0].length);
      const base64 = /;base64$/i.test(data[2] ?? '');
      // Decoded length from the text, before decoding: an oversized data URL is refused without a copy.
      const estimate = base64 ? Math.floor((body.length * 3) / 4) - 2 : body.length / 3;
      if (estimate > max) throw tooLarge(item, max);
      try {
        return base64 ? Buffer.from(body, 'base64') : Buffer.from(decodeURIComponent(body), 'latin1');
      } catch {
        throw fieldError(item.field, 'not a valid data URL');
      }
    }
    try {
      const page = await this.fetcher(max).fetch(item.url, signal);
      // The fetcher reads one byte past the cap at most: truncated means larger than allowed.
      if (page.truncated) throw tooLarge(item, max);
      return Buffer.from(page.bytes.buffer, page.bytes.byteOffset, page.bytes.byteLength);
    } catch (error) {
      if (error instanceof PageFetchError) throw fieldError(item.field, `could not be fetched: ${error.reason}`);
      if (error instanceof TypeError) throw fieldError(item.field, 'not a valid URL');
      throw error;
    }
  }

  private fetcher(maxBytes: number): PageFetcher {
    let fetcher = this.fetchers.get(maxBytes);
    if (!fetcher) {
      fetcher = new PageFetcher(this.policy, {
        timeoutMs: this.settings.timeoutMs,
        maxBytes: maxBytes + 1,
        maxRedirects: 5,
      });
      this.fetchers.set(maxBytes, fetcher);
    }
    return fetcher;
  }
}

const tooLarge = (item: RemoteInput, max: number) =>
  fieldError(item.field, `must be at most ${max / (1024 * 1024)} MB`);

const isPicture = (role: JobInputRole) => INPUT_LIMITS[role].types.every((type) => type.startsWith('image/'));

/** The type (from the bytes, never the server's claim) and, for sound and video, the length. */
async function probe(
  role: JobInputRole,
  bytes: Buffer,
): Promise<{ contentType: string; durationSeconds?: number | undefined }> {
  if (isPicture(role)) {
    const sharp = await loadSharp();
    try {
      const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
      return { contentType: IMAGE_FORMATS[meta.format ?? ''] ?? `image/${meta.format ?? 'unknown'}` };
    } catch {
      return { contentType: '' };
    }
  }
  return probeMedia(bytes);
}
