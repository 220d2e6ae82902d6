import { ValidationError } from '../../errors.ts';
import type { JobRow } from './jobs.repository.ts';

/** A job id as the database makes them. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A page cursor: the last job's creation time (ms) and id. */
export const encodeJobCursor = (job: JobRow): string =>
  Buffer.from(`${job.created_at.getTime()}:${job.id}`).toString('base64url');

export function decodeJobCursor(cursor: string): { createdAt: Date; id: string } {
  const [ms, id] = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  if (!ms || !/^\d+$/.test(ms) || !id || !UUID.test(id))
    throw new ValidationError('after is not a cursor of this list', [{ path: ['after'], message: 'Not a cursor' }]);
  return { createdAt: new Date(Number(ms)), id };
}
