import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import {
  Document,
  FootnoteReferenceRun,
  HeadingLevel,
  Packer,
  Paragraph,
  Table,
  TableCell,
  TableRow,
  TextRun,
} from 'docx';
import { describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/augment/extract/extract.ts';
import { DEFAULT_ZIP_LIMITS } from '../../src/augment/extract/zip.ts';
import { makePptx, PptxGenJS } from '../helpers/documents.ts';

const limits = { zip: DEFAULT_ZIP_LIMITS, maxTextChars: 1_000_000 };
const extract = async (bytes: Uint8Array) => (await extractDocument(bytes, limits)).text;

/** Characters an HTML or XML layer must escape, and some that take more than one byte or code unit. */
const SPECIAL = `Fish & chips <tag> "quoted" 'apos' café ½ 😀`;

const cell = (...paragraphs: (string | Paragraph | Table)[]) =>
  new TableCell({ children: paragraphs.map((p) => (typeof p === 'string' ? new Paragraph(p) : p)) });

async function docx(children: (Paragraph | Table)[], footnotes?: Record<number, string>): Promise<Uint8Array> {
  const doc = new Document({
    ...(footnotes && {
      footnotes: Object.fromEntries(
        Object.entries(footnotes).map(([id, text]) => [id, { children: [new Paragraph(text)] }]),
      ),
    }),
    sections: [{ children }],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

describe('DOCX text', () => {
  it('should give a table one line per row, cells tab-separated, a cell’s paragraphs and nested table joined', async () => {
    const nested = new Table({ rows: [new TableRow({ children: [cell('in1'), cell('in2')] })] });
    const text = await extract(
      await docx([
        new Paragraph({ text: 'Figures', heading: HeadingLevel.HEADING_2 }),
        new Table({
          rows: [
            new TableRow({ tableHeader: true, children: [cell('Region'), cell('Sales'), cell('')] }),
            new TableRow({ children: [cell('North', 'and east'), cell('1200'), cell('')] }),
            new TableRow({
              children: [
                cell('nested:', nested),
                cell(new Paragraph({ children: [new TextRun('line'), new TextRun({ text: 'broken', break: 1 })] })),
                cell('z'),
              ],
            }),
          ],
        }),
        new Paragraph('after'),
      ]),
    );
    expect(text).toBe('Figures\nRegion\tSales\nNorth and east\t1200\nnested: in1 in2\tline broken\tz\nafter');
  });

  it('should keep special characters as they are, headings unchanged in case', async () => {
    const text = await extract(
      await docx([
        new Paragraph({ text: 'Title & <more>', heading: HeadingLevel.HEADING_1 }),
        new Paragraph({ children: [new TextRun(SPECIAL)] }),
        new Table({ rows: [new TableRow({ children: [cell('x & y'), cell('<1>')] })] }),
      ]),
    );
    expect(text).toBe(`Title & <more>\n${SPECIAL}\nx & y\t<1>`);
  });

  it('should mark list items and indent nested ones', async () => {
    const text = await extract(
      await docx([
        new Paragraph({ text: 'one', bullet: { level: 0 } }),
        new Paragraph({ text: 'one.a', bullet: { level: 1 } }),
        new Paragraph({ text: 'two', bullet: { level: 0 } }),
      ]),
    );
    expect(text).toBe('- one\n  - one.a\n- two');
  });

  it('should put footnotes after the text, without their back-links', async () => {
    const text = await extract(
      await docx([new Paragraph({ children: [new TextRun('Claim'), new FootnoteReferenceRun(1)] })], {
        1: 'Source & proof',
      }),
    );
    expect(text.split('\n')[0]).toBe('Claim[1]');
    expect(text).toContain('Source & proof');
    expect(text).not.toContain('↑');
    expect(text).not.toContain('#footnote');
  });
});

/** Rewrites one part of a package (fflate keeps the other entries as they were). */
function withPart(pptx: Uint8Array, path: string, edit: (xml: string) => string): Uint8Array {
  const files = unzipSync(pptx);
  files[path] = strToU8(edit(strFromU8(files[path]!)));
  return zipSync(files);
}

describe('PPTX text', () => {
  it('should give a table one line per row, cells tab-separated, after the slide’s text and before its notes', async () => {
    const pptx = new PptxGenJS();
    const slide = pptx.addSlide();
    slide.addText('Quarter', { x: 0.5, y: 0.3, w: 9, h: 1 });
    slide.addTable(
      [
        [{ text: 'Region' }, { text: 'Sales' }, { text: '' }],
        [{ text: 'North' }, { text: '1200' }, { text: '' }],
        [{ text: '' }, { text: '' }, { text: '' }],
      ],
      { x: 0.5, y: 2, w: 9 },
    );
    slide.addNotes('Say the totals');
    const bytes = new Uint8Array((await pptx.write({ outputType: 'uint8array' })) as Uint8Array);
    expect(await extract(bytes)).toBe('Quarter\nRegion\tSales\nNorth\t1200\nSay the totals');
  });

  it('should keep special characters of slides and notes as they are', async () => {
    const deck = await makePptx([{ title: 'Title & <slide>', body: SPECIAL, notes: 'Notes with & and <angle> "q"' }]);
    expect(await extract(deck)).toBe(`Title & <slide>\n${SPECIAL}\nNotes with & and <angle> "q"`);
  });

  it('should decode entities and character references once, and keep line breaks inside a paragraph', async () => {
    const deck = withPart(await makePptx([{ title: 'MARK', body: 'body' }]), 'ppt/slides/slide1.xml', (xml) =>
      xml.replace(
        '<a:t>MARK</a:t>',
        '<a:t>caf&#233; &#x1F600; &amp;lt;kept&amp;gt; &quot;q&quot; &apos;a&apos;</a:t><a:br/><a:t>next</a:t>',
      ),
    );
    expect(await extract(deck)).toBe(`café 😀 &lt;kept&gt; "q" 'a'\nnext\nbody`);
  });

  it('should read the preferred choice of alternate content, not its fallback copy', async () => {
    const deck = withPart(await makePptx([{ title: 'MARK', body: 'body' }]), 'ppt/slides/slide1.xml', (xml) =>
      xml
        .replace('<p:sld ', '<p:sld xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" ')
        .replace(
          '<a:t>MARK</a:t>',
          '<mc:AlternateContent><mc:Choice Requires="a14"><a:r><a:t>chosen</a:t></a:r></mc:Choice>' +
            '<mc:Fallback><a:r><a:t>fallback</a:t></a:r></mc:Fallback></mc:AlternateContent>',
        ),
    );
    expect(await extract(deck)).toBe('chosen\nbody');
  });

  it('should refuse a slide that is not well-formed XML with a 400', async () => {
    const deck = withPart(await makePptx([{ title: 'MARK', body: 'body' }]), 'ppt/slides/slide1.xml', (xml) =>
      xml.replace('<a:t>MARK</a:t>', '<a:t>MARK</a:x>'),
    );
    await expect(extract(deck)).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
  });
});
