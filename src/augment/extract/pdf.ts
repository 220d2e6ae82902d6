import { getDocumentProxy } from 'unpdf';
import { ValidationError } from '../../errors.ts';

/**
 * Text of every page in page order, pages separated by a blank line (unpdf's serverless PDF.js; the only PDF
 * engine this process loads). Pages are read one at a time and released, so memory follows one page.
 */
export async function extractPdf(bytes: Uint8Array): Promise<string> {
  let pdf;
  // PDF.js refuses a Node Buffer (a Uint8Array subclass); a plain view of the same memory is accepted.
  const data = Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
  try {
    // verbosity 0: PDF.js reports only errors, not the font warnings real-world files produce by the dozen.
    pdf = await getDocumentProxy(data, { isEvalSupported: false, verbosity: 0, stopAtErrors: false });
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    if (name === 'PasswordException')
      throw new ValidationError('The PDF is password-protected; remove the password and upload it again.');
    throw new ValidationError('The PDF could not be read: the file is corrupted or not a valid PDF.');
  }
  try {
    const pages: string[] = [];
    for (let number = 1; number <= pdf.numPages; number += 1) {
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) if ('str' in item) text += item.str + (item.hasEOL ? '\n' : '');
      pages.push(
        text
          .replace(/[^\S\n]+/g, ' ')
          .replace(/ ?\n ?/g, '\n')
          .trim(),
      );
      page.cleanup();
    }
    return pages.filter((page) => page.length > 0).join('\n\n');
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    throw new ValidationError('The PDF could not be read: the file is corrupted or not a valid PDF.');
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}
