import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/augment/extract/extract.ts';
import { DEFAULT_ZIP_LIMITS } from '../../src/augment/extract/zip.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/libreoffice/${name}`, import.meta.url));
const limits = { zip: DEFAULT_ZIP_LIMITS, maxTextChars: 1_000_000 };

// Files written by an office suite, not by the libraries the other tests build documents with; passed as Node
// Buffers (what fs and HTTP hand over), which PDF.js refuses unless converted.
describe('Extraction of documents made by LibreOffice', () => {
  it('should read a DOCX: headings, paragraphs and the table in order', async () => {
    const { kind, text } = await extractDocument(fixture('doc.docx'), limits);
    expect(kind).toBe('docx');
    expect(text).toBe(
      'Quarterly Report\nRevenue grew by twelve percent in the third quarter.\nRegional figures\nRegion\tSales\nNorth\t1200\nSouth\t950\nClosing remarks about the lagoon project.',
    );
  });

  it('should read the same document exported as PDF', async () => {
    const { kind, text } = await extractDocument(fixture('doc.pdf'), limits);
    expect(kind).toBe('pdf');
    expect(text).toBe(
      'Quarterly Report\nRevenue grew by twelve percent in the third quarter.\nRegional figures\nRegion Sales\nNorth 1200\nSouth 950\nClosing remarks about the lagoon project.',
    );
  });

  it('should read an XLSX sheet under its name, cells tab-separated', async () => {
    const { kind, text } = await extractDocument(fixture('sheet.xlsx'), limits);
    expect(kind).toBe('xlsx');
    expect(text).toBe('# sheet\nName\tQuantity\tPrice\nApples\t10\t0.5\nPears\t4\t0.75');
  });

  it('should read a PPTX slide by slide with the speaker notes after their slide', async () => {
    const { kind, text } = await extractDocument(fixture('slides.pptx'), limits);
    expect(kind).toBe('pptx');
    expect(text).toBe('Welcome to the lagoon\nSpeaker note for slide one\n\nSecond slide body text');
  });
});
