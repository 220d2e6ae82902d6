import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { firstOutOfOrder, makeDocx, makePptx, makeXlsx, randomBytesOf, words } from '../helpers/documents.ts';
import { fundedAccount, streamingMultipart, streamingRequest } from '../helpers/uploads.ts';
import { scaled } from '../helpers/time-scale.ts';

const PRICE_NANO = 10_000_000n;
const MB = 1024 * 1024;

const PARSE = `mutation Parse($file: File!, $format: ParseFormat) {
  parseDocument(file: $file, format: $format) {
    __typename
    ... on MutationParseDocumentSuccess { data { text tokens kind format charged currency } }
    ... on Error { message code }
    ... on PayloadTooLargeError { limitBytes }
  }
}`;

interface ParseResult {
  data?: {
    parseDocument: {
      __typename: string;
      data?: { text: string; tokens: number; kind: string; format: string; charged: string; currency: string };
      message?: string;
      code?: string;
      limitBytes?: number;
    };
  };
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

describe(`GraphQL parseDocument (${testDatabaseKind})`, () => {
  let t: TestApp;
  let account: Awaited<ReturnType<typeof fundedAccount>>;

  beforeAll(async () => {
    t = await createTestApp();
    account = await fundedAccount(t, '2');
  });
  afterAll(async () => t.close());

  /** A GraphQL multipart request (graphql-multipart-request-spec): operations, map, then the file part. */
  async function parse(
    file: Uint8Array | string,
    options: { key?: string | null; format?: string; filename?: string } = {},
  ): Promise<{ status: number; body: ParseResult }> {
    const form = new FormData();
    form.append(
      'operations',
      JSON.stringify({
        query: PARSE,
        variables: { file: null, ...(options.format ? { format: options.format } : {}) },
      }),
    );
    form.append('map', JSON.stringify({ 0: ['variables.file'] }));
    form.append(
      '0',
      new Blob([typeof file === 'string' ? new TextEncoder().encode(file) : file.slice()]),
      options.filename ?? 'upload.bin',
    );
    const key = options.key === undefined ? account.secret : options.key;
    const response = await t.app.fetch(
      new Request(`${BASE}/graphql`, {
        method: 'POST',
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          accept: 'application/graphql-response+json, application/json',
        },
        body: form,
      }),
    );
    return { status: response.status, body: (await response.json()) as ParseResult };
  }

  it('should parse DOCX, PPTX and XLSX uploads, charging 0.01 USD and writing one usage entry each', async () => {
    const docx = await makeDocx({
      heading: 'gqlword1',
      paragraphs: ['gqlword2 gqlword3'],
      table: [['gqlword4', 'gqlword5']],
      after: 'gqlword6',
    });
    const pptx = await makePptx([
      { title: 'gqlword1', body: 'gqlword2', notes: 'gqlword3' },
      { title: 'gqlword4', body: 'gqlword5 gqlword6' },
    ]);
    const xlsx = await makeXlsx([
      { name: 'First', rows: [['gqlword1', 'gqlword2']] },
      { name: 'Second', rows: [['gqlword3'], ['gqlword4', 'gqlword5', 'gqlword6']] },
    ]);
    for (const [file, kind] of [
      [docx, 'DOCX'],
      [pptx, 'PPTX'],
      [xlsx, 'XLSX'],
    ] as const) {
      const before = await account.balance();
      const entries = (await account.usage()).length;
      const { status, body } = await parse(file, { filename: `f.${kind.toLowerCase()}` });
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
      expect(body.data?.parseDocument.__typename).toBe('MutationParseDocumentSuccess');
      const data = body.data!.parseDocument.data!;
      expect(data).toMatchObject({ kind, format: 'JSON', charged: '0.01', currency: 'USD' });
      expect(data.tokens).toBeGreaterThan(0);
      expect(firstOutOfOrder(data.text, words('gql', 6))).toBeUndefined();
      expect(before.amount - (await account.balance()).amount).toBe(PRICE_NANO);
      const after = await account.usage();
      expect(after).toHaveLength(entries + 1);
      expect(after.at(-1)).toMatchObject({ sku: 'augment-text-parser', amount: -PRICE_NANO });
    }
  });

  it('should accept format TEXT and return the same text', async () => {
    const { body } = await parse('plain words here', { format: 'TEXT', filename: 'a.txt' });
    expect(body.data?.parseDocument.data).toMatchObject({ text: 'plain words here', kind: 'TEXT', format: 'TEXT' });
  });

  it('should return a ValidationError for random binary data and an empty file, without charging', async () => {
    const before = await account.balance();
    const entries = (await account.usage()).length;
    for (const file of [randomBytesOf(2048), new Uint8Array(0)]) {
      const { status, body } = await parse(file);
      expect(status).toBe(200);
      expect(body.data?.parseDocument).toMatchObject({
        __typename: 'ValidationError',
        code: 'INVALID_REQUEST',
        message: expect.any(String),
      });
    }
    expect((await account.balance()).amount).toBe(before.amount);
    expect(await account.usage()).toHaveLength(entries);
  });

  it('should return InsufficientBalanceError for an account without funds and record nothing', async () => {
    const broke = await fundedAccount(t, '0');
    const { body } = await parse('text', { key: broke.secret });
    expect(body.data?.parseDocument).toMatchObject({
      __typename: 'InsufficientBalanceError',
      code: 'INSUFFICIENT_BALANCE',
    });
    expect(await broke.usage()).toHaveLength(0);
  });

  it('should refuse a caller without a key', async () => {
    const { body } = await parse('text', { key: null });
    expect(body.data?.parseDocument ?? null).toBeNull();
    expect(body.errors?.[0]?.extensions?.code).toBe('AUTHENTICATION_FAILED');
  });

  it('should refuse a 26 MB multipart upload with 413 while it streams, without charging', async () => {
    const before = await account.balance();
    const operations = JSON.stringify({ query: PARSE, variables: { file: null } });
    const upload = streamingMultipart(26 * MB, '0', { operations, map: JSON.stringify({ 0: ['variables.file'] }) });
    const started = performance.now();
    const response = await t.app.fetch(
      streamingRequest(`${BASE}/graphql`, {
        headers: { authorization: `Bearer ${account.secret}`, 'content-type': upload.contentType },
        body: upload.body,
      }),
    );
    expect(response.status).toBe(413);
    const body = (await response.json()) as ParseResult;
    expect(body.errors?.[0]?.extensions?.code).toBe('PAYLOAD_TOO_LARGE');
    expect(performance.now() - started).toBeLessThan(scaled(5_000));
    expect((await account.balance()).amount).toBe(before.amount);
  });

  it('should refuse a declared oversized upload with 413 before reading it', async () => {
    const upload = streamingMultipart(26 * MB, '0', {
      operations: JSON.stringify({ query: PARSE, variables: { file: null } }),
      map: JSON.stringify({ 0: ['variables.file'] }),
    });
    const response = await t.app.fetch(
      streamingRequest(`${BASE}/graphql`, {
        headers: {
          authorization: `Bearer ${account.secret}`,
          'content-type': upload.contentType,
          'content-length': String(upload.length),
        },
        body: upload.body,
      }),
    );
    expect(response.status).toBe(413);
    expect(upload.stats.pulled).toBeLessThan(256 * 1024);
  });

  it('should return PayloadTooLargeError for a file just over 25 MB that fits the request limit', async () => {
    const { status, body } = await parse(new Uint8Array(25_000_001).fill(0x61), { filename: 'big.txt' });
    expect(status).toBe(200);
    expect(body.data?.parseDocument).toMatchObject({
      __typename: 'PayloadTooLargeError',
      code: 'PAYLOAD_TOO_LARGE',
      limitBytes: 25_000_000,
    });
  });
});
