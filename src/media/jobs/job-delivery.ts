import type { CatalogModel } from '../../catalog/model.ts';
import type { MediaInfo } from '../media-store.ts';

/*
 * Download-URL models: their queue answer carries a `download_url` (valid 24 hours, the contract's figure) and
 * their retrieve answers `{status: "COMPLETED", download_url}` instead of the bytes. The operator marks such a
 * model in its catalog record: `download_url: true` in a video model's `constraints`, or in a music model's `spec`
 * (docs/api.md, "Queued jobs").
 */

export const DOWNLOAD_URL_TTL_MS = 24 * 3_600_000;

export function usesDownloadUrl(model: Pick<CatalogModel, 'spec'>): boolean {
  const spec = model.spec as { download_url?: unknown; constraints?: { download_url?: unknown } };
  return spec.download_url === true || spec.constraints?.download_url === true;
}

/**
 * How long a URL handed out now lives: the one given at queue time while it is valid, then a fresh 24 hours for a
 * caller who comes back later; never past the object's own expiry (its retention).
 */
export function downloadUrlExpiry(given: Date, media: Pick<MediaInfo, 'expiresAt'>, now: Date): Date {
  const until = given > now ? given : new Date(now.getTime() + DOWNLOAD_URL_TTL_MS);
  return until < media.expiresAt ? until : media.expiresAt;
}
