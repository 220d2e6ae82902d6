import { beforeAll, describe, expect, it } from 'vitest';
import { TextParserService } from '../../src/augment/text-parser.service.ts';
import { createLogger } from '../../src/logger.ts';
import { BASE, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { firstOutOfOrder, makeDocx, makePdf, makePptx, makeXlsx, reorderSlides, words } from '../helpers/documents.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { fundedAccount } from '../helpers/uploads.ts';
import { PATH, useTextParserApp } from '../helpers/text-parser.ts';
import { scaled } from '../helpers/time-scale.ts';

describe(`REST POST ${PATH} (${testDatabaseKind})`, () => {
  const harness = useTextParserApp();
  const { upload, parseCharged, expectRefused } = harness;
  let t: TestApp;
  beforeAll(() => {
    t = harness.state.t;
  });

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

  it(
    'should refuse a document that needs more memory than a worker may use with 400, and keep serving',
    async () => {
      const { auth, accountId } = await createAccountWithKey(t.app.services, {
        credit: { USD: '1' },
        type: 'INFERENCE',
      });
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
    },
    scaled(90_000),
  );

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
