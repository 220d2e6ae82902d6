import { describe, expect, it } from 'vitest';
import { isRefusedByDatabase } from '../../src/db/errors.ts';

describe('isRefusedByDatabase', () => {
  it.each([
    ['a foreign key violation', { code: '23503' }, true],
    ['a check constraint', { code: '23514' }, true],
    ['a numeric overflow', { code: '22003' }, true],
    ['an admin shutdown', { code: '57P01' }, false],
    ['a serialisation failure', { code: '40001' }, false],
    ['a deadlock', { code: '40P01' }, false],
    ['a connection failure', { code: '08006' }, false],
    ['too many connections', { code: '53300' }, false],
    ['a socket reset', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), false],
    ['a lost connection without a code', new Error('Connection terminated unexpectedly'), false],
    ['no error object', 'boom', false],
  ])('should say %s is %s', (_name, error, refused) => {
    expect(isRefusedByDatabase(error)).toBe(refused);
  });
});
