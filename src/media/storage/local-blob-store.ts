import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type BlobStore, checkKey } from './blob-store.ts';

/*
 * Media bytes as files in one directory (`<LAGOON_DATA_DIR>/media` by default), off the database: PGlite runs one
 * statement at a time, so a file read never waits behind it. A write goes to a temporary file first and is renamed
 * over the key, which is atomic on one file system: a reader never sees half an object. Every process of one machine
 * that shares the data directory serves what any of them wrote; workers on other machines need the S3 store.
 */
export class LocalBlobStore implements BlobStore {
  readonly name = 'local';
  private ready: Promise<unknown> | undefined;

  constructor(private readonly dir: string) {}

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const path = this.path(key);
    this.ready ??= mkdir(this.dir, { recursive: true });
    await this.ready;
    const temporary = `${path}.${randomUUID()}.tmp`;
    try {
      await writeFile(temporary, bytes);
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.path(key));
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async getRange(key: string, offset: number, length: number): Promise<Buffer | undefined> {
    let file;
    try {
      file = await open(this.path(key), 'r');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    try {
      const buffer = Buffer.alloc(length);
      let read = 0;
      // A read may return less than asked before the end of the file: read until full or at the end.
      while (read < length) {
        const { bytesRead } = await file.read(buffer, read, length - read, offset + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      return buffer.subarray(0, read);
    } finally {
      await file.close();
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  private path(key: string): string {
    return join(this.dir, checkKey(key));
  }
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
