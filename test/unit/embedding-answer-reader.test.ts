import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.ts';
import { EmbeddingAnswerReader } from '../../src/providers/embeddings/embedding-answer-reader.ts';
import {
  Base64Bytes,
  FloatsJson,
  type EngineVector,
  type IndexedVector,
} from '../../src/providers/embeddings/embedding-engine.ts';

const floats = (input: number, dimensions: number) =>
  Array.from({ length: dimensions }, (_, i) => Math.fround(Math.sin(input + i)));
const base64 = (input: number, dimensions: number) =>
  Buffer.from(Float32Array.from(floats(input, dimensions)).buffer).toString('base64');

/** A vector as JSON text, whatever form the reader gave it. */
const textOf = (vector: EngineVector) =>
  vector instanceof Base64Bytes
    ? vector.text()
    : vector instanceof FloatsJson
      ? vector.ascii.toString('latin1')
      : typeof vector === 'string'
        ? vector
        : JSON.stringify(vector);

function readAll(body: string | Buffer, count: number, pieceBytes = Infinity): IndexedVector[] {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const reader = new EmbeddingAnswerReader(count);
  const out: IndexedVector[] = [];
  for (let at = 0; at < bytes.length; at += Math.min(pieceBytes, bytes.length))
    out.push(...reader.push(Buffer.from(bytes.subarray(at, at + pieceBytes))));
  out.push(...reader.end());
  return out;
}

const answer = (data: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ object: 'list', data, model: 'm', usage: { prompt_tokens: 7, total_tokens: 7 }, ...extra });

const brokenBy = (body: string, count: number) => {
  try {
    readAll(body, count, 3);
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return (error as Error).message;
  }
  throw new Error('the answer was read without an error');
};

describe('EmbeddingAnswerReader', () => {
  it('reads base64 vectors as views on the bytes, whatever the pieces the answer comes in', () => {
    const data = [0, 1, 2].map((index) => ({ object: 'embedding', index, embedding: base64(index, 16) }));
    const body = answer(data);
    for (const piece of [1, 2, 7, 64, Infinity]) {
      const vectors = readAll(body, 3, piece);
      expect(vectors.map(({ index }) => index)).toEqual([0, 1, 2]);
      expect(vectors.every(({ vector }) => vector instanceof Base64Bytes)).toBe(true);
      expect(vectors.map(({ vector }) => textOf(vector))).toEqual(data.map((item) => item.embedding));
    }
  });

  it('reads float vectors as their JSON text, and the token count from usage before or after the list', () => {
    const data = [0, 1].map((index) => ({ object: 'embedding', index, embedding: floats(index, 8) }));
    // vLLM's member order: id, object, created, model, data, usage; some servers put usage first.
    for (const body of [
      JSON.stringify({ id: 'embd-1', object: 'list', created: 17, model: 'm', data, usage: { prompt_tokens: 9 } }),
      JSON.stringify({ usage: { prompt_tokens: 9, total_tokens: 9 }, data, model: 'm' }),
    ]) {
      const reader = new EmbeddingAnswerReader(2);
      const vectors = [...reader.push(Buffer.from(body.slice(0, 40))), ...reader.push(Buffer.from(body.slice(40)))];
      vectors.push(...reader.end());
      expect(reader.promptTokens).toBe(9);
      expect(vectors.every(({ vector }) => vector instanceof FloatsJson)).toBe(true);
      expect(vectors.map(({ vector }) => JSON.parse(textOf(vector)) as number[])).toEqual(data.map((d) => d.embedding));
    }
  });

  it('passes vectors on as they complete, in input order even when the upstream sends them out of order', () => {
    const data = [2, 0, 1, 3].map((index) => ({ index, object: 'embedding', embedding: base64(index, 256) }));
    const body = Buffer.from(answer(data));
    const reader = new EmbeddingAnswerReader(4);
    const firstTwo = body.indexOf('"embedding":', body.indexOf('"index":0')) + 1_500;
    expect(reader.push(body.subarray(0, firstTwo)).map(({ index }) => index)).toEqual([0]);
    expect(reader.push(body.subarray(firstTwo)).map(({ index }) => index)).toEqual([1, 2, 3]);
    expect(reader.end()).toEqual([]);
    expect(reader.promptTokens).toBe(7);
  });

  it('passes a long vector on with the read that completes it, not at the end of the answer', () => {
    const body = Buffer.from(
      answer([0, 1].map((index) => ({ object: 'embedding', index, embedding: base64(index, 65_536) }))),
    );
    const reader = new EmbeddingAnswerReader(2);
    const firstEnds = body.indexOf('"', body.indexOf('"embedding":"') + 13) + 2;
    const seen: number[] = [];
    for (let at = 0; at < body.length; at += 64 * 1024) {
      const piece = body.subarray(at, at + 64 * 1024);
      const vectors = reader.push(piece);
      if (vectors.length > 0) seen.push(at + piece.length);
      if (at + piece.length >= firstEnds && seen.length === 0) throw new Error('the first vector was held back');
    }
    expect(seen[0]).toBeLessThan(body.length);
    expect(reader.end()).toEqual([]);
  });

  it('takes vectors without an index in their order, escaped base64 as a string, and unknown members', () => {
    const escaped = base64(1, 64).replace(/\//g, '\\/');
    const body = `{"data":[ {"embedding":"${base64(0, 64)}","object":"embedding","extra":{"a":[1,[2]],"b":"]}"}} ,
      {"object":"embedding","embedding":"${escaped}"}\n], "model":"m"}`;
    const vectors = readAll(body, 2, 5);
    expect(vectors.map(({ index }) => index)).toEqual([0, 1]);
    expect(vectors[1]!.vector).toBe(base64(1, 64));
    expect(textOf(vectors[0]!.vector)).toBe(base64(0, 64));
  });

  it('reads large reads in place, joining only the vector cut between two of them', () => {
    // Vectors of changing sizes (a cut one may be longer than the last one read), base64 and floats, pretty-printed.
    const sizes = [1024, 1024, 16, 4096, 1024, 3, 8192, 1024, 1024, 512];
    const data = sizes.map((dimensions, index) => ({
      index,
      object: 'embedding',
      embedding: index % 3 === 2 ? floats(index, dimensions) : base64(index, dimensions),
    }));
    const body = JSON.stringify({ object: 'list', data, model: 'm', usage: { prompt_tokens: 9 } }, null, 1);
    for (const piece of [4_096, 5_000, 9_999, 65_536, 100_000]) {
      const vectors = readAll(body, sizes.length, piece);
      expect(vectors.map(({ index }) => index)).toEqual(sizes.map((_, index) => index));
      // Float vectors keep the upstream's text, line breaks included.
      expect(vectors.map(({ vector }) => (vector instanceof FloatsJson ? vector.numbers() : textOf(vector)))).toEqual(
        data.map(({ embedding }) => embedding),
      );
    }
    expect(() => readAll(`${body} x`, sizes.length, 65_536)).toThrow('sent more after its embeddings answer');
  });

  it('refuses what is not a whole answer of one vector per input', () => {
    const item = (index: number) => ({ object: 'embedding', index, embedding: base64(index, 4) });
    expect(brokenBy('not json', 1)).toMatch(/not a JSON object/);
    expect(brokenBy('{"error":{"message":"overloaded"}}', 1)).toMatch(/wrong shape/);
    expect(brokenBy(answer([item(0)]), 2)).toMatch(/1 vectors for 2 inputs/);
    expect(brokenBy(answer([item(0), item(1), item(2)]), 2)).toMatch(/more vectors than the 2 inputs/);
    expect(brokenBy(answer([item(0), item(0)]), 2)).toMatch(/bad indexes/);
    expect(brokenBy(answer([item(1), item(1)]), 2)).toMatch(/bad indexes/);
    expect(brokenBy(answer([item(0)]).slice(0, -3), 1)).toMatch(/ended early/);
    expect(brokenBy(`${answer([item(0)])} {}`, 1)).toMatch(/more after/);
    expect(brokenBy(answer([{ object: 'embedding', index: 0, embedding: 'abc' }]), 1)).toMatch(/neither numbers/);
    expect(brokenBy(answer([{ object: 'embedding', index: 0, embedding: [] }]), 1)).toMatch(/neither numbers/);
    expect(brokenBy(answer([{ object: 'embedding', index: 0 }]), 1)).toMatch(/neither numbers/);
    expect(brokenBy(answer(['x']), 1)).toMatch(/not an object/);
    expect(brokenBy('{"data":[{"index":0,"embedding":"AAAA"}],"data":[]}', 1)).toMatch(/two lists/);
  });

  it('reads one huge vector that comes in many small pieces', () => {
    const body = Buffer.from(answer([{ object: 'embedding', index: 0, embedding: base64(0, 1_000_000) }]));
    const vectors = readAll(body, 1, 16 * 1024);
    expect(textOf(vectors[0]!.vector)).toBe(base64(0, 1_000_000));
  });
});
