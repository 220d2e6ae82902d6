import { afterAll, beforeAll, expect } from 'vitest';
import { BASE, createTestApp, type TestApp } from './app.ts';
import { fundedAccount } from './uploads.ts';

export const PATH = '/api/v1/augment/text-parser';
export const PRICE_NANO = 10_000_000n; // 0.01 USD
export const MB = 1024 * 1024;

export interface ParseBody {
  text: string;
  tokens: number;
  error?: string;
  code?: string;
}

type Account = Awaited<ReturnType<typeof fundedAccount>>;

/**
 * For a test file of the text parser route (test/rest/text-parser*.test.ts): an app and an account funded with
 * 5 USD, made once for the file, and the upload helpers bound to them.
 */
export function useTextParserApp() {
  const state = {} as { t: TestApp; account: Account };
  beforeAll(async () => {
    state.t = await createTestApp();
    state.account = await fundedAccount(state.t, '5');
  });
  afterAll(async () => state.t?.close());

  function upload(
    file: Uint8Array | string | undefined,
    options: { key?: string | null; format?: string; filename?: string; asText?: boolean } = {},
  ) {
    const form = new FormData();
    if (options.format !== undefined) form.append('response_format', options.format);
    if (file !== undefined) {
      if (options.asText) form.append('file', typeof file === 'string' ? file : new TextDecoder().decode(file));
      else
        form.append(
          'file',
          new Blob([typeof file === 'string' ? new TextEncoder().encode(file) : file.slice()]),
          options.filename ?? 'upload.bin',
        );
    }
    const key = options.key === undefined ? state.account.secret : options.key;
    return state.t.app.fetch(
      new Request(`${BASE}${PATH}`, {
        method: 'POST',
        headers: key ? { authorization: `Bearer ${key}` } : {},
        body: form,
      }),
    );
  }

  /** Uploads, expects 200, and checks the charge: exactly 0.01 USD and exactly one new usage entry. */
  async function parseCharged(file: Uint8Array | string, filename: string): Promise<ParseBody> {
    const { account } = state;
    const before = await account.balance();
    const entriesBefore = (await account.usage()).length;
    const response = await upload(file, { filename });
    const body = (await response.json()) as ParseBody;
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(body.tokens).toBeGreaterThan(0);
    const after = await account.balance();
    expect(before.amount - after.amount).toBe(PRICE_NANO);
    expect(after.reserved).toBe(0n);
    expect(response.headers.get('x-balance-usd')).toBe((Number(after.amount) / 1e9).toString());
    const entries = await account.usage();
    expect(entries).toHaveLength(entriesBefore + 1);
    expect(entries.at(-1)).toMatchObject({
      sku: 'augment-text-parser',
      amount: -PRICE_NANO,
      currency: 'USD',
      units: '1',
      model_type: 'AUGMENT',
    });
    return body;
  }

  async function expectRefused(response: Response, status: number, code: string, message?: RegExp) {
    const body = (await response.json()) as ParseBody;
    expect(response.status, JSON.stringify(body)).toBe(status);
    expect(body.code).toBe(code);
    expect(typeof body.error).toBe('string');
    if (message) expect(body.error).toMatch(message);
    return body;
  }

  return { state, upload, parseCharged, expectRefused };
}
