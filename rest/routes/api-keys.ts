import { z } from 'zod';
import type { ApiKey, ApiKeyUsage } from '../../src/auth/api-key.ts';
import { API_KEY_TYPES, LIMIT_PERIODS, MODEL_PRIVACY_MODES, type AuthContext } from '../../src/auth/auth-context.ts';
import { CreateApiKeyInput, UpdateApiKeyInput } from '../../src/auth/api-key.inputs.ts';
import { formatNano, nanoToNumber } from '../../src/billing/money.ts';
import type { Operations } from '../../src/services.ts';
import { iso, json, type JsonValue } from '../http.ts';
import type { Route } from '../router.ts';

const limitNumber = (value: bigint | null) => (value === null ? null : nanoToNumber(value));

function limitsWire(key: ApiKey) {
  return {
    usd: limitNumber(key.consumptionLimits.usd),
    diem: limitNumber(key.consumptionLimits.diem),
    vcu: limitNumber(key.consumptionLimits.vcu),
  };
}

/** The public API key record (list and get forms). */
export function apiKeyWire(key: ApiKey, usage?: ApiKeyUsage): { [field: string]: JsonValue } {
  return {
    id: key.id,
    apiKeyType: key.apiKeyType,
    description: key.description,
    last6Chars: key.last6Chars,
    consumptionLimits: limitsWire(key),
    limitPeriod: key.limitPeriod,
    modelPrivacy: key.modelPrivacy,
    createdAt: iso(key.createdAt),
    expiresAt: iso(key.expiresAt),
    lastUsedAt: iso(key.lastUsedAt),
    ...(usage && {
      usage: {
        trailingSevenDays: {
          usd: formatNano(usage.trailingSevenDays.usd),
          vcu: formatNano(usage.trailingSevenDays.vcu),
          diem: formatNano(usage.trailingSevenDays.diem),
        },
      },
      currentPeriodUsage: {
        usd: formatNano(usage.currentPeriodUsage.usd),
        diem: formatNano(usage.currentPeriodUsage.diem),
      },
    }),
  };
}

/** The answer of a key creation: the secret appears here only. */
export function createdKeyWire(key: ApiKey, secret: string): { [field: string]: JsonValue } {
  return {
    id: key.id,
    apiKey: secret,
    apiKeyType: key.apiKeyType,
    description: key.description,
    expiresAt: iso(key.expiresAt),
    consumptionLimit: limitsWire(key),
    limitPeriod: key.limitPeriod,
    modelPrivacy: key.modelPrivacy,
  };
}

async function withUsage(services: Operations, auth: AuthContext, keys: ApiKey[]) {
  const usage = await services.apiKeys.usageOf(auth, keys);
  return keys.map((key) => apiKeyWire(key, usage.get(key.id)));
}

const limitsSchema = z.object({ usd: z.number().nullable(), diem: z.number().nullable(), vcu: z.number().nullable() });
const decimals = z.object({ usd: z.string(), diem: z.string() });
export const ApiKeyRecord = z.object({
  id: z.uuid(),
  apiKeyType: z.enum(API_KEY_TYPES),
  description: z.string(),
  last6Chars: z.string(),
  consumptionLimits: limitsSchema,
  limitPeriod: z.enum(LIMIT_PERIODS),
  modelPrivacy: z.enum(MODEL_PRIVACY_MODES),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime().nullable(),
  lastUsedAt: z.iso.datetime().nullable(),
  usage: z.object({ trailingSevenDays: decimals.extend({ vcu: z.string() }) }).optional(),
  currentPeriodUsage: decimals.optional(),
});

export const CreatedKeyRecord = ApiKeyRecord.pick({
  id: true,
  apiKeyType: true,
  description: true,
  expiresAt: true,
  limitPeriod: true,
  modelPrivacy: true,
}).extend({ apiKey: z.string(), consumptionLimit: limitsSchema });

const DeleteQuery = z.object({ id: z.string().describe('The API key id (UUID)') });
const tags = ['API keys'];

export const apiKeyRoutes: Route[] = [
  {
    method: 'GET',
    path: '/api_keys',
    access: 'admin',
    doc: {
      summary: 'List the active API keys of the account',
      tags,
      response: z.object({ data: z.array(ApiKeyRecord), object: z.literal('list') }),
    },
    async handler({ services, auth }) {
      const keys = await services.apiKeys.list(auth);
      return json({ data: await withUsage(services, auth, keys), object: 'list' });
    },
  },
  {
    method: 'GET',
    path: '/api_keys/:id',
    access: 'admin',
    doc: { summary: 'Get one API key of the account', tags, response: z.object({ data: ApiKeyRecord }) },
    async handler({ services, auth, params }) {
      const key = await services.apiKeys.get(auth, params.id ?? '');
      const [data] = await withUsage(services, auth, [key]);
      return json({ data: data ?? null });
    },
  },
  {
    method: 'POST',
    path: '/api_keys',
    access: 'admin',
    doc: {
      summary: 'Create an API key; the secret is in the response only',
      tags,
      body: CreateApiKeyInput,
      response: z.object({
        success: z.literal(true),
        data: CreatedKeyRecord,
      }),
    },
    async handler(call) {
      const { services, auth } = call;
      const { key, secret } = await services.apiKeys.create(auth, await call.json());
      return json({ success: true, data: createdKeyWire(key, secret) });
    },
  },
  {
    method: 'PATCH',
    path: '/api_keys',
    access: 'admin',
    doc: {
      summary: 'Update an API key',
      tags,
      body: UpdateApiKeyInput,
      response: z.object({ success: z.literal(true), data: ApiKeyRecord }),
    },
    async handler(call) {
      const { services, auth } = call;
      const key = await services.apiKeys.update(auth, await call.json());
      return json({ success: true, data: apiKeyWire(key) });
    },
  },
  {
    method: 'DELETE',
    path: '/api_keys',
    access: 'admin',
    doc: { summary: 'Revoke an API key', tags, query: DeleteQuery, response: z.object({ success: z.literal(true) }) },
    async handler({ services, auth, url }) {
      await services.apiKeys.revoke(auth, url.searchParams.get('id') ?? undefined);
      return json({ success: true });
    },
  },
];
