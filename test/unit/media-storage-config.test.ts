import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

/* Which media storage the environment chooses, and the combinations refused at start. */

describe('media storage configuration', () => {
  it('should store in <LAGOON_DATA_DIR>/media by default, and keep job media 24 hours', () => {
    const config = loadConfig({ LAGOON_DATA_DIR: '/var/lib/lagoon' });
    expect(config.media.storage).toEqual({
      kind: 'local',
      dir: '/var/lib/lagoon/media',
      s3: undefined,
      presignedUrls: false,
    });
    expect(config.jobs.mediaTtlMs).toBe(24 * 3_600_000);
    expect(loadConfig({ LAGOON_MEDIA_RETENTION_HOURS: '2' }).jobs.mediaTtlMs).toBe(7_200_000);
  });

  it('should choose S3 once a bucket is set, with every S3 setting', () => {
    const config = loadConfig({
      LAGOON_MEDIA_S3_BUCKET: 'media',
      LAGOON_MEDIA_S3_ENDPOINT: 'http://minio:9000',
      LAGOON_MEDIA_S3_ACCESS_KEY_ID: 'id',
      LAGOON_MEDIA_S3_SECRET_ACCESS_KEY: 'secret',
      LAGOON_MEDIA_S3_FORCE_PATH_STYLE: 'true',
      LAGOON_MEDIA_S3_PREFIX: 'lagoon/',
      LAGOON_MEDIA_S3_PRESIGNED_URLS: 'true',
    });
    expect(config.media.storage).toMatchObject({
      kind: 's3',
      presignedUrls: true,
      s3: {
        bucket: 'media',
        endpoint: 'http://minio:9000',
        region: 'us-east-1',
        accessKeyId: 'id',
        secretAccessKey: 'secret',
        forcePathStyle: true,
        prefix: 'lagoon/',
      },
    });
    // The operator may keep a configured bucket and still store elsewhere.
    expect(loadConfig({ LAGOON_MEDIA_S3_BUCKET: 'media', LAGOON_MEDIA_STORAGE: 'local' }).media.storage.kind).toBe(
      'local',
    );
  });

  it('should refuse to start on an incomplete or contradictory S3 setting', () => {
    expect(() => loadConfig({ LAGOON_MEDIA_STORAGE: 's3' })).toThrow(ConfigError);
    expect(() => loadConfig({ LAGOON_MEDIA_S3_BUCKET: 'b', LAGOON_MEDIA_S3_ACCESS_KEY_ID: 'id' })).toThrow(
      /SECRET_ACCESS_KEY/,
    );
    expect(() => loadConfig({ LAGOON_MEDIA_S3_PRESIGNED_URLS: 'true' })).toThrow(/needs the s3 media storage/);
    expect(() => loadConfig({ LAGOON_MEDIA_STORAGE: 'ftp' })).toThrow(ConfigError);
    expect(() => loadConfig({ LAGOON_MEDIA_S3_ENDPOINT: 'not a url' })).toThrow(ConfigError);
    expect(() => loadConfig({ LAGOON_MEDIA_RETENTION_HOURS: '0' })).toThrow(ConfigError);
  });
});
