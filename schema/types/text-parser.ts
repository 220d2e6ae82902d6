import { DOCUMENT_KINDS } from '../../src/augment/extract/detect.ts';
import type { ParsedDocument } from '../../src/augment/text-parser.service.ts';
import { formatNano } from '../../src/billing/money.ts';
import {
  InsufficientBalanceError,
  PayloadTooLargeError,
  SpendLimitExceededError,
  ValidationError,
} from '../../src/errors.ts';
import { RateLimitExceededError } from '../../src/rate-limits/rate-limiter.ts';
import { builder } from '../builder.ts';
import { ErrorInterface } from '../errors.ts';
import { CurrencyEnum } from './enums.ts';

builder.objectType(PayloadTooLargeError, {
  name: 'PayloadTooLargeError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof PayloadTooLargeError,
  fields: (t) => ({ limitBytes: t.exposeInt('limitBytes', { description: 'The limit that was exceeded, in bytes.' }) }),
});

const ParseFormatEnum = builder.enumType('ParseFormat', {
  description: 'REST `response_format`. GraphQL always returns typed fields; select `text` alone for the TEXT form.',
  values: { JSON: { value: 'json' }, TEXT: { value: 'text' } } as const,
});

const DocumentKindEnum = builder.enumType('DocumentKind', {
  description: 'The type the parser found in the bytes (never taken from the file name).',
  values: Object.fromEntries(DOCUMENT_KINDS.map((kind) => [kind.toUpperCase(), { value: kind }])) as Record<
    Uppercase<(typeof DOCUMENT_KINDS)[number]>,
    { value: (typeof DOCUMENT_KINDS)[number] }
  >,
});

const ParsedDocumentRef = builder.objectRef<ParsedDocument>('ParsedDocument').implement({
  description: 'The text of an uploaded document.',
  fields: (t) => ({
    text: t.exposeString('text', {
      description:
        'PDF pages, DOCX paragraphs and tables, PPTX slides with their notes, XLSX sheets (rows tab-separated), or the text file itself.',
    }),
    tokens: t.exposeInt('tokens', { description: 'Tokens of `text` in the o200k_base encoding.' }),
    kind: t.field({ type: DocumentKindEnum, resolve: (parsed) => parsed.kind }),
    format: t.field({ type: ParseFormatEnum, resolve: (parsed) => parsed.format }),
    currency: t.field({
      type: CurrencyEnum,
      description: 'The balance that paid.',
      resolve: (parsed) => parsed.charge.currency,
    }),
    charged: t.field({
      type: 'Decimal',
      description: 'The amount charged, in `currency`.',
      resolve: (parsed) => formatNano(parsed.charge.charged),
    }),
  }),
});

builder.mutationFields((t) => ({
  parseDocument: t.field({
    type: ParsedDocumentRef,
    description:
      'Extracts the text of a PDF, DOCX, PPTX, XLSX or UTF-8 text file (at most 25 MB), sent as a GraphQL multipart upload (experimental). 0.01 USD per successful request; a refused document costs nothing.',
    authScopes: { account: true },
    args: {
      file: t.arg({ type: 'File', required: true }),
      format: t.arg({ type: ParseFormatEnum, required: false, defaultValue: 'json' }),
    },
    errors: {
      types: [
        ValidationError,
        PayloadTooLargeError,
        InsufficientBalanceError,
        SpendLimitExceededError,
        RateLimitExceededError,
      ],
    },
    resolve: async (_root, { file, format }, context) => {
      // A File that is over the limit is refused before its bytes are copied out.
      if (file.size > context.services.textParser.maxFileBytes)
        throw new PayloadTooLargeError(context.services.textParser.maxFileBytes);
      const bytes = new Uint8Array(await file.arrayBuffer());
      return context.services.textParser.parse(context.auth, {
        bytes,
        filename: file.name,
        contentType: file.type,
        format: format ?? 'json',
      });
    },
  }),
}));
