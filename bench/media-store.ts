import { randomUUID } from 'node:crypto';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { MediaStore } from '../src/media/media-store.ts';
import { benchPng } from './image-profile.ts';

/**
 * The media store's cost for one 2 MB PNG (put, whole read, 1 MiB range read), median of 9, on in-memory PGlite and,
 * with DATABASE_URL, on that PostgreSQL database, which it migrates (use a scratch one; its rows are removed after):
 *   createdb -h 127.0.0.1 -U postgres lagoon_media_bench
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/lagoon_media_bench node --import tsx bench/media-store.ts
 * PGlite runs in the server's thread, so its figures are time the event loop is blocked.
 */
const png = await benchPng();
for (const url of [undefined, process.env.DATABASE_URL].filter((value, i) => i === 0 || value)) {
  const handle = await openDatabase(url ? { url } : { dataDir: 'memory://' });
  await migrateToLatest(handle.db);
  const accountId = randomUUID();
  await handle.db.insertInto('accounts').values({ id: accountId, name: 'media store bench' }).execute();
  const store = new MediaStore({ db: handle.db });
  const put = () => store.put({ accountId, contentType: 'image/png', bytes: png, ttlMs: 60_000 });
  const info = await put();
  const median = async (step: () => Promise<unknown>) => {
    const times: number[] = [];
    await step();
    for (let i = 0; i < 9; i += 1) {
      const started = performance.now();
      await step();
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[4]!.toFixed(1);
  };
  console.log(
    `${handle.kind}: put ${await median(put)} ms, get ${await median(() => store.get(info.id))} ms, ` +
      `1 MiB range ${await median(() => store.read(info.id, 0, 1_048_576))} ms (${png.byteLength} bytes)`,
  );
  await handle.db.deleteFrom('accounts').where('id', '=', accountId).execute();
  await handle.close();
}
