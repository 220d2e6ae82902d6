import mammoth from 'mammoth';
import { ValidationError } from '../../errors.ts';

/** Images are not text: give mammoth an empty source instead of base64-encoding every picture. */
const noImages = mammoth.images.imgElement(() => Promise.resolve({ src: '' }));

/**
 * Headings, paragraphs, lists, tables (one row per line, cells tab-separated), footnotes and endnotes in document
 * order (mammoth, reading the document's structure rather than its layout). Never follows external links.
 */
export async function extractDocx(bytes: Uint8Array): Promise<string> {
  let html: string;
  try {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    html = (
      await mammoth.convertToHtml(
        { buffer },
        { convertImage: noImages, externalFileAccess: false, includeEmbeddedStyleMap: false },
      )
    ).value;
  } catch {
    throw new ValidationError('The DOCX could not be read: the file is corrupted or not a valid Word document.');
  }
  return htmlToText(html);
}

const BLOCK = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'li', 'ul', 'ol', 'table', 'blockquote', 'pre', 'div']);
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

const decode = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (match, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
    return ENTITIES[name.toLowerCase()] ?? match;
  });

/** Mammoth's HTML (a small, regular subset) as plain text. */
export function htmlToText(html: string): string {
  const lines: string[] = [];
  let line = '';
  let cells: string[] | undefined;
  let cellDepth = 0;
  const endLine = () => {
    if (line.trim().length > 0) lines.push(line.trim());
    line = '';
  };
  // Footnote back-references ("↑") are navigation, not text.
  const source = html.replace(/<a href="#(?:footnote|endnote)-ref-[^"]*">↑<\/a>/g, '');
  for (const match of source.matchAll(/<(\/?)([a-z0-9]+)[^>]*>|([^<]+)/gi)) {
    const [, closing, rawTag, text] = match;
    if (text !== undefined) {
      line += decode(text);
      continue;
    }
    const tag = (rawTag ?? '').toLowerCase();
    if (tag === 'br') line += cellDepth > 0 ? ' ' : '\n';
    else if (tag === 'tr') {
      if (closing) {
        line = (cells ?? []).join('\t').replace(/\t+$/, '');
        cells = undefined;
        endLine();
      } else {
        endLine();
        cells = [];
      }
    } else if (tag === 'td' || tag === 'th') {
      if (closing) {
        cellDepth = Math.max(0, cellDepth - 1);
        if (cellDepth === 0) {
          cells?.push(line.replace(/\s+/g, ' ').trim());
          line = '';
        }
      } else cellDepth += 1;
    } else if (BLOCK.has(tag)) {
      if (cellDepth > 0) line += ' ';
      else endLine();
    }
  }
  endLine();
  return lines.join('\n');
}
