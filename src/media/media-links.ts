import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { instanceSecret } from '../instance-secret.ts';
import type { MediaInfo, MediaObject, MediaStore } from './media-store.ts';

/*
 * Signed media URLs: `<origin>/media/<token>`, fetched without an API key. The token is
 * base64url(media id (16 bytes) + expiry (uint32 Unix seconds)) "." base64url(HMAC-SHA256 of that payload), so it
 * names one object until one moment and cannot be forged or extended without the secret. The secret is shared by
 * every process (LAGOON_MEDIA_SECRET, or one generated on first use and kept in instance_meta), so a URL made by
 * one process opens on any other.
 */

/** The path media URLs are served under (rest/routes/media.ts). */
export const MEDIA_PATH = '/media/';

const SECRET_META_KEY = 'media_url_secret';
/** Domain separation: this key signs media URLs and nothing else. */
const PURPOSE = 'lagoon media url v1\0';
const PAYLOAD_BYTES = 20;
const PAYLOAD_CHARS = 27; // base64url of 20 bytes, unpadded
const SIGNATURE_CHARS = 43; // base64url of 32 bytes, unpadded
const MAX_EXPIRY_SECONDS = 0xffff_ffff;

export interface MediaLinksOptions {
  /** LAGOON_MEDIA_SECRET; none: generated once and kept in the database. */
  readonly secret?: string | undefined;
  /** Default lifetime of a published object and its URL (LAGOON_MEDIA_URL_TTL_SECONDS). */
  readonly ttlMs: number;
  /** LAGOON_PUBLIC_URL without a trailing slash: URLs are built on it when set, whatever the request said. */
  readonly publicUrl?: string | undefined;
  /** LAGOON_MEDIA_S3_PRESIGNED_URLS: links are the store's pre-signed URLs where it makes them (S3). */
  readonly presigned?: boolean | undefined;
}

export interface PublishMedia {
  readonly bytes: Uint8Array;
  readonly contentType: string;
  /** Default: the configured URL lifetime. */
  readonly ttlMs?: number | undefined;
}

export interface MediaLink {
  readonly url: string;
  readonly token: string;
  readonly expiresAt: Date;
  readonly media: MediaInfo;
}

export class MediaLinks {
  /** The first process to need one stores it; every other process (and every restart) reads that one. */
  private readonly secret: () => Promise<Buffer>;

  constructor(
    private readonly deps: { readonly db: Database; readonly store: MediaStore; readonly options: MediaLinksOptions },
  ) {
    this.secret = instanceSecret(deps.db, SECRET_META_KEY, deps.options.secret);
  }

  get defaultTtlMs(): number {
    return this.deps.options.ttlMs;
  }

  /**
   * Stores `bytes` for the account and signs a URL for it, valid as long as the object is kept. `origin` is the
   * caller's (e.g. `https://api.example.com`, see requestOrigin); LAGOON_PUBLIC_URL wins over it, and with neither
   * the URL is a path (`/media/<token>`).
   */
  async publish(accountId: string, media: PublishMedia, origin?: string): Promise<MediaLink> {
    const ttlMs = media.ttlMs ?? this.deps.options.ttlMs;
    const info = await this.deps.store.put({ accountId, contentType: media.contentType, bytes: media.bytes, ttlMs });
    return this.link(info, info.expiresAt, origin);
  }

  /**
   * A URL for an object already stored (a job's result), valid until `expiresAt` or the object's own expiry:
   * Lagoon's own signed URL, or with pre-signed URLs on, the store's (which Lagoon cannot revoke before it expires).
   */
  async link(media: MediaInfo, expiresAt: Date = media.expiresAt, origin?: string): Promise<MediaLink> {
    const until = new Date(Math.min(expiresAt.getTime(), media.expiresAt.getTime()));
    return { ...(await this.urlFor(media, until, origin)), expiresAt: until, media };
  }

  /**
   * A URL for an object that may not exist yet (a job's download URL, given out at queue time): it answers 404
   * until the object is stored, then serves it until `expiresAt` (unless deleted before).
   */
  async urlFor(
    media: Pick<MediaInfo, 'id' | 'storage'>,
    expiresAt: Date,
    origin?: string,
  ): Promise<{ url: string; token: string }> {
    const token = await this.sign(media.id, expiresAt);
    const presigned = this.deps.options.presigned ? await this.deps.store.signedUrl(media, expiresAt) : undefined;
    return { url: presigned ?? this.urlOf(token, origin), token };
  }

  urlOf(token: string, origin?: string): string {
    return `${this.deps.options.publicUrl ?? origin ?? ''}${MEDIA_PATH}${token}`;
  }

  async sign(mediaId: string, expiresAt: Date): Promise<string> {
    const id = Buffer.from(mediaId.replaceAll('-', ''), 'hex');
    if (id.byteLength !== 16) throw new RangeError('not a media id');
    const payload = Buffer.alloc(PAYLOAD_BYTES);
    id.copy(payload, 0);
    // Rounded up, so a URL never expires before its object would.
    payload.writeUInt32BE(Math.min(MAX_EXPIRY_SECONDS, Math.ceil(expiresAt.getTime() / 1000)), 16);
    const encoded = payload.toString('base64url');
    return `${encoded}.${(await this.mac(encoded)).toString('base64url')}`;
  }

  /** The media id and expiry a token names, if its signature is ours and it has not expired at `now`. */
  async verify(token: string, now: Date = new Date()): Promise<{ id: string; expiresAt: Date } | undefined> {
    if (token.length !== PAYLOAD_CHARS + 1 + SIGNATURE_CHARS || token[PAYLOAD_CHARS] !== '.') return undefined;
    const encoded = token.slice(0, PAYLOAD_CHARS);
    const signature = Buffer.from(token.slice(PAYLOAD_CHARS + 1), 'base64url');
    const payload = Buffer.from(encoded, 'base64url');
    // Only the canonical encoding is accepted: one object, one moment, one token.
    if (payload.byteLength !== PAYLOAD_BYTES || payload.toString('base64url') !== encoded) return undefined;
    const expected = await this.mac(encoded);
    if (signature.byteLength !== expected.byteLength || !timingSafeEqual(signature, expected)) return undefined;
    const expiresAt = new Date(payload.readUInt32BE(16) * 1000);
    if (expiresAt <= now) return undefined;
    const hex = payload.subarray(0, 16).toString('hex');
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    return { id, expiresAt };
  }

  /** The object a token names, with its bytes; undefined for a bad, expired or unknown token. */
  async open(token: string, now: Date = new Date()): Promise<(MediaObject & { urlExpiresAt: Date }) | undefined> {
    const signed = await this.verify(token, now);
    const media = signed && (await this.deps.store.get(signed.id, now));
    return media && signed && { ...media, urlExpiresAt: signed.expiresAt };
  }

  /** Like open, without the bytes (HEAD and range requests read them separately). */
  async stat(token: string, now: Date = new Date()): Promise<(MediaInfo & { urlExpiresAt: Date }) | undefined> {
    const signed = await this.verify(token, now);
    const media = signed && (await this.deps.store.info(signed.id, now));
    return media && signed && { ...media, urlExpiresAt: signed.expiresAt };
  }

  private async mac(encoded: string): Promise<Buffer> {
    return createHmac('sha256', await this.secret())
      .update(PURPOSE)
      .update(encoded)
      .digest();
  }
}

const FORWARDED_PROTO = /^https?$/i;
const HOST = /^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/i;

/**
 * The origin a client reached this server on (`https://api.example.com`), from the Host header and, behind a TLS
 * proxy, X-Forwarded-Proto; `fallbackUrl` (the request's URL) gives what a header leaves out. Undefined when the
 * host is not a plain host name: the URL is then a path. LAGOON_PUBLIC_URL, when set, is used instead of this.
 */
export function requestOrigin(headers: {
  readonly host?: string | undefined;
  readonly forwardedProto?: string | undefined;
  readonly fallbackUrl?: string | undefined;
}): string | undefined {
  let fallback: URL | undefined;
  try {
    fallback = headers.fallbackUrl ? new URL(headers.fallbackUrl) : undefined;
  } catch {
    fallback = undefined;
  }
  const host = headers.host ?? fallback?.host;
  if (!host || !HOST.test(host)) return undefined;
  const forwarded = headers.forwardedProto?.split(',')[0]?.trim();
  const proto =
    forwarded && FORWARDED_PROTO.test(forwarded)
      ? forwarded.toLowerCase()
      : (fallback?.protocol.replace(':', '') ?? 'http');
  return `${proto}://${host}`;
}
