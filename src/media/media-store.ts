import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Database } from '../db/database.ts';

/*
 * Media objects kept in the database (table media_objects), so every API process serves what any of them stored,
 * on PGlite and PostgreSQL alike. Generated images and speech, and later queued job results, are stored here and
 * handed out by signed URL (media-links.ts). An object past its expiry is never served; the sweeper deletes it.
 */

/** An object's description, without its bytes. */
export interface MediaInfo {
  readonly id: string;
  readonly accountId: string;
  readonly contentType: string;
  readonly byteSize: number;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

export interface MediaObject extends MediaInfo {
  readonly bytes: Buffer;
}

export interface PutMedia {
  readonly accountId: string;
  readonly contentType: string;
  readonly bytes: Uint8Array;
  readonly ttlMs: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/*
 * Bytes cross the driver as base64 text, decoded and encoded by the database: PGlite (in this thread) converts a
 * bytea parameter or column value of 2 MB in ≈ 0.5–1.4 s, base64 text in ≈ 40–140 ms; PostgreSQL is fast either way.
 */
const toBase64 = (bytes: Uint8Array): string =>
  (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('base64');
const encoded = (expression: ReturnType<typeof sql>) => sql<string>`encode(${expression}, 'base64')`;

export class MediaStore {
  constructor(private readonly deps: { readonly db: Database }) {}

  async put(media: PutMedia, now: Date = new Date()): Promise<MediaInfo> {
    if (!(media.ttlMs > 0)) throw new RangeError('ttlMs must be positive');
    const info: MediaInfo = {
      id: randomUUID(),
      accountId: media.accountId,
      contentType: media.contentType,
      byteSize: media.bytes.byteLength,
      createdAt: now,
      expiresAt: new Date(now.getTime() + media.ttlMs),
    };
    await this.deps.db
      .insertInto('media_objects')
      .values({
        id: info.id,
        account_id: info.accountId,
        content_type: info.contentType,
        bytes: sql<Uint8Array>`decode(${toBase64(media.bytes)}, 'base64')`,
        byte_size: BigInt(info.byteSize),
        created_at: info.createdAt,
        expires_at: info.expiresAt,
      })
      .execute();
    return info;
  }

  /** The object's description (no bytes), unless unknown, deleted or expired at `now`. */
  async info(id: string, now: Date = new Date()): Promise<MediaInfo | undefined> {
    if (!UUID.test(id)) return undefined;
    const row = await this.deps.db
      .selectFrom('media_objects')
      .select(['id', 'account_id', 'content_type', 'byte_size', 'created_at', 'expires_at'])
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
      .select(['id', 'account_id', 'content_type', 'byte_size', 'created_at', 'expires_at'])
      .select(encoded(sql.ref('bytes')).as('base64'))
      .where('id', '=', id)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row && { ...toInfo(row), bytes: Buffer.from(row.base64, 'base64') };
  }

  /**
   * `length` bytes from `offset` (0-based), read in the database: a range request on a large object fetches only
   * that part. Undefined once the object is gone (deleted or swept since its description was read).
   */
  async read(id: string, offset: number, length: number): Promise<Buffer | undefined> {
    if (!UUID.test(id)) return undefined;
    const row = await this.deps.db
      .selectFrom('media_objects')
      .select(encoded(sql`substring(bytes from ${offset + 1} for ${length})`).as('part'))
      .where('id', '=', id)
      .executeTakeFirst();
    return row && Buffer.from(row.part, 'base64');
  }

  async delete(id: string): Promise<boolean> {
    if (!UUID.test(id)) return false;
    const result = await this.deps.db.deleteFrom('media_objects').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Deletes objects expired at `now`, at most `limit` per call (a large backlog goes in several short statements). */
  async sweepExpired(now: Date = new Date(), limit = 500): Promise<number> {
    const result = await this.deps.db
      .deleteFrom('media_objects')
      .where(
        'id',
        'in',
        this.deps.db.selectFrom('media_objects').select('id').where('expires_at', '<=', now).limit(limit),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

interface InfoRow {
  id: string;
  account_id: string;
  content_type: string;
  byte_size: bigint;
  created_at: Date;
  expires_at: Date;
}

const toInfo = (row: InfoRow): MediaInfo => ({
  id: row.id,
  accountId: row.account_id,
  contentType: row.content_type,
  byteSize: Number(row.byte_size),
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});
