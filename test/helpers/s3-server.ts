import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export const S3_BUCKET = 'lagoon-media-test';
/** s3rver accepts this fixed key pair (and signs with it like any S3 server). */
const ACCESS_KEY = 'S3RVER';

export interface LocalS3 {
  readonly endpoint: string;
  /** LAGOON_MEDIA_S3_* for an app that stores its media in the bucket. */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

/** A local S3-compatible server (s3rver) on a free port, with one empty bucket, its files in a temporary directory. */
export async function startLocalS3(): Promise<LocalS3> {
  const directory = await mkdtemp(join(tmpdir(), 'lagoon-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: S3_BUCKET }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    env: {
      LAGOON_MEDIA_S3_ENDPOINT: endpoint,
      LAGOON_MEDIA_S3_BUCKET: S3_BUCKET,
      LAGOON_MEDIA_S3_ACCESS_KEY_ID: ACCESS_KEY,
      LAGOON_MEDIA_S3_SECRET_ACCESS_KEY: ACCESS_KEY,
      LAGOON_MEDIA_S3_FORCE_PATH_STYLE: 'true',
      LAGOON_MEDIA_S3_PREFIX: 'media/',
    },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
