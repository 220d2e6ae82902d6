import { z } from 'zod';
import { TextParserInput } from '../../src/augment/text-parser.service.ts';
import { requireAccount } from '../../src/auth/permissions.ts';
import { balanceHeaders, json, text } from '../http.ts';
import { readMultipartUpload } from '../multipart.ts';
import type { Route } from '../router.ts';

const UploadBody = TextParserInput.extend({
  file: z
    .file()
    .describe(
      'The document: PDF, DOCX, PPTX, XLSX or UTF-8 text (.txt, .md, .csv, .json, .html); at most 25 MB. The type is read from the bytes.',
    ),
});

export const textParserRoutes: Route[] = [
  {
    method: 'POST',
    path: '/augment/text-parser',
    access: 'account',
    bodyLimit: 'document',
    doc: {
      summary: 'Extract the text of a document (experimental). 0.01 USD per successful request.',
      tags: ['Augment'],
      body: UploadBody,
      bodyContentType: 'multipart/form-data',
      response: z.object({
        text: z.string(),
        tokens: z.number().int().describe('Tokens of `text` (o200k_base encoding)'),
      }),
      responseDescription:
        'With response_format=json the text and its token count; with response_format=text only the text, as text/plain.',
    },
    async handler({ headers, body, services, auth }) {
      // Refuse an unauthenticated upload before reading any of it.
      requireAccount(auth);
      const { file, fields } = await readMultipartUpload(headers, body, 'file', {
        maxFileBytes: services.textParser.maxFileBytes,
      });
      const parsed = await services.textParser.parse(auth, {
        bytes: file.bytes,
        filename: file.filename,
        contentType: file.contentType,
        format: fields.response_format,
      });
      const charged = balanceHeaders(parsed.charge);
      if (parsed.format === 'text')
        return text(parsed.text, { 'content-type': 'text/plain; charset=utf-8', ...charged });
      return json({ text: parsed.text, tokens: parsed.tokens }, 200, charged);
    },
  },
];
