import { z } from 'zod';
import { BackgroundRemoveInput } from '../../src/media/images/background-removal.service.ts';
import { balanceHeaders, text } from '../http.ts';
import type { Route } from '../router.ts';
import { readBody } from './image-edit.ts';

export const backgroundRemovalRoutes: Route[] = [
  {
    method: 'POST',
    path: '/image/background-remove',
    access: 'account',
    bodyLimit: 'image',
    doc: {
      summary:
        'Remove a picture’s background: a PNG with a transparent background. JSON (image as base64 or image_url) or multipart (an image file part or image_url); one price per picture.',
      tags: ['Image'],
      body: BackgroundRemoveInput,
      response: z.string().describe('The cut-out picture (image/png)'),
      responseDescription: 'image/png',
    },
    async handler(call) {
      const { input, file } = await readBody(call);
      const outcome = await call.services.backgroundRemoval.remove(call.auth, input, { file, signal: call.signal });
      return text(outcome.bytes, { 'content-type': 'image/png', ...balanceHeaders(outcome.charge) });
    },
  },
];
