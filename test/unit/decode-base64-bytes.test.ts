import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PayloadTooLargeError } from '../../src/errors.ts';
import { decodeBase64Bytes, MAX_INPUT_BYTES } from '../../src/media/images/image-input.ts';

const ascii = (text: string) => Buffer.from(text, 'latin1');

describe('decodeBase64Bytes', () => {
  it('should decode across slice boundaries exactly as one decode', () => {
    // 49,151 to 49,153 bytes: base64 of 65,536 characters and around it (one slice, and one character past it).
    for (const length of [1, 2, 3, 49_151, 49_152, 49_153, 200_000]) {
      const bytes = randomBytes(length);
      expect(decodeBase64Bytes(ascii(bytes.toString('base64')))?.equals(bytes), `${length}`).toBe(true);
      expect(decodeBase64Bytes(ascii(bytes.toString('base64url')))?.equals(bytes), `${length} url`).toBe(true);
    }
  });

  it('should take a data URL with ;base64, and not one without', () => {
    const bytes = randomBytes(100_000);
    expect(decodeBase64Bytes(ascii(`data:image/png;base64,${bytes.toString('base64')}`))?.equals(bytes)).toBe(true);
    expect(decodeBase64Bytes(ascii(`DATA:image/png;BASE64,${bytes.toString('base64')}`))?.equals(bytes)).toBe(true);
    expect(decodeBase64Bytes(ascii(`data:image/png,${bytes.toString('base64')}`))).toBeUndefined();
    expect(decodeBase64Bytes(ascii('data:image/png;base64,'))).toBeUndefined();
  });

  it('should leave to the text path what it does not take: whitespace, padding inside, other characters, URLs', () => {
    const text = randomBytes(100_000).toString('base64');
    expect(decodeBase64Bytes(ascii(text.replace(/(.{76})/g, '$1\n')))).toBeUndefined();
    expect(decodeBase64Bytes(ascii(`${text.slice(0, 1000)}=${text.slice(1001)}`))).toBeUndefined();
    expect(decodeBase64Bytes(ascii(`${text.slice(0, 99_000)}*${text.slice(99_001)}`))).toBeUndefined();
    expect(decodeBase64Bytes(ascii(`https://example.com/${text}`))).toBeUndefined();
    expect(decodeBase64Bytes(ascii(''))).toBeUndefined();
  });

  it('should refuse a picture of 25 MB or more before decoding it', () => {
    const length = Math.ceil((MAX_INPUT_BYTES + 3) / 3) * 4;
    expect(() => decodeBase64Bytes(Buffer.alloc(length, 0x41))).toThrow(PayloadTooLargeError);
  });
});
