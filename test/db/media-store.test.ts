import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { createMediaKit } from '../../src/media/media.wiring.ts';
import { MediaLinks, requestOrigin } from '../../src/media/media-links.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey, useTestServices } from '../helpers/services.ts';

const HOUR = 3_600_000;

describe(`media store and signed links (${testDatabaseKind})`, () => {
  const state = useTestServices();
  const kit = () => state.services.media;
  const account = async () => (await createAccountWithKey(state.services)).accountId;

  it('keeps bytes of any content type, reads ranges and deletes', async () => {
    const accountId = await account();
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251));
    const info = await kit().store.put({ accountId, contentType: 'audio/mpeg', bytes, ttlMs: HOUR });
    expect(info).toMatchObject({ accountId, contentType: 'audio/mpeg', byteSize: 3000 });

    const stored = await kit().store.get(info.id);
    expect(stored?.bytes.equals(bytes)).toBe(true);
    expect(stored?.expiresAt.getTime()).toBe(info.expiresAt.getTime());
    expect((await kit().store.read(info.id, 100, 50))?.equals(bytes.subarray(100, 150))).toBe(true);
    expect((await kit().store.read(info.id, 2990, 50))?.equals(bytes.subarray(2990))).toBe(true);
    expect(await kit().store.info(info.id)).toMatchObject({ byteSize: 3000 });

    expect(await kit().store.delete(info.id)).toBe(true);
    expect(await kit().store.get(info.id)).toBeUndefined();
    expect(await kit().store.read(info.id, 0, 1)).toBeUndefined();
    expect(await kit().store.delete(info.id)).toBe(false);
    expect(await kit().store.get('not-a-uuid')).toBeUndefined();
  });

  it('does not serve an expired object, and the sweep deletes it', async () => {
    const accountId = await account();
    const now = new Date();
    const old = await kit().store.put(
      { accountId, contentType: 'image/png', bytes: Buffer.from('x'), ttlMs: 1000 },
      now,
    );
    const fresh = await kit().store.put({ accountId, contentType: 'image/png', bytes: Buffer.from('y'), ttlMs: HOUR });
    const later = new Date(now.getTime() + 2000);
    expect(await kit().store.get(old.id, later)).toBeUndefined();
    expect(await kit().store.info(old.id, later)).toBeUndefined();

    await createMediaKit({ db: state.handle.db, logger: createLogger('silent') }).sweeper.sweepOnce(later);
    const left = await state.handle.db.selectFrom('media_objects').select('id').execute();
    expect(left.map((row) => row.id)).not.toContain(old.id);
    expect(left.map((row) => row.id)).toContain(fresh.id);
  });

  it('signs URLs any process with the same database opens, and refuses tampered, expired or foreign ones', async () => {
    const accountId = await account();
    const bytes = Buffer.from('a picture');
    const link = await kit().links.publish(accountId, { bytes, contentType: 'image/webp' }, 'https://lagoon.example');
    expect(link.url).toBe(`https://lagoon.example/media/${link.token}`);
    expect(link.expiresAt.getTime() - Date.now()).toBeGreaterThan(HOUR - 60_000);

    // Another process: its own MediaLinks on the same database reads the same generated secret.
    const other = createMediaKit({ db: state.handle.db, logger: createLogger('silent') });
    const opened = await other.links.open(link.token);
    expect(opened?.bytes.equals(bytes)).toBe(true);
    expect(opened?.contentType).toBe('image/webp');

    const [payload = '', signature = ''] = link.token.split('.');
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    for (const bad of [
      `${flip(payload, 3)}.${signature}`,
      `${payload}.${flip(signature, 5)}`,
      `${payload}.${signature}x`,
      link.token.slice(0, -1),
      '',
      'not a token',
    ])
      expect(await kit().links.open(bad)).toBeUndefined();

    expect(await kit().links.open(link.token, new Date(link.expiresAt.getTime() + 1000))).toBeUndefined();

    const foreign = new MediaLinks({
      db: state.handle.db,
      store: kit().store,
      options: { secret: 'another-secret-another-secret-another', ttlMs: HOUR },
    });
    expect(await foreign.open(link.token)).toBeUndefined();
    const foreignToken = await foreign.sign(link.media.id, link.expiresAt);
    expect(await kit().links.open(foreignToken)).toBeUndefined();
    expect((await foreign.open(foreignToken))?.bytes.equals(bytes)).toBe(true);
  });

  it('a shorter URL lifetime than the object’s is honoured; the object outliving it stays', async () => {
    const accountId = await account();
    const info = await kit().store.put({
      accountId,
      contentType: 'video/mp4',
      bytes: Buffer.from('v'),
      ttlMs: 24 * HOUR,
    });
    const link = await kit().links.link(info, new Date(Date.now() + 60_000));
    expect(await kit().links.stat(link.token)).toMatchObject({ id: info.id, byteSize: 1 });
    expect(await kit().links.stat(link.token, new Date(Date.now() + 120_000))).toBeUndefined();
    expect(await kit().store.info(info.id, new Date(Date.now() + 120_000))).toBeDefined();
  });

  it('builds the origin from Host and X-Forwarded-Proto, and ignores a host that is not one', () => {
    expect(requestOrigin({ host: 'api.example.com', forwardedProto: 'https, http' })).toBe('https://api.example.com');
    expect(requestOrigin({ host: '127.0.0.1:8080' })).toBe('http://127.0.0.1:8080');
    expect(requestOrigin({ fallbackUrl: 'https://lagoon.test/graphql' })).toBe('https://lagoon.test');
    expect(requestOrigin({ host: 'evil.example/<script>' })).toBeUndefined();
    expect(requestOrigin({ host: 'x.example', forwardedProto: 'javascript' })).toBe('http://x.example');
  });

  it('uses LAGOON_PUBLIC_URL when set', async () => {
    const links = new MediaLinks({
      db: state.handle.db,
      store: kit().store,
      options: { ttlMs: HOUR, publicUrl: 'https://cdn.example/lagoon' },
    });
    const link = await links.publish(
      await account(),
      { bytes: Buffer.from('p'), contentType: 'image/png' },
      'http://x',
    );
    expect(link.url).toBe(`https://cdn.example/lagoon/media/${link.token}`);
  });
});
