import { isUtf8 } from 'node:buffer';
import { z } from 'zod';
import { requireAccount } from '../../src/auth/permissions.ts';
import { EditImageInput, MultiEditImageInput, UpscaleImageInput } from '../../src/media/images/edit.inputs.ts';
import type { ImageEditOutcome } from '../../src/media/images/image-edit.service.ts';
import { decodeBase64Bytes, MAX_INPUT_BYTES } from '../../src/media/images/image-input.ts';
import { parseLifted } from '../../src/providers/lifted-json.ts';
import { isRecord, parseInput } from '../../src/validation.ts';
import { balanceHeaders, json, parseJsonBytes, text, type Reply } from '../http.ts';
import { readMultipartFiles, readMultipartUpload } from '../multipart.ts';
import type { Route, RouteContext } from '../router.ts';

const MULTIPART = /^multipart\/form-data\b/i;

const Binary = z.string().describe('The picture (binary), with its Content-Type; x-is-blurred: true when blurred');
const imageFile = z.file().describe('The picture as a file part; under 25 MB');

/** The body as the service takes it: JSON, or a multipart form whose `image` file part travels beside the fields. */
export async function readBody(call: RouteContext): Promise<{ input: Record<string, unknown>; file?: Uint8Array }> {
  if (!MULTIPART.test(call.header('content-type') ?? '')) {
    const { input, files } = readJsonPictures(await call.bytes(), 'image');
    return { input, ...(files && { file: files[0] }) };
  }
  // Refuse an unauthenticated upload before reading any of it.
  requireAccount(call.auth);
  const { file, fields } = await readMultipartUpload(call.headers, call.body, 'image', {
    maxFileBytes: MAX_INPUT_BYTES - 1,
  });
  return { input: formFields(fields), file: file.bytes };
}

/**
 * A JSON body whose pictures (`image`, or every one of `images`) are base64 or data URLs goes on as file parts
 * would: decoded from the body's bytes (decodeBase64Bytes), never made strings. Any other body is parsed as it is.
 */
function readJsonPictures(
  bytes: Uint8Array,
  field: 'image' | 'images',
): { input: Record<string, unknown>; files?: Uint8Array[] } {
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Not UTF-8, not JSON or not an object: the plain parse answers the error. Nothing lifted: the value is the whole
  // body, parsed once.
  const lifted = isUtf8(body) ? parseLifted(body) : undefined;
  if (!lifted || !isRecord(lifted.value)) return { input: parseJsonBytes(body) };
  if (lifted.liftedCount === 0) return { input: lifted.value };
  const value = lifted.value;
  const pictures = value[field];
  const texts = field === 'image' ? [pictures] : Array.isArray(pictures) ? (pictures as unknown[]) : [];
  const raw = texts.map((text) => (typeof text === 'string' ? lifted.liftedBytes(text) : undefined));
  // Only the pictures may have been lifted, all of them; a body with another long literal takes the plain way.
  if (raw.length === 0 || lifted.liftedCount !== raw.length || raw.includes(undefined))
    return { input: parseJsonBytes(body) };
  const files = raw.map((text) => decodeBase64Bytes(text!));
  if (files.includes(undefined)) return { input: parseJsonBytes(body) };
  return { input: { ...value, [field]: undefined }, files: files as Uint8Array[] };
}

/** Form fields are text: booleans and numbers are read as such (a bad value is left for the schema to name). */
function formFields(fields: Readonly<Record<string, string>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...fields };
  for (const key of ['safe_mode'] as const)
    if (fields[key] === 'true' || fields[key] === 'false') out[key] = fields[key] === 'true';
  for (const key of ['scale', 'creativity'] as const) {
    const value = fields[key];
    if (value !== undefined && value.trim() !== '' && Number.isFinite(Number(value))) out[key] = Number(value);
  }
  return out;
}

/** The picture itself; never compressed (it already is). */
function binary(outcome: ImageEditOutcome): Reply {
  return text(outcome.bytes, {
    'content-type': outcome.contentType,
    ...(outcome.blurred && { 'x-is-blurred': 'true' }),
    ...balanceHeaders(outcome.charge),
  });
}

const OpenAIFormat = z.enum(['url', 'b64_json']).optional().describe('Default url (a data: URL)');
const OpenAIImages = z.object({
  created: z.number().int(),
  data: z.array(z.object({ b64_json: z.string().optional(), url: z.string().optional() })),
});

/** One picture in the OpenAI images answer: base64, or a data: URL (Lagoon keeps no picture to link to). */
function openAIImage(outcome: ImageEditOutcome, format: 'url' | 'b64_json'): Reply {
  const b64 = outcome.bytes.toString('base64');
  const item = format === 'url' ? { url: `data:${outcome.contentType};base64,${b64}` } : { b64_json: b64 };
  const headers = { ...(outcome.blurred && { 'x-is-blurred': 'true' }), ...balanceHeaders(outcome.charge) };
  return json({ created: Math.floor(Date.now() / 1000), data: [item] }, 200, headers);
}

const upscaleRoute: Route = {
  method: 'POST',
  path: '/image/upscale',
  access: 'account',
  bodyLimit: 'image',
  doc: {
    summary:
      'Upscale a picture 2× to 4× (output at most 16,777,216 pixels); priced per image by the effective scale. JSON or multipart.',
    tags: ['Image'],
    body: UpscaleImageInput,
    response: Binary,
    responseDescription: 'image/png',
  },
  async handler(call) {
    const { input, file } = await readBody(call);
    return binary(await call.services.imageEdit.upscale(call.auth, input, { signal: call.signal, file }));
  },
};

export const imageEditRoutes: Route[] = [
  {
    method: 'POST',
    path: '/image/edit',
    access: 'account',
    bodyLimit: 'image',
    doc: {
      summary: 'Edit a picture with a prompt (experimental); priced per edit by model. JSON or multipart (image file).',
      tags: ['Image'],
      body: EditImageInput,
      response: Binary,
      responseDescription: 'The edited picture: image/png, image/jpeg or image/webp',
    },
    async handler(call) {
      const { input, file } = await readBody(call);
      return binary(await call.services.imageEdit.edit(call.auth, input, { signal: call.signal, file }));
    },
  },
  {
    method: 'POST',
    path: '/image/multi-edit',
    access: 'account',
    bodyLimit: 'images',
    doc: {
      summary:
        'Edit a base picture with up to two more layers/masks and a prompt; priced per edit and extra image. JSON or multipart (images files).',
      tags: ['Image'],
      body: MultiEditImageInput,
      response: Binary,
      responseDescription: 'The edited picture: image/png, image/jpeg or image/webp',
    },
    async handler(call) {
      const { signal } = call;
      if (!MULTIPART.test(call.header('content-type') ?? '')) {
        const { input, files } = readJsonPictures(await call.bytes(), 'images');
        return binary(await call.services.imageEdit.multiEdit(call.auth, input, { signal, files }));
      }
      requireAccount(call.auth);
      const { files, fields } = await readMultipartFiles(call.headers, call.body, 'images', {
        maxFileBytes: MAX_INPUT_BYTES - 1,
        maxFiles: 3,
      });
      const uploads = files.map((file) => file.bytes);
      return binary(await call.services.imageEdit.multiEdit(call.auth, formFields(fields), { signal, files: uploads }));
    },
  },
  upscaleRoute,
  {
    method: 'POST',
    path: '/images/upscale',
    access: 'account',
    bodyLimit: 'image',
    doc: {
      summary:
        'Upscale as /image/upscale does, answered in the OpenAI images shape of /images/generations: ' +
        '{created, data: [{url}]} (a data: URL) or, with `response_format: b64_json`, [{b64_json}].',
      tags: ['Image'],
      body: UpscaleImageInput.extend({ response_format: OpenAIFormat }),
      response: OpenAIImages,
    },
    async handler(call) {
      const { input, file } = await readBody(call);
      // Clients of the original service (veniceai-cli's `upscale`) read data[0].url here, not the picture itself.
      const { response_format: format, ...fields } = input;
      const responseFormat = parseInput(z.object({ response_format: OpenAIFormat }), { response_format: format });
      const outcome = await call.services.imageEdit.upscale(call.auth, fields, {
        signal: call.signal,
        file,
      });
      return openAIImage(outcome, responseFormat.response_format ?? 'url');
    },
  },
  {
    method: 'POST',
    path: '/images/edits',
    access: 'account',
    bodyLimit: 'image',
    doc: {
      summary:
        'OpenAI-compatible image edit (multipart: image, prompt, model); an unknown model name uses the default edit model.',
      tags: ['Image'],
      body: z.object({
        image: imageFile,
        prompt: z.string().min(1).max(32_768),
        model: z.string().optional(),
        response_format: z.enum(['b64_json', 'url']).optional(),
        output_format: z.enum(['png', 'jpeg', 'webp']).optional(),
      }),
      bodyContentType: 'multipart/form-data',
      response: OpenAIImages,
    },
    async handler(call) {
      const { input, file } = await readBody(call);
      const { model, response_format: responseFormat, ...rest } = input;
      // As /images/generations does: a model name this catalog lacks (dall-e-2, gpt-image-1) means the default.
      const known =
        typeof model === 'string' && (await call.services.catalog.lookupModel(model, 'inpaint')).model !== undefined;
      const outcome = await call.services.imageEdit.edit(
        call.auth,
        { ...rest, ...(known && { model }) },
        { signal: call.signal, file },
      );
      return openAIImage(outcome, responseFormat === 'url' ? 'url' : 'b64_json');
    },
  },
];
