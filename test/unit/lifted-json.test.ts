import { describe, expect, it } from 'vitest';
import { decodePicture } from '../../src/providers/image/image-http.ts';
import { parseLifted } from '../../src/providers/lifted-json.ts';

const picture = Buffer.from(Array.from({ length: 3000 }, (_, index) => (index * 31) % 251));
const base64 = picture.toString('base64');

describe('parseLifted', () => {
  it('lifts long literals out as views on the bytes and parses the rest', () => {
    const body = Buffer.from(
      JSON.stringify({ created: 1, data: [{ b64_json: base64, revised_prompt: 'a "quoted" \\ prompt' }], note: 'x' }),
    );
    const lifted = parseLifted(body, 1000)!;
    const value = lifted.value as { created: number; data: { b64_json: string; revised_prompt: string }[] };
    expect(value.created).toBe(1);
    expect(value.data[0]!.revised_prompt).toBe('a "quoted" \\ prompt');
    expect(value.data[0]!.b64_json).not.toBe(base64);
    const bytes = lifted.bytesOf(value.data[0]!.b64_json);
    expect(bytes.toString('latin1')).toBe(base64);
    expect(bytes.buffer).toBe(body.buffer);
  });

  it('keeps literals with escapes, short ones and arrays of pictures right', () => {
    const escaped = base64.replace(/\//g, '\\/');
    const body = Buffer.from(`{"images":["${base64}","${escaped}"],"info":"{\\"seed\\": 5}","short":"abc"}`);
    const lifted = parseLifted(body, 1000)!;
    const value = lifted.value as { images: string[]; info: string; short: string };
    expect(value.info).toBe('{"seed": 5}');
    expect(value.short).toBe('abc');
    expect(lifted.bytesOf(value.images[0]!).toString('latin1')).toBe(base64);
    // The escaped literal was parsed normally: `\/` is `/`.
    expect(value.images[1]).toBe(base64);
    expect(lifted.bytesOf(value.images[1]!).toString('latin1')).toBe(base64);
  });

  it('lifts long flat arrays only when asked, and leaves nested, mixed and short ones parsed', () => {
    const numbers = Array.from({ length: 200 }, (_, index) => (index + 1) / 7);
    const body = Buffer.from(
      JSON.stringify({
        data: [
          { index: 0, embedding: numbers },
          { index: 1, embedding: numbers.map((value) => -value) },
        ],
        nested: [numbers.slice(0, 3), numbers.slice(3, 6)],
        mixed: ['a', ...numbers],
        short: [1, 2, 3],
        objects: numbers.map((value) => ({ value })),
      }),
    );
    type Value = {
      data: { index: number; embedding: string }[];
      nested: number[][];
      mixed: unknown[];
      short: number[];
      objects: { value: number }[];
    };
    const lifted = parseLifted(body, 256, { arrays: true })!;
    const value = lifted.value as Value;
    expect(value.data.map((item) => item.index)).toEqual([0, 1]);
    const first = lifted.liftedArray(value.data[0]!.embedding)!;
    expect(first.buffer).toBe(body.buffer);
    expect(JSON.parse(first.toString('latin1'))).toEqual(numbers);
    expect(JSON.parse(lifted.liftedArray(value.data[1]!.embedding)!.toString('latin1'))).toEqual(
      numbers.map((value) => -value),
    );
    expect(lifted.liftedBytes(value.data[0]!.embedding)).toBeUndefined();
    expect(value.nested).toEqual([numbers.slice(0, 3), numbers.slice(3, 6)]);
    expect(value.mixed).toEqual(['a', ...numbers]);
    expect(value.short).toEqual([1, 2, 3]);
    expect(value.objects).toHaveLength(200);
    // Without the option, arrays stay in the parsed value.
    expect((parseLifted(body, 256)!.value as { data: { embedding: number[] }[] }).data[0]!.embedding).toEqual(numbers);
  });

  it('lifts an array at the very end and a top-level array', () => {
    const numbers = Array.from({ length: 100 }, (_, index) => index * 1.5);
    const tail = parseLifted(Buffer.from(`{"a":"b","v":${JSON.stringify(numbers)}}`), 64, { arrays: true })!;
    expect(JSON.parse(tail.liftedArray((tail.value as { v: string }).v)!.toString())).toEqual(numbers);
    const top = parseLifted(Buffer.from(JSON.stringify(numbers)), 64, { arrays: true })!;
    expect(JSON.parse(top.liftedArray(top.value as string)!.toString())).toEqual(numbers);
  });

  it('answers undefined for what is not JSON', () => {
    expect(parseLifted(Buffer.from(`{"a":"${base64}`), 1000)).toBeUndefined();
    expect(parseLifted(Buffer.from(`{"a":"${base64}",}`), 1000)).toBeUndefined();
    expect(parseLifted(Buffer.from('<html>'), 1000)).toBeUndefined();
  });
});

describe('decodePicture', () => {
  it('keeps canonical base64 and a data URL’s payload, and drops text that decodes with losses', () => {
    expect(decodePicture(base64).base64?.toString('latin1')).toBe(base64);
    const fromUrl = decodePicture(`data:image/png;base64,${base64}`);
    expect(fromUrl.bytes.equals(Buffer.from(picture))).toBe(true);
    expect(fromUrl.base64?.toString('latin1')).toBe(base64);
    const wrapped = `${base64.slice(0, 76)}\n${base64.slice(76)}`;
    expect(decodePicture(wrapped).bytes.equals(Buffer.from(picture))).toBe(true);
    expect(decodePicture(wrapped).base64).toBeUndefined();
    const urlSafe = Buffer.from([251, 255, 191]).toString('base64url');
    expect(decodePicture(urlSafe).base64).toBeUndefined();
  });
});
