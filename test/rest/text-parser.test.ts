import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TextParserService } from '../../src/augment/text-parser.service.ts';
import { createLogger } from '../../src/logger.ts';
import { BASE, createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import {
  firstOutOfOrder,
  makeDocx,
  makePdf,
  makePptx,
  makeXlsx,
  makeZipBomb,
  randomBytesOf,
  reorderSlides,
  words,
} from '../helpers/documents.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { fundedAccount, streamingMultipart, streamingRequest } from '../helpers/uploads.ts';

const PATH = '/api/v1/augment/text-parser';
const PRICE_NANO = 10_000_000n; // 0.01 USD
const MB = 1024 * 1024;

interface ParseBody {
  text: string;
  tokens: number;
  error?: string;
  code?: string;
}

describe(`REST POST ${PATH} (${testDatabaseKind})`, () => {
  let t: TestApp;
  let account: Awaited<ReturnType<typeof fundedAccount>>;

  beforeAll(async () => {
    t = await createTestApp();
    account = await fundedAccount(t, '5');
  });
  afterAll(async () => t.close());

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
    const key = options.key === undefined ? account.secret : options.key;
    return t.app.fetch(
      new Request(`${BASE}${PATH}`, {
        method: 'POST',
        headers: key ? { authorization: `Bearer ${key}` } : {},
        body: form,
      }),
    );
  }

  /** Uploads, expects 200, and checks the charge: exactly 0.01 USD and exactly one new usage entry. */
  async function parseCharged(file: Uint8Array | string, filename: string): Promise<ParseBody> {
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

  it('should return every word of a multi-page PDF in page order', async () => {
    const w = words('pdf', 12);
    const pdf = await makePdf([
      [`Quarterly report ${w[0]} ${w[1]}`, `${w[2]} and ${w[3]}.`],
      [`${w[4]} ${w[5]}`, `${w[6]}, ${w[7]}`],
      [`${w[8]} ${w[9]} ${w[10]} ${w[11]}`],
    ]);
    const body = await parseCharged(pdf, 'report.pdf');
    expect(firstOutOfOrder(body.text, w)).toBeUndefined();
  });

  it('should return headings, paragraphs and table cells of a DOCX in order, table rows tab-separated', async () => {
    const w = words('doc', 10);
    const docx = await makeDocx({
      heading: `${w[0]} ${w[1]}`,
      paragraphs: [`${w[2]} ${w[3]}`, `${w[4]}`],
      table: [
        [w[5]!, w[6]!],
        [w[7]!, w[8]!],
      ],
      after: w[9]!,
    });
    const body = await parseCharged(docx, 'letter.docx');
    expect(firstOutOfOrder(body.text, w)).toBeUndefined();
    expect(body.text).toContain(`${w[5]}\t${w[6]}\n${w[7]}\t${w[8]}`);
  });

  it('should return every slide of a PPTX with its speaker notes, in slide order', async () => {
    const deck = await makePptx([
      { title: 'pptword1', body: 'pptword2 pptword3', notes: 'pptword4 spoken' },
      { title: 'pptword5', body: 'pptword6' },
      { title: 'pptword7', body: 'pptword8', notes: 'pptword9' },
    ]);
    const body = await parseCharged(deck, 'deck.pptx');
    expect(firstOutOfOrder(body.text, words('ppt', 9))).toBeUndefined();
    // The notes page's slide-number placeholder is not text of the notes.
    expect(body.text.split('\n')).not.toContain('1');
  });

  it('should follow the presentation order, not the slide file names, and keep each slide with its own notes', async () => {
    const deck = await makePptx([
      { title: 'alpha', body: 'alpha body', notes: 'alpha notes' },
      { title: 'beta', body: 'beta body', notes: 'beta notes' },
      { title: 'gamma', body: 'gamma body', notes: 'gamma notes' },
    ]);
    const body = await parseCharged(reorderSlides(deck, [2, 0, 1]), 'reordered.pptx');
    expect(
      firstOutOfOrder(body.text, [
        'gamma',
        'gamma body',
        'gamma notes',
        'alpha',
        'alpha body',
        'alpha notes',
        'beta',
        'beta body',
        'beta notes',
      ]),
    ).toBeUndefined();
  });

  it('should return every sheet of an XLSX under its name, each row tab-separated', async () => {
    const xlsx = await makeXlsx([
      {
        name: 'Revenue',
        rows: [
          ['Region', 'Quarter', 'Amount'],
          ['xlsword1', 'Q1', 1250.5],
          ['xlsword2', 'Q2', 99],
        ],
      },
      { name: 'Notes', rows: [['xlsword3 is the last word']] },
    ]);
    const body = await parseCharged(xlsx, 'book.xlsx');
    expect(body.text).toBe(
      '# Revenue\nRegion\tQuarter\tAmount\nxlsword1\tQ1\t1250.5\nxlsword2\tQ2\t99\n\n# Notes\nxlsword3 is the last word',
    );
  });

  it('should serve plain text, Markdown, CSV, JSON and HTML as the text they are, whatever their name says', async () => {
    for (const [name, content] of [
      ['notes.txt', 'Plain words ünïcödé ✓\nsecond line'],
      ['readme.md', '# Title\n\nSome *markdown* text.'],
      ['data.csv', 'a,b,c\n1,2,3'],
      ['data.json', '{"hello": ["world"]}'],
      ['page.html', '<html><body><p>Hello &amp; welcome</p></body></html>'],
      ['misnamed.pdf', 'actually text'],
    ] as const) {
      const body = await parseCharged(content, name);
      expect(body.text).toBe(content);
    }
  });

  it('should answer text/plain with only the text for response_format=text', async () => {
    const pdf = await makePdf([['Only the text comes back']]);
    const response = await upload(pdf, { format: 'text', filename: 'a.pdf' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await response.text()).toBe('Only the text comes back');
    expect(response.headers.get('x-balance-usd')).toMatch(/^\d/);
  });

  describe('refusals (none charged)', () => {
    let balanceBefore: bigint;
    let entriesBefore: number;
    beforeAll(async () => {
      balanceBefore = (await account.balance()).amount;
      entriesBefore = (await account.usage()).length;
    });
    afterAll(async () => {
      const after = await account.balance();
      expect(after.amount).toBe(balanceBefore);
      expect(after.reserved).toBe(0n);
      expect(await account.usage()).toHaveLength(entriesBefore);
    });

    it('should refuse random binary data with 400', async () => {
      await expectRefused(
        await upload(randomBytesOf(4096), { filename: 'photo.pdf' }),
        400,
        'INVALID_REQUEST',
        /Unsupported file type/,
      );
    });

    it('should refuse an empty file with 400', async () => {
      await expectRefused(await upload(new Uint8Array(0), { filename: 'empty.txt' }), 400, 'INVALID_REQUEST', /empty/);
    });

    it('should refuse a truncated DOCX and one damaged inside with 400', async () => {
      const docx = await makeDocx({ heading: 'h', paragraphs: ['p'], table: [['a']], after: 'z' });
      await expectRefused(
        await upload(docx.subarray(0, Math.floor(docx.length * 0.6)), { filename: 'cut.docx' }),
        400,
        'INVALID_REQUEST',
        /corrupted/,
      );
      const damaged = docx.slice();
      damaged.fill(0x55, 200, 2000);
      await expectRefused(await upload(damaged, { filename: 'damaged.docx' }), 400, 'INVALID_REQUEST');
    });

    it('should refuse a password-protected PDF with 400 saying so', async () => {
      const locked = await makePdf([['secret words']], { userPassword: 'hunter2' });
      await expectRefused(
        await upload(locked, { filename: 'locked.pdf' }),
        400,
        'INVALID_REQUEST',
        /password-protected/,
      );
    });

    it('should refuse a ZIP bomb with 400, whether its headers tell the truth or not', async () => {
      const bomb = makeZipBomb(210 * MB);
      expect(bomb.length).toBeLessThan(1 * MB);
      await expectRefused(await upload(bomb, { filename: 'bomb.docx' }), 400, 'INVALID_REQUEST', /archive bomb/);
      // The same bomb declaring a tiny size: caught while inflating, long before it is expanded.
      const lying = bomb.slice();
      const view = new DataView(lying.buffer);
      for (let at = lying.length - 22; at >= 0; at -= 1) {
        if (view.getUint32(at, true) !== 0x02014b50) continue;
        const nameLength = view.getUint16(at + 28, true);
        if (new TextDecoder().decode(lying.subarray(at + 46, at + 46 + nameLength)) === 'word/document.xml')
          view.setUint32(at + 24, 4096, true);
      }
      await expectRefused(await upload(lying, { filename: 'lying.docx' }), 400, 'INVALID_REQUEST', /archive bomb/);
    });

    it('should refuse a ZIP that is no office document, and legacy binary Office files, with 400', async () => {
      const { zipSync, strToU8 } = await import('fflate');
      await expectRefused(
        await upload(zipSync({ 'a.txt': strToU8('hello') }), { filename: 'x.docx' }),
        400,
        'INVALID_REQUEST',
        /not a DOCX, PPTX or XLSX/,
      );
      const cfb = new Uint8Array(2048);
      cfb.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
      await expectRefused(await upload(cfb, { filename: 'old.doc' }), 400, 'INVALID_REQUEST', /Legacy binary Office/);
    });

    it('should refuse an unknown response_format with 400', async () => {
      await expectRefused(
        await upload('hello', { format: 'xml', filename: 'a.txt' }),
        400,
        'INVALID_REQUEST',
        /response_format/,
      );
    });

    it('should refuse a body that is not multipart/form-data with 415', async () => {
      const response = await t.call(PATH, { key: account.secret, body: { file: 'hello' } });
      await expectRefused(response, 415, 'INVALID_CONTENT_TYPE', /multipart\/form-data/);
    });

    it('should refuse a form without a file field, or with file as a text field, with 400', async () => {
      const body = await expectRefused(
        await upload(undefined, { format: 'json' }),
        400,
        'INVALID_REQUEST',
        /Missing required file field "file"/,
      );
      expect(body).toMatchObject({ issues: [{ path: ['file'], message: 'Required' }] });
      await expectRefused(await upload('just text', { asText: true }), 400, 'INVALID_REQUEST', /must be a file upload/);
    });

    it('should refuse a 26 MB upload with 413 while it streams, without Content-Length', async () => {
      const upload26 = streamingMultipart(26 * MB);
      const started = performance.now();
      const response = await t.app.fetch(
        streamingRequest(`${BASE}${PATH}`, {
          headers: { authorization: `Bearer ${account.secret}`, 'content-type': upload26.contentType },
          body: upload26.body,
        }),
      );
      await expectRefused(response, 413, 'PAYLOAD_TOO_LARGE');
      expect(performance.now() - started).toBeLessThan(5_000);
    });

    it('should stop reading a 256 MB upload after the limit and a bounded discard', async () => {
      const huge = streamingMultipart(256 * MB);
      const response = await t.app.fetch(
        streamingRequest(`${BASE}${PATH}`, {
          headers: { authorization: `Bearer ${account.secret}`, 'content-type': huge.contentType },
          body: huge.body,
        }),
      );
      await expectRefused(response, 413, 'PAYLOAD_TOO_LARGE');
      await vi.waitFor(() => expect(huge.stats.cancelled).toBe(true), { timeout: 10_000 });
      // 25 MB file limit + 1 MB for other fields, then at most 64 MB read and dropped so the client can read the 413.
      expect(huge.stats.pulled).toBeLessThan(25_000_000 + 1_048_576 + 64 * MB + 256 * 1024);
    });

    it('should read a file of exactly 25 MB (the limit) and judge its bytes', async () => {
      await expectRefused(
        await upload(randomBytesOf(25_000_000), { filename: 'limit.bin' }),
        400,
        'INVALID_REQUEST',
        /Unsupported file type/,
      );
    });

    it('should refuse a declared 26 MB upload with 413 before reading its body', async () => {
      const upload26 = streamingMultipart(26 * MB);
      const response = await t.app.fetch(
        streamingRequest(`${BASE}${PATH}`, {
          headers: {
            authorization: `Bearer ${account.secret}`,
            'content-type': upload26.contentType,
            'content-length': String(upload26.length),
          },
          body: upload26.body,
        }),
      );
      await expectRefused(response, 413, 'PAYLOAD_TOO_LARGE');
      expect(upload26.stats.pulled).toBeLessThan(256 * 1024);
    });

    it('should answer 401 without a key, before reading the upload', async () => {
      const upload26 = streamingMultipart(26 * MB);
      const response = await t.app.fetch(
        streamingRequest(`${BASE}${PATH}`, { headers: { 'content-type': upload26.contentType }, body: upload26.body }),
      );
      await expectRefused(response, 401, 'AUTHENTICATION_FAILED');
      expect(upload26.stats.pulled).toBeLessThan(256 * 1024);
    });
  });

  it('should answer damaged documents of every kind with 200 or 400, never a 500', async () => {
    const originals = [
      await makePdf([['fuzz one two'], ['three four']]),
      await makeDocx({ heading: 'h', paragraphs: ['p1', 'p2'], table: [['a', 'b']], after: 'z' }),
      await makePptx([{ title: 't', body: 'b', notes: 'n' }]),
      await makeXlsx([{ name: 'S', rows: [['a', 1]] }]),
    ];
    let seed = 1;
    const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    const statuses = new Set<number>();
    for (const original of originals) {
      for (let i = 0; i < 12; i += 1) {
        let damaged = original.slice();
        if (i % 3 === 0)
          for (let k = 0; k < 10; k += 1) damaged[Math.floor(random() * damaged.length)] = Math.floor(random() * 256);
        else if (i % 3 === 1) damaged = damaged.subarray(0, Math.floor(random() * damaged.length));
        else damaged.fill(0, Math.floor(random() * damaged.length), Math.floor(random() * damaged.length));
        const response = await upload(damaged, { filename: 'damaged' });
        statuses.add(response.status);
        expect([200, 400], await response.text()).toContain(response.status);
      }
    }
    expect(statuses.has(400)).toBe(true);
  });

  it('should answer 402 to an account without funds and record no usage', async () => {
    const broke = await fundedAccount(t, '0');
    const form = new FormData();
    form.append('file', new Blob(['some text']), 'a.txt');
    const response = await t.app.fetch(
      new Request(`${BASE}${PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${broke.secret}` },
        body: form,
      }),
    );
    await expectRefused(response, 402, 'INSUFFICIENT_BALANCE', /Insufficient USD or Diem balance/);
    expect(await broke.usage()).toHaveLength(0);
    expect((await broke.balance()).reserved).toBe(0n);
  });

  it('should stop a parse that runs past the timeout with 400 and release the hold', async () => {
    const { auth, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '1' }, type: 'INFERENCE' });
    const parser = new TextParserService({
      billing: t.app.services.billing,
      logger: createLogger('silent'),
      options: { timeoutMs: 1, size: 1 },
    });
    try {
      const pdf = await makePdf([['slow']]);
      await expect(parser.parse(auth, { bytes: pdf })).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
        message: expect.stringMatching(/took longer than/),
      });
      const usd = (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
      expect(usd).toMatchObject({ amount: 1_000_000_000n, reserved: 0n });
    } finally {
      await parser.close();
    }
  });

  it('should refuse a document that needs more memory than a worker may use with 400, and keep serving', async () => {
    const { auth, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '1' }, type: 'INFERENCE' });
    const parser = new TextParserService({
      billing: t.app.services.billing,
      logger: createLogger('silent'),
      options: { maxHeapMb: 48, size: 1, timeoutMs: 120_000 },
    });
    try {
      const big = await makeXlsx([
        {
          name: 'Big',
          rows: Array.from({ length: 60_000 }, (_, i) => [`row${i}`, i, `some words in row ${i}`, i * 2.5]),
        },
      ]);
      await expect(parser.parse(auth, { bytes: big })).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
        message: expect.stringMatching(/too much memory/),
      });
      const usd = (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
      expect(usd).toMatchObject({ amount: 1_000_000_000n, reserved: 0n });
      // A fresh worker takes the next document.
      expect((await parser.parse(auth, { bytes: new TextEncoder().encode('still here') })).text).toBe('still here');
    } finally {
      await parser.close();
    }
  }, 90_000);

  it('should describe the route as a multipart upload in OpenAPI', async () => {
    const doc = (await (await t.call('/api/v1/openapi.json', { key: null })).json()) as {
      paths: Record<
        string,
        {
          post: {
            requestBody: {
              content: Record<string, { schema: { properties: Record<string, unknown>; required: string[] } }>;
            };
          };
        }
      >;
    };
    const content = doc.paths[PATH]!.post.requestBody.content;
    expect(Object.keys(content)).toEqual(['multipart/form-data']);
    expect(content['multipart/form-data']!.schema.required).toEqual(['file']);
    expect(content['multipart/form-data']!.schema.properties.file).toMatchObject({ type: 'string', format: 'binary' });
  });
});
