import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BASE, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { makeDocx, makePdf, makeZipBomb, randomBytesOf } from '../helpers/documents.ts';
import { streamingMultipart, streamingRequest } from '../helpers/uploads.ts';
import { MB, PATH, useTextParserApp } from '../helpers/text-parser.ts';
import { scaled } from '../helpers/time-scale.ts';

describe(`REST POST ${PATH}: refusals (${testDatabaseKind})`, () => {
  const harness = useTextParserApp();
  const { upload, expectRefused } = harness;
  let t: TestApp;
  let account: typeof harness.state.account;
  beforeAll(() => {
    ({ t, account } = harness.state);
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
      expect(performance.now() - started).toBeLessThan(scaled(5_000));
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
      await vi.waitFor(() => expect(huge.stats.cancelled).toBe(true), { timeout: scaled(10_000) });
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

    it('should answer the x402 discovery 402 without credentials, before reading the upload', async () => {
      const upload26 = streamingMultipart(26 * MB);
      const response = await t.app.fetch(
        streamingRequest(`${BASE}${PATH}`, { headers: { 'content-type': upload26.contentType }, body: upload26.body }),
      );
      expect(response.status).toBe(402);
      expect(await response.json()).toMatchObject({ x402Version: 2 });
      expect(upload26.stats.pulled).toBeLessThan(256 * 1024);
    });
  });
});
