import { z } from 'zod';
import { TopUpFailure } from '../../src/wallets/top-up-errors.ts';
import { paymentHeader } from '../../src/wallets/top-up-payload.ts';
import { json, type JsonValue } from '../http.ts';
import type { Route } from '../router.ts';

const TopUpResponse = z.object({
  success: z.literal(true),
  data: z.object({
    walletAddress: z.string(),
    amountCredited: z.number().describe('USD credited'),
    newBalance: z.number().describe('The wallet credit after the top-up, USD'),
    paymentId: z.string(),
  }),
});

const base64Json = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64');

export const x402TopUpRoutes: Route[] = [
  {
    method: 'POST',
    path: '/x402/top-up',
    // The payment is the credential: whoever signed the USDC authorization is credited.
    access: 'public',
    doc: {
      summary:
        'Top up a wallet credit with USDC on Base (x402, scheme exact). Without a PAYMENT-SIGNATURE (or X-PAYMENT, ' +
        'X-402-Payment) header: 402 with the payment requirements, also base64 in PAYMENT-REQUIRED. With one: the ' +
        'EIP-3009 authorization is verified, settled and credited once; PAYMENT-RESPONSE carries the settlement.',
      tags: ['Wallets'],
      response: TopUpResponse,
    },
    async handler(call) {
      const header = paymentHeader((name) => call.header(name));
      if (!header) {
        const required = call.services.topUps.paymentRequired();
        return json(required.body as unknown as JsonValue, 402, { 'payment-required': required.header });
      }
      try {
        const result = await call.services.topUps.topUp(call.auth, header);
        const { settlement, ...data } = result;
        return json({ success: true, data }, 200, { 'payment-response': base64Json(settlement) });
      } catch (error) {
        if (error instanceof TopUpFailure) return json(error.body as JsonValue, error.status);
        throw error;
      }
    },
  },
];
