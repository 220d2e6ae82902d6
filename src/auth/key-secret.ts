import { hash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'lagoon_';

/** A new secret: 32 random bytes, URL-safe, with a recognisable prefix (secret scanners can match it). */
export const generateKeySecret = (): string => `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;

/**
 * The only form in which a secret is stored or cached. One-shot `crypto.hash`: a `createHash` object per request
 * is a native object freed through a weak handle at a full garbage collection, whose pause grows with their number.
 */
export const hashKeySecret = (secret: string): string => hash('sha256', secret, 'hex');

export const lastSixOf = (secret: string): string => secret.slice(-6);
