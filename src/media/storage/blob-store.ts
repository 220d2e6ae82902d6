/*
 * Where media bytes live (src/media/media-store.ts keeps each object's row, this keeps its bytes): a directory under
 * LAGOON_DATA_DIR (local-blob-store.ts) or an S3-compatible bucket (s3-blob-store.ts). Keys are media ids (UUIDs).
 * Every method is idempotent on its key, so two processes racing on one object (a sweep and a complete) both end
 * with it gone, and a retried job writes its result over the same key.
 */
export interface BlobStore {
  /** Recorded in each object's row (media_objects.storage), so a row is read from the store that holds it. */
  readonly name: 'local' | 's3';
  /** Writes the whole object at once: a reader sees the old bytes or the new ones, never a part. */
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  /** The whole object; undefined when there is none. */
  get(key: string): Promise<Buffer | undefined>;
  /** `length` bytes from `offset` (fewer at the end of the object); undefined when there is no object. */
  getRange(key: string, offset: number, length: number): Promise<Buffer | undefined>;
  /** Deletes the object; nothing happens when there is none. */
  delete(key: string): Promise<void>;
  /** A URL that downloads the object straight from the store until `expiresAt` (S3 pre-signed GET). */
  signedUrl?(key: string, expiresAt: Date): Promise<string>;
  close?(): Promise<void>;
}

const KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Keys are lower-case UUIDs: nothing else may become a file name or an object key. */
export function checkKey(key: string): string {
  if (!KEY.test(key)) throw new RangeError(`not a media key: ${key.slice(0, 40)}`);
  return key;
}
