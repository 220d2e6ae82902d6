import { z } from 'zod';
import { Web3KeyInput } from '../../src/auth/web3-keys.service.ts';
import { json } from '../http.ts';
import type { Route } from '../router.ts';
import { createdKeyWire, CreatedKeyRecord } from './api-keys.ts';

const tags = ['API keys'];

export const web3KeyRoutes: Route[] = [
  {
    method: 'GET',
    path: '/api_keys/generate_web3_key',
    access: 'public',
    doc: {
      summary: 'A token (JWT, valid 10 minutes) for a wallet to sign with personal_sign; POST it back to get a key',
      tags,
      response: z.object({ success: z.literal(true), data: z.object({ token: z.string() }) }),
    },
    async handler({ services, auth }) {
      return json({ success: true, data: { token: await services.web3Keys.token(auth) } });
    },
  },
  {
    method: 'POST',
    path: '/api_keys/generate_web3_key',
    access: 'public',
    doc: {
      summary:
        'Create an API key for the account of the wallet that signed the token (address, signature, token and the options of POST /api_keys); one key per token',
      tags,
      body: Web3KeyInput,
      response: z.object({ success: z.literal(true), data: CreatedKeyRecord }),
    },
    async handler(call) {
      const { key, secret } = await call.services.web3Keys.create(call.auth, await call.json());
      return json({ success: true, data: createdKeyWire(key, secret) });
    },
  },
];
