import { randomFillSync } from 'node:crypto';

/*
 * Request ids: 16 random bytes as 32 hex digits. They are drawn from a pool refilled 256 ids at a time, so a
 * request costs a slice of a buffer instead of a call into the system's random generator.
 */

const ID_BYTES = 16;
const pool = Buffer.alloc(ID_BYTES * 256);
let offset = pool.length;

export function newRequestId(): string {
  if (offset >= pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('hex', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}
