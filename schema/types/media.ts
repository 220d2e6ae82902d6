import type { PublishMedia } from '../../src/media/media-links.ts';
import {
  ForbiddenError,
  InsufficientBalanceError,
  InvalidModelError,
  SpendLimitExceededError,
  UpstreamError,
  ValidationError,
} from '../../src/errors.ts';
import { RateLimitExceededError } from '../../src/rate-limits/rate-limiter.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';

/**
 * Media in GraphQL answers: a short-lived signed URL served by Lagoon (`GET /media/<token>`, no API key needed),
 * and the bytes as base64 only when the mutation was asked for them.
 *
 * How a media mutation uses it (generateImage, editImage, upscaleImage, synthesizeSpeech, job results):
 *
 * ```ts
 * import { INCLUDE_BASE64_ARG, MediaFileRef, mediaFileFor } from './media.ts';
 *
 * // in the mutation's args:       includeBase64: t.arg.boolean(INCLUDE_BASE64_ARG),
 * // in its result type:           images: t.field({ type: [MediaFileRef], resolve: (r) => r.images }),
 * // in its resolver, per picture: await mediaFileFor(context, accountId, { bytes, contentType: 'image/png' },
 * //                                                  { includeBase64: args.includeBase64 })
 * ```
 *
 * `mediaFileFor` stores the bytes for the account (media_objects, kept LAGOON_MEDIA_URL_TTL_SECONDS, or `ttlMs`)
 * and signs the URL; call it once the call is paid for, so a failed call leaves nothing behind. The URL is absolute:
 * on LAGOON_PUBLIC_URL when set, else on the origin the client reached (Host, X-Forwarded-Proto).
 */
export interface MediaFile {
  readonly contentType: string;
  readonly url: string;
  readonly expiresAt: Date;
  readonly byteSize: number;
  /** Null unless the mutation was called with includeBase64: true. */
  readonly base64: string | null;
}

/** The mutations' `includeBase64` argument: `includeBase64: t.arg.boolean(INCLUDE_BASE64_ARG)`. */
export const INCLUDE_BASE64_ARG = {
  required: false,
  defaultValue: false,
  description: 'Also return each file inline as base64 (`MediaFile.base64`); the signed `url` is always given.',
} as const;

export async function mediaFileFor(
  context: Pick<GraphQLContext, 'services' | 'origin'>,
  accountId: string,
  media: PublishMedia,
  options: { readonly includeBase64?: boolean | null | undefined } = {},
): Promise<MediaFile> {
  const link = await context.services.media.links.publish(accountId, media, context.origin);
  return {
    contentType: media.contentType,
    url: link.url,
    expiresAt: link.expiresAt,
    byteSize: media.bytes.byteLength,
    base64: options.includeBase64
      ? Buffer.from(media.bytes.buffer, media.bytes.byteOffset, media.bytes.byteLength).toString('base64')
      : null,
  };
}

export const MediaFileRef = builder.objectRef<MediaFile>('MediaFile').implement({
  description:
    'A generated file (image, audio, video): a short-lived signed URL anyone holding it can fetch with GET ' +
    '(no API key; Range supported), and the bytes as base64 when the mutation was asked for them.',
  fields: (t) => ({
    contentType: t.exposeString('contentType', { description: 'MIME type, e.g. image/png or audio/mpeg.' }),
    url: t.exposeString('url', {
      description: 'Signed URL of the file (`/media/<token>` on this server); 404 once expired.',
    }),
    expiresAt: t.field({
      type: 'DateTime',
      description: 'When the URL stops working.',
      resolve: (file) => file.expiresAt,
    }),
    byteSize: t.exposeInt('byteSize', { description: 'Size in bytes.' }),
    base64: t.exposeString('base64', {
      nullable: true,
      description: 'The bytes, base64-encoded, when the mutation had includeBase64: true; null otherwise.',
    }),
  }),
});

/**
 * The typed errors of a paid media call (generate, speak, queue): bad input, model, access, money, the key's rate
 * limits, the engine.
 */
export const PAID_MEDIA_ERRORS = [
  ValidationError,
  InvalidModelError,
  ForbiddenError,
  InsufficientBalanceError,
  SpendLimitExceededError,
  RateLimitExceededError,
  UpstreamError,
];
