import ExcelJS from 'exceljs';
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx';
import PDFDocument from 'pdfkit';
import pptxgenjs from 'pptxgenjs';
import { strFromU8, strToU8, unzipSync, Zip, ZipPassThrough, zipSync, type ZipInputFile } from 'fflate';
import { crc32, deflateRawSync } from 'node:zlib';

type Pptx = typeof pptxgenjs.default;
// pptxgenjs ships CommonJS typings for an ES module: at run time the default import is already the class.
export const PptxGenJS = ((pptxgenjs as unknown as { default?: Pptx }).default ?? pptxgenjs) as Pptx;

/**
 * Realistic test documents, written by widely used generators (PDFKit, docx, PptxGenJS, ExcelJS) into standard
 * PDF and OOXML, each holding known words so a test can check that every word comes back, in order.
 */

/** `count` distinct words with a prefix, e.g. words('pdf', 3) → ['pdfword1', 'pdfword2', 'pdfword3']. */
export function words(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}word${i + 1}`);
}

/** Whether every word occurs in `text`, each after the previous one. Returns the first missing or misplaced word. */
export function firstOutOfOrder(text: string, expected: readonly string[]): string | undefined {
  let from = 0;
  for (const word of expected) {
    const at = text.indexOf(word, from);
    if (at < 0) return word;
    from = at + word.length;
  }
  return undefined;
}

/** A PDF with one page per entry of `pages`, each line a paragraph (PDFKit, as many report generators use). */
export async function makePdf(
  pages: readonly (readonly string[])[],
  options: { userPassword?: string } = {},
): Promise<Uint8Array> {
  const security = options.userPassword
    ? { userPassword: options.userPassword, ownerPassword: `${options.userPassword}-owner`, pdfVersion: '1.7' as const }
    : {};
  const doc = new PDFDocument({ size: 'A4', margin: 50, info: { Title: 'Lagoon test' }, ...security });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve) => doc.on('end', () => resolve()));
  pages.forEach((lines, index) => {
    if (index > 0) doc.addPage();
    for (const line of lines) doc.fontSize(12).text(line, { width: 480 }).moveDown();
  });
  doc.end();
  await done;
  return new Uint8Array(Buffer.concat(chunks));
}

/** A Word document with a heading, paragraphs and a 2×2 table (the docx library writes real OOXML). */
export async function makeDocx(content: {
  heading: string;
  paragraphs: readonly string[];
  table: readonly (readonly string[])[];
  after: string;
}): Promise<Uint8Array> {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: content.heading, heading: HeadingLevel.HEADING_1 }),
          ...content.paragraphs.map((text) => new Paragraph({ children: [new TextRun(text)] })),
          new Table({
            rows: content.table.map(
              (row) =>
                new TableRow({ children: row.map((cell) => new TableCell({ children: [new Paragraph(cell)] })) }),
            ),
          }),
          new Paragraph({ children: [new TextRun({ text: content.after, bold: true })] }),
        ],
      },
    ],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

/** A deck: each slide has a title, a body text box and optional speaker notes (PptxGenJS). */
export async function makePptx(
  slides: readonly { title: string; body: string; notes?: string }[],
): Promise<Uint8Array> {
  const pptx = new PptxGenJS();
  for (const content of slides) {
    const slide = pptx.addSlide();
    slide.addText(content.title, { x: 0.5, y: 0.3, w: 9, h: 1, fontSize: 28 });
    slide.addText(content.body, { x: 0.5, y: 1.5, w: 9, h: 3, fontSize: 16 });
    if (content.notes) slide.addNotes(content.notes);
  }
  const out = (await pptx.write({ outputType: 'uint8array' })) as Uint8Array;
  return new Uint8Array(out);
}

/**
 * The same deck with its slides shown in another order (`order[i]` = which original slide comes i-th), done
 * the way PowerPoint does it: only the presentation's slide list changes, the slide parts keep their names.
 */
export function reorderSlides(pptx: Uint8Array, order: readonly number[]): Uint8Array {
  const files = unzipSync(pptx);
  const xml = strFromU8(files['ppt/presentation.xml']!);
  const ids = [...xml.matchAll(/<p:sldId [^>]*\/>/g)].map((m) => m[0]);
  const reordered = xml.replace(
    /<p:sldIdLst>[\s\S]*?<\/p:sldIdLst>/,
    `<p:sldIdLst>${order.map((i) => ids[i]).join('')}</p:sldIdLst>`,
  );
  files['ppt/presentation.xml'] = strToU8(reordered);
  return zipSync(files);
}

/** A workbook with named sheets of rows (ExcelJS, which writes what Excel reads). */
export async function makeXlsx(
  sheets: readonly { name: string; rows: readonly (readonly (string | number)[])[] }[],
): Promise<Uint8Array> {
  const workbook = new ExcelJS.Workbook();
  for (const sheet of sheets) {
    const worksheet = workbook.addWorksheet(sheet.name);
    for (const row of sheet.rows) worksheet.addRow([...row]);
  }
  return new Uint8Array(await workbook.xlsx.writeBuffer());
}

/**
 * A ZIP shaped like a .docx whose document part inflates to `inflatedBytes` of spaces: an archive bomb. The part is
 * deflated by node:zlib (fflate's own deflate spent 4.5 s of CPU on 210 MB) and handed to fflate's Zip as it is.
 */
export function makeZipBomb(inflatedBytes: number): Uint8Array {
  const chunks: Uint8Array[] = [];
  const zip = new Zip((error, chunk) => {
    if (error) throw error;
    chunks.push(chunk);
  });
  const types = new ZipPassThrough('[Content_Types].xml');
  zip.add(types);
  types.push(
    strToU8(
      '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    ),
    true,
  );
  const spaces = Buffer.alloc(inflatedBytes, 0x20);
  const document: ZipInputFile = {
    filename: 'word/document.xml',
    size: inflatedBytes,
    crc: crc32(spaces),
    compression: 8,
  };
  zip.add(document);
  document.ondata?.(null, deflateRawSync(spaces, { level: 9 }), true);
  zip.end();
  return new Uint8Array(Buffer.concat(chunks));
}

/** Deterministic pseudo-random bytes (not a document of any kind). */
export function randomBytesOf(length: number, seed = 42): Uint8Array {
  const out = new Uint8Array(length);
  let state = seed >>> 0;
  for (let i = 0; i < length; i += 1) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = state >>> 24;
  }
  return out;
}
