import { createHash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'lagoon_';

/** A new secret: 32 random bytes, URL-safe, with a recognisable prefix (secret scanners can match it). */
export const generateKeySecret = (): string => `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;

/** The only form in which a secret is stored or cached. */
export const hashKeySecret = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex');

export const lastSixOf = (secret: string): string => secret.slice(-6);
