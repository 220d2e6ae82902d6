import { ValidationError } from '../../errors.ts';
import { listZipEntries, readZipText, type ZipEntry, type ZipLimits } from './zip.ts';

export const DOCUMENT_KINDS = ['pdf', 'docx', 'pptx', 'xlsx', 'text'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

const SUPPORTED = 'PDF, DOCX, PPTX, XLSX or UTF-8 text (including .md, .csv, .json and .html)';

/** OOXML main-part content types (documents, macro-enabled and template variants) → kind. */
const MAIN_PART_TYPES: readonly [RegExp, DocumentKind][] = [
  [/application\/vnd\.(openxmlformats-officedocument\.wordprocessingml|ms-word)\.[\w.]*main\+xml/i, 'docx'],
  [/application\/vnd\.(openxmlformats-officedocument\.presentationml|ms-powerpoint)\.[\w.]*main\+xml/i, 'pptx'],
  [
    /application\/vnd\.(openxmlformats-officedocument\.spreadsheetml|ms-excel)\.(?![\w.]*binary)[\w.]*main\+xml/i,
    'xlsx',
  ],
];

/** Part names each format always has, for packages whose content types say too little. */
const MAIN_PARTS: readonly [string, DocumentKind][] = [
  ['word/document.xml', 'docx'],
  ['ppt/presentation.xml', 'pptx'],
  ['xl/workbook.xml', 'xlsx'],
];

const startsWith = (bytes: Uint8Array, signature: readonly number[], at = 0) =>
  signature.every((byte, i) => bytes[at + i] === byte);

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const EMPTY_ZIP_MAGIC = [0x50, 0x4b, 0x05, 0x06];
const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]; // OLE compound file (.doc/.xls/.ppt, encrypted OOXML)

/**
 * What a file is, judged from its bytes only (the file name and Content-Type are never trusted for this).
 * Throws a ValidationError naming the problem for anything the text parser cannot read.
 */
export function detectDocument(bytes: Uint8Array, limits?: ZipLimits): { kind: DocumentKind; entries?: ZipEntry[] } {
  if (bytes.length === 0) throw new ValidationError('The file is empty.');
  if (hasPdfHeader(bytes)) return { kind: 'pdf' };
  if (startsWith(bytes, ZIP_MAGIC) || startsWith(bytes, EMPTY_ZIP_MAGIC)) {
    const entries = listZipEntries(bytes, limits);
    return { kind: ooxmlKind(bytes, entries), entries };
  }
  if (startsWith(bytes, CFB_MAGIC)) {
    if (containsUtf16(bytes, 'EncryptedPackage')) {
      throw new ValidationError(
        'The document is password-protected (encrypted Office file); remove the password and upload it again.',
      );
    }
    throw new ValidationError(
      `Legacy binary Office files (.doc, .xls, .ppt) are not supported; save the file as DOCX, XLSX or PPTX. Supported: ${SUPPORTED}.`,
    );
  }
  if (decodeText(bytes) !== undefined) return { kind: 'text' };
  throw new ValidationError(`Unsupported file type: the file is not ${SUPPORTED}.`);
}

/** PDF readers accept the header anywhere in the first 1024 bytes. */
function hasPdfHeader(bytes: Uint8Array): boolean {
  const limit = Math.min(bytes.length - PDF_MAGIC.length, 1024);
  for (let i = 0; i <= limit; i += 1) if (startsWith(bytes, PDF_MAGIC, i)) return true;
  return false;
}

function ooxmlKind(bytes: Uint8Array, entries: readonly ZipEntry[]): DocumentKind {
  const contentTypes = entries.find((e) => e.name === '[Content_Types].xml');
  // [Content_Types].xml is small; a huge one is not an office document.
  const types =
    contentTypes && contentTypes.size <= 4_000_000 ? readZipText(bytes, entries, contentTypes.name) : undefined;
  if (types) for (const [pattern, kind] of MAIN_PART_TYPES) if (pattern.test(types)) return kind;
  const names = new Set(entries.map((e) => e.name.toLowerCase()));
  if (contentTypes) for (const [part, kind] of MAIN_PARTS) if (names.has(part)) return kind;
  if (names.has('mimetype') || names.has('content.xml')) {
    throw new ValidationError(`OpenDocument and other ZIP-based formats are not supported. Supported: ${SUPPORTED}.`);
  }
  throw new ValidationError(
    `Unsupported file type: a ZIP archive that is not a DOCX, PPTX or XLSX document. Supported: ${SUPPORTED}.`,
  );
}

function containsUtf16(bytes: Uint8Array, text: string): boolean {
  const needle = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i += 1) needle[i * 2] = text.charCodeAt(i);
  outer: for (let i = 0; i + needle.length <= bytes.length; i += 1) {
    for (let j = 0; j < needle.length; j += 1) if (bytes[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/**
 * The file as text when it is text: UTF-8 (BOM optional) or UTF-16 with a BOM, with no NUL bytes and few
 * control characters. undefined for binary data.
 */
export function decodeText(bytes: Uint8Array): string | undefined {
  let text: string;
  try {
    if (startsWith(bytes, [0xff, 0xfe])) text = new TextDecoder('utf-16le', { fatal: true }).decode(bytes.subarray(2));
    else if (startsWith(bytes, [0xfe, 0xff]))
      text = new TextDecoder('utf-16be', { fatal: true }).decode(bytes.subarray(2));
    else text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
  let control = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0) return undefined;
    // Tab, line feed, form feed and carriage return are ordinary in text; other C0 controls and DEL are not.
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d) || code === 0x7f)
      control += 1;
  }
  return control > Math.max(8, text.length / 100) ? undefined : text;
}
