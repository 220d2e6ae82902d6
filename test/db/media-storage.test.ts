import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaStore } from '../../src/media/media-store.ts';
import type { BlobStore } from '../../src/media/storage/blob-store.ts';
import { LocalBlobStore } from '../../src/media/storage/local-blob-store.ts';
import { S3BlobStore } from '../../src/media/storage/s3-blob-store.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startLocalS3, type LocalS3, S3_BUCKET } from '../helpers/s3-server.ts';
import { createAccountWithKey, useTestServices } from '../helpers/services.ts';

/*
 * The media storage contract, run against both stores (a local directory, and S3 through the AWS SDK against a
 * local s3rver): whole and ranged reads, overwrite, idempotent delete, pre-signed URLs; then the MediaStore on each
 * store and the test database: a row names its store, deletes and sweeps remove the bytes, two sweeps racing delete
 * every object once.
 */

const HOUR = 3_600_000;
const pattern = (size: number, seed = 0) => Buffer.from(Array.from({ length: size }, (_, i) => (i * 7 + seed) % 251));

describe.each(['local', 's3'] as const)(`media storage: %s (${testDatabaseKind})`, (kind) => {
  const state = useTestServices();
  let s3: LocalS3 | undefined;
  let dir: string;
  let blobs: BlobStore;
  let store: MediaStore;
  let accountId: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lagoon-media-contract-'));
    if (kind === 's3') {
      s3 = await startLocalS3();
      blobs = new S3BlobStore({
        endpoint: s3.endpoint,
        bucket: S3_BUCKET,
        region: 'us-east-1',
        accessKeyId: 'S3RVER',
        secretAccessKey: 'S3RVER',
        forcePathStyle: true,
        prefix: 'media/',
      });
    } else blobs = new LocalBlobStore(dir);
    store = new MediaStore({ db: state.handle.db, blobs });
    accountId = (await createAccountWithKey(state.services)).accountId;
  });

  afterAll(async () => {
    await store.close();
    await s3?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('should keep an object whole, read any range of it, and answer none once deleted', async () => {
    const key = randomUUID();
    const bytes = pattern(5000);
    await blobs.put(key, bytes, 'video/mp4');
    expect((await blobs.get(key))?.equals(bytes)).toBe(true);
    expect((await blobs.getRange(key, 0, 1))?.equals(bytes.subarray(0, 1))).toBe(true);
    expect((await blobs.getRange(key, 1234, 100))?.equals(bytes.subarray(1234, 1334))).toBe(true);
    expect((await blobs.getRange(key, 4990, 100))?.equals(bytes.subarray(4990))).toBe(true);
    expect((await blobs.getRange(key, 6000, 10))?.byteLength).toBe(0);
    await blobs.delete(key);
    expect(await blobs.get(key)).toBeUndefined();
    expect(await blobs.getRange(key, 0, 10)).toBeUndefined();
    await blobs.delete(key); // a second delete is no error
    expect(await blobs.get(randomUUID())).toBeUndefined();
  });

  it('should replace an object whole when written again under its key', async () => {
    const key = randomUUID();
    await blobs.put(key, pattern(3000, 1), 'audio/mpeg');
    await blobs.put(key, pattern(1000, 2), 'audio/mpeg');
    expect((await blobs.get(key))?.equals(pattern(1000, 2))).toBe(true);
    if (kind === 'local') expect((await readdir(dir)).filter((name) => name.startsWith(key))).toEqual([key]);
  });

  it('should refuse a key that is not a media id (no path or key of anything else)', async () => {
    await expect(blobs.put('../escape', pattern(1), 'text/plain')).rejects.toThrow(/not a media key/);
    await expect(blobs.get('a/b')).rejects.toThrow(/not a media key/);
  });

  it('should make pre-signed URLs only where the store serves them itself (S3)', async () => {
    const key = randomUUID();
    await blobs.put(key, pattern(2000), 'video/mp4');
    if (kind === 'local') {
      expect(blobs.signedUrl).toBeUndefined();
      return;
    }
    const url = await blobs.signedUrl!(key, new Date(Date.now() + 24 * HOUR));
    expect(url).toMatch(/X-Amz-Signature=/);
    expect(url).toMatch(/X-Amz-Expires=86400/);
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await whole.arrayBuffer()).equals(pattern(2000))).toBe(true);
    const part = await fetch(url, { headers: { range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(pattern(2000).subarray(10, 20))).toBe(true);
    // (s3rver does not check the signature itself, so a forged URL is not tested here.)
  });

  it('should store media bytes in the store and only their description in the row', async () => {
    const bytes = pattern(4096);
    const info = await store.put({ accountId, contentType: 'audio/wav', bytes, ttlMs: HOUR });
    expect(info).toMatchObject({ storage: kind, byteSize: 4096 });
    const row = await state.handle.db
      .selectFrom('media_objects')
      .select(['bytes', 'storage'])
      .where('id', '=', info.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ bytes: null, storage: kind });
    expect((await blobs.get(info.id))?.equals(bytes)).toBe(true);
    expect((await store.get(info.id))?.bytes.equals(bytes)).toBe(true);
    expect((await store.read(info, 4000, 500))?.equals(bytes.subarray(4000))).toBe(true);
    expect((await store.read(info.id, 5, 5))?.equals(bytes.subarray(5, 10))).toBe(true);

    expect(await store.delete(info.id)).toBe(true);
    expect(await blobs.get(info.id)).toBeUndefined();
    expect(await store.get(info.id)).toBeUndefined();
    expect(await store.read(info, 0, 10)).toBeUndefined();
    expect(await store.delete(info.id)).toBe(false);
  });

  it('should write an object given out in advance over itself (a retried job), one row', async () => {
    const id = randomUUID();
    await store.put({ id, accountId, contentType: 'video/mp4', bytes: pattern(100, 3), ttlMs: HOUR });
    await store.put({ id, accountId, contentType: 'video/mp4', bytes: pattern(200, 4), ttlMs: HOUR });
    const rows = await state.handle.db.selectFrom('media_objects').select('byte_size').where('id', '=', id).execute();
    expect(rows.map((r) => Number(r.byte_size))).toEqual([200]);
    expect((await store.get(id))?.bytes.equals(pattern(200, 4))).toBe(true);
  });

  it('should sweep expired objects with their bytes, each once when two sweeps race', async () => {
    const past = new Date(Date.now() - 2 * HOUR);
    const expired = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.put({ accountId, contentType: 'image/png', bytes: pattern(64, i), ttlMs: HOUR / 2 }, past),
      ),
    );
    const kept = await store.put({ accountId, contentType: 'image/png', bytes: pattern(64), ttlMs: HOUR });
    const [first, second] = await Promise.all([store.sweepExpired(new Date(), 5), store.sweepExpired(new Date(), 5)]);
    let swept = first! + second!;
    for (let batch = 1; batch > 0; swept += batch) batch = await store.sweepExpired(new Date(), 5);
    expect(swept).toBeGreaterThanOrEqual(12);
    for (const info of expired) expect(await blobs.get(info.id)).toBeUndefined();
    expect((await store.get(kept.id))?.bytes.equals(pattern(64))).toBe(true);
  });
});
