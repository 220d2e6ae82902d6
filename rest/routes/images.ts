import { z } from 'zod';
import { GenerateImageInput, ImageStylesQuery, OpenAIImageInput } from '../../src/media/images/image.inputs.ts';
import type { GeneratedImages } from '../../src/media/images/image.service.ts';
import type { ProcessedImage } from '../../src/media/images/post-process.ts';
import { compressJson } from '../compression.ts';
import { balanceHeaders, json, queryObject } from '../http.ts';
import type { Route } from '../router.ts';
import { base64Bytes, splicedJson } from '../spliced-json.ts';

/*
 * Image generation: the native route (JSON with base64 pictures, or one picture as binary) and the
 * OpenAI-compatible one. Only JSON answers are compressed (Accept-Encoding): a picture is already compressed,
 * and a binary answer goes out exactly as encoded.
 */

const tags = ['Images'];

const GenerateResponse = z.object({
  id: z.string(),
  images: z.array(z.string()).describe('Base64 pictures in the requested format'),
  timing: z.object({
    inferenceDuration: z.number(),
    inferencePreprocessingTime: z.number(),
    inferenceQueueTime: z.number(),
    total: z.number(),
  }),
  request: z.record(z.string(), z.unknown()).describe('The request as it ran, with defaults and the seed'),
});
const OpenAIResponse = z.object({
  created: z.number().int(),
  data: z.array(z.object({ b64_json: z.string().optional(), url: z.string().optional() })),
});
const StylesResponse = z.object({ object: z.literal('list'), data: z.array(z.string()) });

/** Headers every generation answer carries: the seed, the blur verdict, the balance after the charge. */
function imageHeaders(generated: GeneratedImages): Record<string, string> {
  return {
    'x-image-seed': String(generated.seed),
    ...(generated.blurred ? { 'x-is-blurred': 'true' } : {}),
    ...(generated.simulated ? { 'x-image-simulated': 'true' } : {}),
    ...balanceHeaders(generated.charge),
  };
}

/** A picture's base64 as bytes: the engine's own when it passed through unchanged (rest/spliced-json.ts). */
const base64Of = (image: ProcessedImage): Buffer => image.base64 ?? base64Bytes(image.bytes);

export const imageRoutes: Route[] = [
  {
    method: 'POST',
    path: '/image/generate',
    access: 'account',
    doc: {
      summary:
        'Generate images; priced per picture from the model’s pricing. `return_binary: true` answers with the picture ' +
        'itself; headers x-image-seed (the seed used) and x-is-blurred (safe mode blurred adult content).',
      tags,
      body: GenerateImageInput,
      response: GenerateResponse,
    },
    async handler(call) {
      const generated = await call.services.images.generation.generate(call.auth, await call.json(), {
        signal: call.signal,
      });
      const headers = imageHeaders(generated);
      const first = generated.images[0];
      if (generated.request.return_binary === true && first) {
        return { status: 200, headers: { 'content-type': first.contentType, ...headers }, body: first.bytes };
      }
      const body = splicedJson([
        `{"id":${JSON.stringify(generated.id)},"images":[`,
        ...generated.images.flatMap((image, index) => [index === 0 ? '"' : ',"', base64Of(image), '"']),
        `],"timing":${JSON.stringify(generated.timing)},"request":${JSON.stringify(generated.request)}}`,
      ]);
      return { status: 200, ...(await compressJson(body, call.headers['accept-encoding'], headers)) };
    },
  },
  {
    method: 'POST',
    path: '/images/generations',
    access: 'account',
    doc: {
      summary:
        'Generate an image, OpenAI-compatible (`openai.images.generate`); unknown model names use the default image ' +
        'model. `response_format: url` answers with a data: URL.',
      tags,
      body: OpenAIImageInput,
      response: OpenAIResponse,
    },
    async handler(call) {
      const generated = await call.services.images.generation.generateOpenAI(call.auth, await call.json(), {
        signal: call.signal,
      });
      const body = splicedJson([
        `{"created":${Math.floor(Date.now() / 1000)},"data":[`,
        ...generated.images.flatMap((image, index) => [
          (index === 0 ? '' : ',') +
            (generated.responseFormat === 'url' ? `{"url":"data:${image.contentType};base64,` : '{"b64_json":"'),
          base64Of(image),
          '"}',
        ]),
        ']}',
      ]);
      return { status: 200, ...(await compressJson(body, call.headers['accept-encoding'], imageHeaders(generated))) };
    },
  },
  {
    method: 'GET',
    path: '/image/styles',
    access: 'public',
    doc: {
      summary: 'Style names image generation accepts as `style_preset` (of `model`, default the default image model)',
      tags,
      query: ImageStylesQuery,
      response: StylesResponse,
    },
    async handler(call) {
      const styles = await call.services.images.generation.styles(call.auth, queryObject(call.url), {
        signal: call.signal,
      });
      return json({ object: 'list', data: styles });
    },
  },
];
