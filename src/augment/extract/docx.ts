import { convert, type DomNode, type FormatCallback, type HtmlToTextOptions } from 'html-to-text';
import mammoth from 'mammoth';
import { ValidationError } from '../../errors.ts';

/** Images are not text: give mammoth an empty source instead of base64-encoding every picture. */
const noImages = mammoth.images.imgElement(() => Promise.resolve({ src: '' }));

/**
 * Headings, paragraphs, lists, tables (one row per line, cells tab-separated), footnotes and endnotes in document
 * order: mammoth reads the document's structure (not its layout) into HTML, html-to-text turns that into text.
 * Never follows external links.
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
  return convert(html, TEXT_OPTIONS).trim();
}

/** Whether a parsed HTML node is one of the elements `names`. */
const isTag = (node: DomNode, ...names: string[]) => node.type === 'tag' && names.includes(node.name ?? '');

/**
 * A table as one line per row, its cells tab-separated, each cell's paragraphs and line breaks joined by spaces
 * (a nested table flattens into its cell). Empty rows are left out, and so are empty cells that end a row.
 */
const tabSeparatedTable: FormatCallback = (table, walk, builder) => {
  const rows = (nodes: DomNode[]): void => {
    for (const node of nodes) {
      if (isTag(node, 'thead', 'tbody', 'tfoot')) rows(node.children);
      if (!isTag(node, 'tr')) continue;
      builder.openTableRow();
      for (const cell of node.children.filter((child) => isTag(child, 'td', 'th'))) {
        builder.openTableCell();
        walk(cell.children, builder);
        builder.closeTableCell();
      }
      builder.closeTableRow();
    }
  };
  builder.openTable();
  rows(table.children);
  builder.closeTable({
    leadingLineBreaks: 1,
    trailingLineBreaks: 1,
    tableToString: (cells) =>
      cells
        .map((row) =>
          row
            .map((cell) => cell.text.replace(/\s+/g, ' ').trim())
            .join('\t')
            .replace(/\t+$/, ''),
        )
        .filter((row) => row.length > 0)
        .join('\n'),
  });
};

const oneLine = { leadingLineBreaks: 1, trailingLineBreaks: 1 };

/** Mammoth's HTML as plain text: one line per paragraph, heading and list item; no link targets or images. */
const TEXT_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  // The archive limits already bound a document; html-to-text would otherwise cut a long one short.
  limits: { maxInputLength: Number.POSITIVE_INFINITY },
  formatters: { tabSeparatedTable },
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    // Footnote and endnote back-references ("↑") are navigation, not text.
    { selector: 'a[href^="#footnote-ref-"]', format: 'skip' },
    { selector: 'a[href^="#endnote-ref-"]', format: 'skip' },
    { selector: 'img', format: 'skip' },
    { selector: 'table', format: 'tabSeparatedTable' },
    { selector: 'p', options: oneLine },
    { selector: 'blockquote', options: { ...oneLine, trimEmptyLines: true } },
    { selector: 'pre', options: oneLine },
    { selector: 'ul', options: { ...oneLine, itemPrefix: '- ' } },
    { selector: 'ol', options: oneLine },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({
      selector,
      options: { ...oneLine, uppercase: false },
    })),
  ],
};
