import { ValidationError } from '../../errors.ts';
import { detectDocument, type DocumentKind } from './detect.ts';
import { extractDocx } from './docx.ts';
import { extractPdf } from './pdf.ts';
import { extractPptx } from './pptx.ts';
import { extractPlainText } from './text.ts';
import { extractXlsx } from './xlsx.ts';
import { assertSafeZip, type ZipLimits } from './zip.ts';

export interface ExtractLimits {
  readonly zip: ZipLimits;
  /** Most characters of text one document may yield. */
  readonly maxTextChars: number;
}

export interface Extracted {
  readonly kind: DocumentKind;
  readonly text: string;
}

/**
 * The text of a document, in memory only: detect the type from the bytes, check ZIP containers for bombs before
 * a library opens them, then extract. Every refusal is a ValidationError with a message for the caller.
 */
export async function extractDocument(bytes: Uint8Array, limits: ExtractLimits): Promise<Extracted> {
  const { kind, entries } = detectDocument(bytes, limits.zip);
  if (entries) assertSafeZip(bytes, entries, limits.zip);
  let text: string;
  switch (kind) {
    case 'pdf':
      text = await extractPdf(bytes);
      break;
    case 'docx':
      text = await extractDocx(bytes);
      break;
    case 'pptx':
      text = extractPptx(bytes, entries ?? []);
      break;
    case 'xlsx':
      text = await extractXlsx(bytes);
      break;
    case 'text':
      return { kind, text: checkLength(extractPlainText(bytes), limits) };
  }
  return { kind, text: checkLength(tidy(text), limits) };
}

/**
 * One line ending style, no trailing spaces, at most one blank line in a row. Trailing spaces are cut line by line:
 * a regular expression for them retries every position of a long run of spaces that ends in text, quadratic on a
 * row of thousands of empty spreadsheet cells.
 */
export function tidy(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function checkLength(text: string, limits: ExtractLimits): string {
  if (text.length > limits.maxTextChars) {
    throw new ValidationError(
      `The document yields more than ${limits.maxTextChars.toLocaleString('en-US')} characters of text, more than this endpoint returns.`,
    );
  }
  return text;
}
