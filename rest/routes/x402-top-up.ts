import { z } from 'zod';
import { paymentRequiredHeader, X402_VERSION } from '../../src/wallets/payment-requirements.ts';
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
        // decisions' {x402Version, accepts}, plus the error and code every error body carries (docs/api.md, Errors).
        const body = {
          x402Version: X402_VERSION,
          error: 'Payment required',
          code: 'PAYMENT_REQUIRED',
          accepts: call.services.topUps.requirements(),
        };
        return json(body as unknown as JsonValue, 402, { 'payment-required': paymentRequiredHeader(call.config.x402) });
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
