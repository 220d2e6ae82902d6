import { requireAccount } from '../../src/auth/permissions.ts';
import { formatNano } from '../../src/billing/money.ts';
import type { SettledCharge } from '../../src/billing/billing.types.ts';
import { PayloadTooLargeError } from '../../src/errors.ts';
import { builder } from '../builder.ts';
import { CurrencyEnum } from './enums.ts';
import { INCLUDE_BASE64_ARG, MediaFileRef, mediaFileFor, PAID_MEDIA_ERRORS, type MediaFile } from './media.ts';
// Registers PayloadTooLargeError as a GraphQL type.
import './text-parser.ts';

interface CutOut {
  readonly file: MediaFile;
  readonly charge: SettledCharge;
}

const CutOutRef = builder.objectRef<CutOut>('BackgroundRemoved').implement({
  description: 'A picture with its background removed (PNG with transparency).',
  fields: (t) => ({
    file: t.field({ type: MediaFileRef, resolve: (r) => r.file }),
    charged: t.field({
      type: 'Decimal',
      description: 'The amount charged, in `currency`.',
      resolve: (r) => formatNano(r.charge.charged),
    }),
    currency: t.field({ type: CurrencyEnum, description: 'The balance that paid.', resolve: (r) => r.charge.currency }),
  }),
});

builder.mutationFields((t) => ({
  removeBackground: t.field({
    type: CutOutRef,
    description: 'Remove a picture’s background (REST POST /image/background-remove); one price per picture.',
    authScopes: { account: true },
    args: {
      image: t.arg.string({ required: false, description: 'base64 or a data URL; or give imageUrl' }),
      imageUrl: t.arg.string({ required: false, description: 'http(s) URL; public addresses only' }),
      includeBase64: t.arg.boolean(INCLUDE_BASE64_ARG),
    },
    errors: { types: [...PAID_MEDIA_ERRORS, PayloadTooLargeError] },
    resolve: async (_root, args, context) => {
      const done = await context.services.backgroundRemoval.remove(
        context.auth,
        {
          ...(args.image != null && { image: args.image }),
          ...(args.imageUrl != null && { image_url: args.imageUrl }),
        },
        { signal: context.signal },
      );
      const { accountId } = requireAccount(context.auth);
      const file = await mediaFileFor(
        context,
        accountId,
        { bytes: done.bytes, contentType: 'image/png' },
        { includeBase64: args.includeBase64 },
      );
      return { file, charge: done.charge };
    },
  }),
}));
