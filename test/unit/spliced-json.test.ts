import { describe, expect, it } from 'vitest';
import { base64Bytes, splicedJson } from '../../rest/spliced-json.ts';

describe('base64Bytes', () => {
  it.each([0, 1, 2, 3, 4, 49_151, 49_152, 49_153, 98_305, 271_000])(
    'encodes %i bytes exactly as Buffer does, slice boundaries included',
    (length) => {
      const bytes = Buffer.from(Array.from({ length }, (_, index) => (index * 37 + 11) % 256));
      const encoded = base64Bytes(bytes);
      expect(encoded.toString('latin1')).toBe(bytes.toString('base64'));
      expect(encoded.length).toBe(Math.ceil(length / 3) * 4);
    },
  );

  it('reads a view on a larger buffer, not the whole of it', () => {
    const whole = Buffer.from('0123456789');
    expect(base64Bytes(whole.subarray(2, 7)).toString('latin1')).toBe(Buffer.from('23456').toString('base64'));
  });
});

describe('splicedJson', () => {
  it('writes text and bytes in order into one JSON document', () => {
    const picture = base64Bytes(Buffer.from('a picture'));
    const body = splicedJson(['{"images":["', picture, '"],"note":"é"}']);
    expect(JSON.parse(body.toString('utf8'))).toEqual({
      images: [Buffer.from('a picture').toString('base64')],
      note: 'é',
    });
  });

  it('writes views on larger buffers at their own length, multi-byte text included, and nothing as nothing', () => {
    const whole = Buffer.from('xxAAAAyy');
    const vector = whole.subarray(2, 6);
    const parts = ['[{"e":"', vector, '","m":"🌊 lagune"}', ',{"e":"', vector, '"}]'];
    const body = splicedJson(parts);
    expect(body.length).toBe(Buffer.byteLength('[{"e":"AAAA","m":"🌊 lagune"},{"e":"AAAA"}]'));
    expect(JSON.parse(body.toString('utf8'))).toEqual([{ e: 'AAAA', m: '🌊 lagune' }, { e: 'AAAA' }]);
    expect(splicedJson([]).length).toBe(0);
  });
});
