import { TEXT_PARSER_MAX_FILE_BYTES } from './augment/text-parser.service.ts';
import type { Config } from './config.ts';
import { MAX_INPUT_BYTES as IMAGE_MAX_BYTES } from './media/images/image-input.ts';
import { INPUT_LIMITS } from './media/jobs/input-limits.ts';
import { VOICE_SAMPLE_MAX_BYTES } from './media/speech/voice-cloning.ts';
import { TRANSCRIPTION_MAX_BYTES } from './media/transcription/transcription.inputs.ts';

/*
 * How large a request body each kind of route takes, in one table (docs/configuration.md, Request body limits).
 * A route names its kind (rest/router.ts `bodyLimit`); the GraphQL endpoint takes the largest of the kinds its
 * operations share (schema/body-limit.ts). Every limit is counted while the body arrives: past it the request is
 * answered 413 PAYLOAD_TOO_LARGE and the rest is never held (src/byte-stream.ts, rest/multipart.ts).
 *
 * JSON kinds carry media inline as base64 or data URLs, 4/3 of the file's size, plus ENVELOPE_BYTES for the other
 * fields. Upload kinds (multipart/form-data) are the file's own limit; the body may have ENVELOPE_BYTES more for
 * the framing and the text fields (rest/multipart.ts). A body is held only as far as it has arrived: a limit is a
 * ceiling, never an allocation.
 */

export type BodyKind =
  /** Every JSON route without media (LAGOON_MAX_JSON_BYTES). */
  | 'json'
  /** Chat and responses: inline images, audio, video and files in content parts (LAGOON_MAX_CHAT_BODY_BYTES). */
  | 'chat'
  /** POST /video/queue: clips and pictures as data URLs (LAGOON_MAX_MEDIA_BODY_BYTES). */
  | 'videoJob'
  /** One picture inline: edit, upscale, background removal. */
  | 'image'
  /** Up to three pictures inline: multi-edit. */
  | 'images'
  /** Upload: a document for the text parser. */
  | 'document'
  /** Upload: audio to transcribe. */
  | 'audioFile'
  /** Upload: a voice sample to clone. */
  | 'voiceSample';

export type BodyLimits = Readonly<Record<BodyKind, number>>;

/** Room for a body's other fields beside its media (and for multipart framing). */
const ENVELOPE_BYTES = 1_048_576;

/** The length of `bytes` bytes once base64-encoded. */
const base64Length = (bytes: number): number => Math.ceil(bytes / 3) * 4;

/** A JSON body carrying `bytes` bytes of media inline. */
export const inlineMediaBody = (bytes: number): number => base64Length(bytes) + ENVELOPE_BYTES;

/** The largest documented input of a video job sent inline: a 50 MB reference video (src/media/jobs/input-limits.ts). */
export const DEFAULT_MAX_MEDIA_BODY_BYTES = inlineMediaBody(INPUT_LIMITS.reference_video.maxBytes);

/** Most images of one multi-edit (docs/api.md). */
const MULTI_EDIT_IMAGES = 3;

export function bodyLimits(http: Config['http']): BodyLimits {
  return {
    json: http.maxJsonBytes,
    chat: http.maxChatBodyBytes,
    videoJob: http.maxMediaBodyBytes ?? DEFAULT_MAX_MEDIA_BODY_BYTES,
    image: inlineMediaBody(IMAGE_MAX_BYTES),
    images: inlineMediaBody(MULTI_EDIT_IMAGES * IMAGE_MAX_BYTES),
    document: TEXT_PARSER_MAX_FILE_BYTES,
    audioFile: TRANSCRIPTION_MAX_BYTES,
    voiceSample: VOICE_SAMPLE_MAX_BYTES,
  };
}

const UPLOAD_KINDS: readonly BodyKind[] = ['document', 'audioFile', 'voiceSample'];

/**
 * The limits of /graphql, which cannot tell an operation's kind before reading its body: a JSON body as large as
 * the largest JSON kind, a multipart one as the largest upload with its envelope. A caller without credentials
 * can only run the public queries, so its body keeps the JSON limit.
 */
export interface GraphQLBodyLimits {
  readonly json: number;
  readonly upload: number;
  readonly anonymous: number;
  /** /graphql/stream: its operations are chat completion streams and job updates. */
  readonly stream: number;
}

export function graphqlBodyLimits(limits: BodyLimits): GraphQLBodyLimits {
  const kinds = Object.keys(limits) as BodyKind[];
  const largest = (of: readonly BodyKind[]) => Math.max(...of.map((kind) => limits[kind]));
  return {
    json: largest(kinds.filter((kind) => !UPLOAD_KINDS.includes(kind))),
    upload: largest(UPLOAD_KINDS) + ENVELOPE_BYTES,
    anonymous: limits.json,
    stream: limits.chat,
  };
}
