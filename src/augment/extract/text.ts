import { ValidationError } from '../../errors.ts';
import { decodeText } from './detect.ts';

/** Plain text as uploaded (Markdown, CSV, JSON and HTML included), BOM removed and line endings made \n. */
export function extractPlainText(bytes: Uint8Array): string {
  const text = decodeText(bytes);
  if (text === undefined) throw new ValidationError('The file is not valid UTF-8 text.');
  return text.replace(/\r\n?/g, '\n');
}
