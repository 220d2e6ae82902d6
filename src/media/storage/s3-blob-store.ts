import type { S3Client } from '@aws-sdk/client-s3';
import { type BlobStore, checkKey } from './blob-store.ts';

/** LAGOON_MEDIA_S3_* (docs/configuration.md). */
export interface S3StoreOptions {
  /** Any S3-compatible server (MinIO, R2, …); none: AWS S3 of the region. */
  readonly endpoint?: string | undefined;
  readonly bucket: string;
  readonly region: string;
  readonly accessKeyId?: string | undefined;
  readonly secretAccessKey?: string | undefined;
  /** `<endpoint>/<bucket>/<key>` instead of `<bucket>.<endpoint>/<key>` (MinIO and most self-hosted servers). */
  readonly forcePathStyle: boolean;
  /** Prepended to every key (e.g. `lagoon/media/`), so one bucket can hold other things. */
  readonly prefix: string;
}

/** SigV4 pre-signed URLs live at most 7 days. */
const MAX_PRESIGN_SECONDS = 604_800;

/*
 * The SDK is loaded on first use: importing it takes ≈ 0.8–1.4 s on a busy host, which every process (and every
 * test file) would pay at start although most never configure a bucket.
 */
const loadSdk = async () => ({
  s3: await import('@aws-sdk/client-s3'),
  presigner: await import('@aws-sdk/s3-request-presigner'),
});
type Sdk = Awaited<ReturnType<typeof loadSdk>>;

/**
 * Media bytes in an S3-compatible bucket through the AWS SDK, for several API and worker machines sharing one
 * store. The bucket must exist. A PUT replaces an object whole, so a reader never sees a part; range reads are
 * S3's own `Range` GETs.
 */
export class S3BlobStore implements BlobStore {
  readonly name = 's3';
  private connection: Promise<{ sdk: Sdk; client: S3Client }> | undefined;

  constructor(private readonly options: S3StoreOptions) {}

  async put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    const { sdk, client } = await this.connect();
    const Bucket = this.options.bucket;
    await client.send(
      new sdk.s3.PutObjectCommand({ Bucket, Key: this.key(key), Body: bytes, ContentType: contentType }),
    );
  }

  get(key: string): Promise<Buffer | undefined> {
    return this.read(key, undefined);
  }

  async getRange(key: string, offset: number, length: number): Promise<Buffer | undefined> {
    if (length <= 0) return (await this.exists(key)) ? Buffer.alloc(0) : undefined;
    return this.read(key, `bytes=${offset}-${offset + length - 1}`, { offset, length });
  }

  async delete(key: string): Promise<void> {
    const { sdk, client } = await this.connect();
    // S3 answers a delete of a missing key with success too.
    await client.send(new sdk.s3.DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) }));
  }

  async signedUrl(key: string, expiresAt: Date): Promise<string> {
    const { sdk, client } = await this.connect();
    const seconds = Math.ceil((expiresAt.getTime() - Date.now()) / 1000);
    const expiresIn = Math.max(1, Math.min(MAX_PRESIGN_SECONDS, seconds));
    const command = new sdk.s3.GetObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) });
    return sdk.presigner.getSignedUrl(client, command, { expiresIn });
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    (await connection?.catch(() => undefined))?.client.destroy();
  }

  private connect(): Promise<{ sdk: Sdk; client: S3Client }> {
    this.connection ??= loadSdk().then((sdk) => {
      const { accessKeyId, secretAccessKey, endpoint, region, forcePathStyle } = this.options;
      const client = new sdk.s3.S3Client({
        region,
        forcePathStyle,
        ...(endpoint && { endpoint }),
        // Without keys the SDK's own chain applies (instance role, AWS_* variables, shared files).
        ...(accessKeyId && secretAccessKey && { credentials: { accessKeyId, secretAccessKey } }),
      });
      return { sdk, client };
    });
    return this.connection;
  }

  private async read(
    key: string,
    range: string | undefined,
    wanted?: { offset: number; length: number },
  ): Promise<Buffer | undefined> {
    const { sdk, client } = await this.connect();
    try {
      const answer = await client.send(
        new sdk.s3.GetObjectCommand({ Bucket: this.options.bucket, Key: this.key(key), Range: range }),
      );
      const bytes = answer.Body ? Buffer.from(await answer.Body.transformToByteArray()) : Buffer.alloc(0);
      if (!wanted || bytes.byteLength <= wanted.length) return bytes;
      // A server may answer a range with more than asked (some fakes send `bytes=0-0` whole): cut it to the range.
      const start = answer.ContentRange ? Number(/bytes (\d+)-/.exec(answer.ContentRange)?.[1] ?? 0) : 0;
      return bytes.subarray(wanted.offset - start, wanted.offset - start + wanted.length);
    } catch (error) {
      if (isMissing(error)) return undefined;
      // A range that starts past the end: the object is there, with nothing in that range.
      if (statusOf(error) === 416) return Buffer.alloc(0);
      throw error;
    }
  }

  private async exists(key: string): Promise<boolean> {
    return (await this.read(key, 'bytes=0-0')) !== undefined;
  }

  private key(key: string): string {
    return `${this.options.prefix}${checkKey(key)}`;
  }
}

/** The HTTP status of an S3 service error (the SDK's S3ServiceException carries it in `$metadata`). */
const statusOf = (error: unknown) =>
  (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
const isMissing = (error: unknown) => (error as Error | undefined)?.name === 'NoSuchKey' || statusOf(error) === 404;
