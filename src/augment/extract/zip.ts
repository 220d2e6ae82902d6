import { Inflate, inflateSync } from 'fflate';
import { ValidationError } from '../../errors.ts';

/** Limits for ZIP-based documents (DOCX, PPTX, XLSX), checked before any library opens the archive. */
export interface ZipLimits {
  /** Most bytes all entries may inflate to, together. */
  readonly maxUncompressedBytes: number;
  readonly maxEntries: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxUncompressedBytes: 200_000_000, maxEntries: 10_000 };

export interface ZipEntry {
  readonly name: string;
  readonly method: number;
  readonly flags: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly localHeaderOffset: number;
}

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const MAX32 = 0xffffffff;

const corrupt = (why: string) => new ValidationError(`The document is corrupted: ${why}`);

/** The entries of the central directory (what DOCX/XLSX/PPTX readers go by). Throws on a damaged archive. */
export function listZipEntries(bytes: Uint8Array, limits: ZipLimits = DEFAULT_ZIP_LIMITS): ZipEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i -= 1) {
    if (view.getUint32(i, true) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw corrupt('the ZIP archive has no central directory (truncated or not a ZIP file)');
  let count = view.getUint16(eocd + 10, true);
  let offset = view.getUint32(eocd + 16, true);
  if ((count === 0xffff || offset === MAX32) && eocd >= 20 && view.getUint32(eocd - 20, true) === ZIP64_LOCATOR) {
    const record = safeNumber(view.getBigUint64(eocd - 12, true));
    if (record + 56 > bytes.length || view.getUint32(record, true) !== ZIP64_EOCD)
      throw corrupt('bad ZIP64 directory record');
    count = safeNumber(view.getBigUint64(record + 32, true));
    offset = safeNumber(view.getBigUint64(record + 48, true));
  }
  if (count > limits.maxEntries) throw bomb(`it has ${count} entries (at most ${limits.maxEntries} are accepted)`);
  const decoder = new TextDecoder();
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i += 1) {
    if (offset + 46 > bytes.length || view.getUint32(offset, true) !== CENTRAL)
      throw corrupt('the ZIP central directory is damaged');
    const nameLength = view.getUint16(offset + 28, true);
    const extraLength = view.getUint16(offset + 30, true);
    const commentLength = view.getUint16(offset + 32, true);
    const end = offset + 46 + nameLength + extraLength + commentLength;
    if (end > bytes.length) throw corrupt('the ZIP central directory is damaged');
    let compressedSize = view.getUint32(offset + 20, true);
    let size = view.getUint32(offset + 24, true);
    let localHeaderOffset = view.getUint32(offset + 42, true);
    if (size === MAX32 || compressedSize === MAX32 || localHeaderOffset === MAX32) {
      ({ size, compressedSize, localHeaderOffset } = zip64Extra(view, offset + 46 + nameLength, extraLength, {
        size,
        compressedSize,
        localHeaderOffset,
      }));
    }
    entries.push({
      name: decoder.decode(bytes.subarray(offset + 46, offset + 46 + nameLength)),
      flags: view.getUint16(offset + 8, true),
      method: view.getUint16(offset + 10, true),
      compressedSize,
      size,
      localHeaderOffset,
    });
    offset = end;
  }
  return entries;
}

function zip64Extra(
  view: DataView,
  start: number,
  length: number,
  sizes: { size: number; compressedSize: number; localHeaderOffset: number },
) {
  const out = { ...sizes };
  for (let at = start; at + 4 <= start + length;) {
    const id = view.getUint16(at, true);
    const fieldLength = view.getUint16(at + 2, true);
    if (id === 0x0001) {
      let cursor = at + 4;
      const next = () => {
        if (cursor + 8 > at + 4 + fieldLength) throw corrupt('bad ZIP64 extra field');
        const value = safeNumber(view.getBigUint64(cursor, true));
        cursor += 8;
        return value;
      };
      if (out.size === MAX32) out.size = next();
      if (out.compressedSize === MAX32) out.compressedSize = next();
      if (out.localHeaderOffset === MAX32) out.localHeaderOffset = next();
      return out;
    }
    at += 4 + fieldLength;
  }
  throw corrupt('a ZIP64 entry lacks its sizes');
}

function safeNumber(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw corrupt('a ZIP size is out of range');
  return Number(value);
}

const bomb = (why: string) => new ValidationError(`The document was refused as a possible archive bomb: ${why}.`);

/** Where an entry's compressed bytes are, after its local header. */
function dataOf(bytes: Uint8Array, entry: ZipEntry): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = entry.localHeaderOffset;
  if (at + 30 > bytes.length || view.getUint32(at, true) !== LOCAL) throw corrupt(`entry ${entry.name} is damaged`);
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  if (start + entry.compressedSize > bytes.length)
    throw corrupt(`entry ${entry.name} is cut off (the file is truncated)`);
  return bytes.subarray(start, start + entry.compressedSize);
}

function checkEntry(entry: ZipEntry): void {
  if (entry.flags & 0x0001)
    throw new ValidationError(
      'The document is password-protected (its archive is encrypted); remove the password and upload it again.',
    );
  if (entry.method !== 0 && entry.method !== 8)
    throw new ValidationError(`The document uses an unsupported ZIP compression method (${entry.method}).`);
}

/**
 * Inflates every entry without keeping the output, counting real bytes (a header can lie about sizes), and
 * stops as soon as an entry outgrows its declared size or the archive outgrows the limit.
 */
export function assertSafeZip(
  bytes: Uint8Array,
  entries: readonly ZipEntry[],
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): void {
  const declared = entries.reduce((sum, entry) => sum + entry.size, 0);
  const mb = Math.round(limits.maxUncompressedBytes / 1_000_000);
  if (declared > limits.maxUncompressedBytes)
    throw bomb(`it would expand to ${Math.round(declared / 1_000_000)} MB (at most ${mb} MB is accepted)`);
  let total = 0;
  for (const entry of entries) {
    checkEntry(entry);
    const data = dataOf(bytes, entry);
    if (entry.method === 0) {
      if (entry.compressedSize !== entry.size) throw corrupt(`entry ${entry.name} has inconsistent sizes`);
      total += entry.size;
      continue;
    }
    let produced = 0;
    const inflater = new Inflate((chunk) => {
      produced += chunk.length;
      if (produced > entry.size) throw bomb(`entry ${entry.name} inflates beyond its declared size`);
      if (total + produced > limits.maxUncompressedBytes) throw bomb(`it expands to more than ${mb} MB`);
    });
    try {
      // Small input chunks bound each output burst (deflate expands at most ~1032:1).
      for (let at = 0; at < data.length; at += 16_384)
        inflater.push(data.subarray(at, at + 16_384), at + 16_384 >= data.length);
      if (data.length === 0) inflater.push(new Uint8Array(0), true);
    } catch (error) {
      if (error instanceof ValidationError) throw error;
      throw corrupt(`entry ${entry.name} cannot be decompressed`);
    }
    if (produced !== entry.size) throw corrupt(`entry ${entry.name} does not match its declared size`);
    total += produced;
  }
}

/** One entry's bytes (for parts we read ourselves); the output never exceeds the declared size. */
export function readZipEntry(bytes: Uint8Array, entry: ZipEntry): Uint8Array {
  checkEntry(entry);
  const data = dataOf(bytes, entry);
  if (entry.method === 0) return data;
  try {
    return inflateSync(data, { out: new Uint8Array(entry.size) });
  } catch {
    throw corrupt(`entry ${entry.name} cannot be decompressed`);
  }
}

/** An entry's text, looked up by name (leading slash and case ignored, as OPC part names are). */
export function readZipText(bytes: Uint8Array, entries: readonly ZipEntry[], name: string): string | undefined {
  const wanted = name.replace(/^\//, '').toLowerCase();
  const entry = entries.find((e) => e.name.toLowerCase() === wanted);
  return entry ? new TextDecoder().decode(readZipEntry(bytes, entry)) : undefined;
}
