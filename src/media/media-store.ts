import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { BlobStore } from './storage/blob-store.ts';

/*
 * Media objects: one row each in media_objects (owner, type, size, expiry), the bytes in a BlobStore (a directory
 * under LAGOON_DATA_DIR or an S3 bucket, src/media/storage/) or, as before that existed, in the row itself
 * (`database`). Each row names where its bytes are, so objects written under another setting stay readable.
 * Generated images and speech and queued job results are stored here and handed out by signed URL
 * (media-links.ts). An object past its expiry is never served; the sweeper deletes it.
 */

export type MediaStorage = 'database' | 'local' | 's3';

/** An object's description, without its bytes. */
export interface MediaInfo {
  readonly id: string;
  readonly accountId: string;
  readonly contentType: string;
  readonly byteSize: number;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  /** Where its bytes are. */
  readonly storage: MediaStorage;
}

export interface MediaObject extends MediaInfo {
  readonly bytes: Buffer;
}

export interface PutMedia {
  readonly accountId: string;
  readonly contentType: string;
  readonly bytes: Uint8Array;
  readonly ttlMs: number;
  /** An id given out before the object exists (a job's download URL); written over when stored again. */
  readonly id?: string | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/*
 * Bytes kept in the row cross the driver as base64 text, decoded and encoded by the database: PGlite (in its
 * thread) converts a bytea parameter or column value of 2 MB in ≈ 0.5–1.4 s, base64 text in ≈ 40–140 ms.
 */
const toBase64 = (bytes: Uint8Array): string =>
  (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('base64');
const encoded = (expression: ReturnType<typeof sql>) => sql<string | null>`encode(${expression}, 'base64')`;
const INFO_COLUMNS = ['id', 'account_id', 'content_type', 'byte_size', 'created_at', 'expires_at', 'storage'] as const;

export class MediaStore {
  /** Stores by name: the one new objects go to, and any other configured one whose objects are still read. */
  private readonly stores: ReadonlyMap<string, BlobStore>;

  constructor(
    private readonly deps: {
      readonly db: Database;
      /** Where new bytes go; none: into the row (`database`). */
      readonly blobs?: BlobStore | undefined;
      /** Other stores still read from and deleted in (objects written before the setting changed). */
      readonly others?: readonly BlobStore[] | undefined;
      readonly logger?: Logger | undefined;
    },
  ) {
    this.stores = new Map([...(deps.others ?? []), ...(deps.blobs ? [deps.blobs] : [])].map((s) => [s.name, s]));
  }

  /** Where new objects' bytes go. */
  get storage(): MediaStorage {
    return this.deps.blobs?.name ?? 'database';
  }

  async put(media: PutMedia, now: Date = new Date()): Promise<MediaInfo> {
    if (!(media.ttlMs > 0)) throw new RangeError('ttlMs must be positive');
    if (media.id !== undefined && !UUID.test(media.id)) throw new RangeError('not a media id');
    const info: MediaInfo = {
      id: media.id?.toLowerCase() ?? randomUUID(),
      accountId: media.accountId,
      contentType: media.contentType,
      byteSize: media.bytes.byteLength,
      createdAt: now,
      expiresAt: new Date(now.getTime() + media.ttlMs),
      storage: this.storage,
    };
    const blobs = this.deps.blobs;
    // Bytes first, then the row: a row never names bytes that are not there yet.
    if (blobs) await blobs.put(info.id, media.bytes, info.contentType);
    const row = {
      content_type: info.contentType,
      bytes: blobs ? null : sql<Uint8Array>`decode(${toBase64(media.bytes)}, 'base64')`,
      byte_size: BigInt(info.byteSize),
      created_at: info.createdAt,
      expires_at: info.expiresAt,
      storage: info.storage,
    };
    try {
      await this.deps.db
        .insertInto('media_objects')
        .values({ id: info.id, account_id: info.accountId, ...row })
        .onConflict((oc) => oc.column('id').doUpdateSet(row))
        .execute();
    } catch (error) {
      // A fresh id's bytes belong to nobody now; a given id's may be another attempt's, stored under that id.
      if (blobs && media.id === undefined) await blobs.delete(info.id).catch(() => undefined);
      throw error;
    }
    return info;
  }

  /** The object's description (no bytes), unless unknown, deleted or expired at `now`. */
  async info(id: string, now: Date = new Date()): Promise<MediaInfo | undefined> {
    if (!UUID.test(id)) return undefined;
    const row = await this.deps.db
      .selectFrom('media_objects')
      .select(INFO_COLUMNS)
      .where('id', '=', id)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row && toInfo(row);
  }

  /** The whole object, unless unknown, deleted or expired at `now`. */
  async get(id: string, now: Date = new Date()): Promise<MediaObject | undefined> {
    if (!UUID.test(id)) return undefined;
    const row = await this.deps.db
      .selectFrom('media_objects')
      .select(INFO_COLUMNS)
      .select(encoded(sql.ref('bytes')).as('base64'))
      .where('id', '=', id)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (!row) return undefined;
    const info = toInfo(row);
    const bytes =
      info.storage === 'database' ? Buffer.from(row.base64 ?? '', 'base64') : await this.blobsOf(info)?.get(info.id);
    return bytes && { ...info, bytes };
  }

  /**
   * `length` bytes from `offset` (0-based): a range request on a large object fetches only that part. Undefined
   * once the object is gone (deleted or swept since its description was read). Pass the description when there is
   * one: it says where the bytes are without another query.
   */
  async read(media: string | MediaInfo, offset: number, length: number): Promise<Buffer | undefined> {
    const info = typeof media === 'string' ? await this.describe(media) : media;
    if (!info) return undefined;
    if (info.storage !== 'database') return this.blobsOf(info)?.getRange(info.id, offset, length);
    const row = await this.deps.db
      .selectFrom('media_objects')
      .select(encoded(sql`substring(bytes from ${offset + 1} for ${length})`).as('part'))
      .where('id', '=', info.id)
      .executeTakeFirst();
    return row && Buffer.from(row.part ?? '', 'base64');
  }

  /** A URL straight to the store until `expiresAt` (S3 pre-signed), when the object's store makes them. */
  async signedUrl(media: Pick<MediaInfo, 'id' | 'storage'>, expiresAt: Date): Promise<string | undefined> {
    const store = media.storage === 'database' ? undefined : this.stores.get(media.storage);
    return store?.signedUrl?.(media.id, expiresAt);
  }

  /** True when this call deleted the row (its bytes go with it). */
  async delete(id: string): Promise<boolean> {
    if (!UUID.test(id)) return false;
    const rows = await this.deps.db
      .deleteFrom('media_objects')
      .where('id', '=', id)
      .returning(['id', 'storage'])
      .execute();
    await this.deleteBytes(rows);
    return rows.length > 0;
  }

  /**
   * Deletes objects expired at `now`, at most `limit` per call (a large backlog goes in several short statements).
   * Rows another process is deleting at the same moment are skipped, so every object's bytes are deleted once.
   */
  async sweepExpired(now: Date = new Date(), limit = 500): Promise<number> {
    const rows = await this.deps.db
      .deleteFrom('media_objects')
      .where('id', 'in', (qb) =>
        qb
          .selectFrom('media_objects')
          .select('id')
          .where('expires_at', '<=', now)
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .returning(['id', 'storage'])
      .execute();
    await this.deleteBytes(rows);
    return rows.length;
  }

  /** Closes the stores' connections (the S3 client's sockets). */
  async close(): Promise<void> {
    for (const store of this.stores.values()) await store.close?.();
  }

  private async describe(id: string): Promise<MediaInfo | undefined> {
    if (!UUID.test(id)) return undefined;
    const row = await this.deps.db
      .selectFrom('media_objects')
      .select(INFO_COLUMNS)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toInfo(row);
  }

  private blobsOf(info: MediaInfo): BlobStore | undefined {
    const store = this.stores.get(info.storage);
    if (!store) this.deps.logger?.warn({ mediaId: info.id, storage: info.storage }, 'media in a store not configured');
    return store;
  }

  /** After the rows are gone: a failure leaves a file nobody serves, never a row without its bytes. */
  private async deleteBytes(rows: readonly { id: string; storage: string }[]): Promise<void> {
    for (const row of rows) {
      const store = this.stores.get(row.storage);
      if (!store) continue;
      try {
        await store.delete(row.id);
      } catch (error) {
        this.deps.logger?.warn({ err: error, mediaId: row.id }, 'deleting media bytes failed');
      }
    }
  }
}

interface InfoRow {
  id: string;
  account_id: string;
  content_type: string;
  byte_size: bigint;
  created_at: Date;
  expires_at: Date;
  storage: string;
}

const toInfo = (row: InfoRow): MediaInfo => ({
  id: row.id,
  accountId: row.account_id,
  contentType: row.content_type,
  byteSize: Number(row.byte_size),
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  storage: row.storage as MediaStorage,
});
