import { DOMParser, MIME_TYPE, type Document, type Element, type Node } from '@xmldom/xmldom';
import { ValidationError } from '../../errors.ts';
import { readZipText, type ZipEntry } from './zip.ts';

/** DrawingML (text, tables) and PresentationML, in their transitional and strict namespaces. */
const DRAWINGML = [
  'http://schemas.openxmlformats.org/drawingml/2006/main',
  'http://purl.oclc.org/ooxml/drawingml/main',
];
const PRESENTATIONML = [
  'http://schemas.openxmlformats.org/presentationml/2006/main',
  'http://purl.oclc.org/ooxml/presentationml/main',
];
const RELATIONSHIPS = [
  'http://schemas.openxmlformats.org/officeDocument/2006/relationships',
  'http://purl.oclc.org/ooxml/officeDocument/relationships',
];
const MARKUP_COMPATIBILITY = 'http://schemas.openxmlformats.org/markup-compatibility/2006';
const REL_TYPE = /\/(officeDocument|slide|notesSlide|diagramData)$/;

interface Relationship {
  readonly id: string;
  readonly type: string;
  readonly target: string;
}

/**
 * Every slide's text (tables and SmartArt included) and then its speaker notes, slide by slide in presentation
 * order. Order and notes come from the package's relationships (presentation → slides → notes), never from part
 * file names, which tools do not keep in step with the slide order. Slide-number, date and thumbnail placeholders
 * of notes pages are skipped. The parts are read with an XML parser, so entities and character references come
 * out as the characters they stand for.
 */
export function extractPptx(bytes: Uint8Array, entries: readonly ZipEntry[]): string {
  const read = (path: string): Document | undefined => {
    const xml = readZipText(bytes, entries, path);
    return xml === undefined ? undefined : parseXml(xml, path);
  };
  const root = relationships(read('_rels/.rels'), '');
  const presentationPath = root.find((rel) => rel.type === 'officeDocument')?.target ?? 'ppt/presentation.xml';
  const presentation = read(presentationPath);
  if (presentation === undefined) throw new ValidationError('The PPTX could not be read: it has no presentation part.');
  const presentationRels = relationships(read(relsPathOf(presentationPath)), dirOf(presentationPath));
  const slides = slideIds(presentation)
    .map((id) => presentationRels.find((rel) => rel.id === id && rel.type === 'slide')?.target)
    .filter((path): path is string => path !== undefined);

  const blocks: string[] = [];
  for (const slidePath of slides) {
    const slide = read(slidePath);
    if (slide === undefined) continue;
    const lines = drawingText(slide);
    const slideRels = relationships(read(relsPathOf(slidePath)), dirOf(slidePath));
    // SmartArt keeps its text in a diagram data part of its own.
    for (const rel of slideRels.filter((r) => r.type === 'diagramData')) {
      const diagram = read(rel.target);
      if (diagram) lines.push(...drawingText(diagram));
    }
    const notesPath = slideRels.find((rel) => rel.type === 'notesSlide')?.target;
    const notes = notesPath ? read(notesPath) : undefined;
    if (notes !== undefined) lines.push(...notesText(notes));
    if (lines.length > 0) blocks.push(lines.join('\n'));
  }
  return blocks.join('\n\n');
}

function parseXml(xml: string, path: string): Document {
  const refuse = () => new ValidationError(`The PPTX could not be read: ${path} is not well-formed XML.`);
  try {
    return new DOMParser({
      onError: (level) => {
        if (level !== 'warning') throw refuse();
      },
    }).parseFromString(xml, MIME_TYPE.XML_TEXT);
  } catch {
    throw refuse();
  }
}

const isElement = (node: Node): node is Element => node.nodeType === node.ELEMENT_NODE;
const children = (node: Node): Element[] => Array.from(node.childNodes).filter(isElement);
const is = (node: Element, namespaces: readonly string[], name: string) =>
  node.localName === name && namespaces.includes(node.namespaceURI ?? '');
const descendants = (root: Document | Element, namespaces: readonly string[], name: string): Element[] =>
  namespaces.flatMap((namespace) => Array.from(root.getElementsByTagNameNS(namespace, name)));

/** The r:ids of the presentation's slide list, in order. */
function slideIds(presentation: Document): string[] {
  return descendants(presentation, PRESENTATIONML, 'sldId').map(
    (slide) => RELATIONSHIPS.map((namespace) => slide.getAttributeNS(namespace, 'id')).find(Boolean) ?? '',
  );
}

function relationships(rels: Document | undefined, baseDir: string): Relationship[] {
  if (!rels) return [];
  return Array.from(rels.getElementsByTagName('Relationship')).flatMap((rel) => {
    const kind = REL_TYPE.exec(rel.getAttribute('Type') ?? '')?.[1];
    const id = rel.getAttribute('Id');
    const target = rel.getAttribute('Target');
    if (!kind || !id || !target || rel.getAttribute('TargetMode') === 'External') return [];
    return [{ id, type: kind, target: resolvePart(baseDir, target) }];
  });
}

const dirOf = (path: string) => path.slice(0, path.lastIndexOf('/') + 1);
const relsPathOf = (path: string) => `${dirOf(path)}_rels/${path.slice(path.lastIndexOf('/') + 1)}.rels`;

/** A relationship target relative to its source part's folder (or absolute with a leading slash). */
function resolvePart(baseDir: string, target: string): string {
  const segments = (target.startsWith('/') ? target.slice(1) : baseDir + target).split('/');
  const out: string[] = [];
  for (const segment of segments) {
    if (segment === '..') out.pop();
    else if (segment !== '.' && segment !== '') out.push(segment);
  }
  return decodeURIComponent(out.join('/'));
}

/** Speaker notes: the body placeholder(s) of the notes page, not its slide image, number, date or footer. */
function notesText(notes: Document): string[] {
  return descendants(notes, PRESENTATIONML, 'sp')
    .filter((shape) => {
      const type = descendants(shape, PRESENTATIONML, 'ph')[0]?.getAttribute('type');
      return !type || type === 'body' || type === 'obj';
    })
    .flatMap((shape) => drawingText(shape));
}

/** DrawingML paragraphs in document order, one line each; a table row becomes one line of tab-separated cells. */
function drawingText(root: Document | Element): string[] {
  const lines: string[] = [];
  const visit = (node: Node): void => {
    for (const child of children(node)) {
      // Alternate content repeats the same shapes for older readers; read only the preferred choice.
      if (child.localName === 'Fallback' && child.namespaceURI === MARKUP_COMPATIBILITY) continue;
      if (is(child, DRAWINGML, 'tbl')) lines.push(...tableRows(child));
      else if (is(child, DRAWINGML, 'p')) {
        const text = paragraphText(child).trim();
        if (text) lines.push(text);
      } else visit(child);
    }
  };
  visit(root);
  return lines;
}

/** A table's rows, cells tab-separated; a cell's paragraphs and line breaks are joined by spaces. */
function tableRows(table: Element): string[] {
  return descendants(table, DRAWINGML, 'tr')
    .filter((row) => row.parentNode === table)
    .map((row) =>
      children(row)
        .filter((cell) => is(cell, DRAWINGML, 'tc'))
        .map((cell) => drawingText(cell).join(' ').replace(/\s+/g, ' ').trim())
        .join('\t')
        .replace(/\t+$/, ''),
    )
    .filter((row) => row.length > 0);
}

/** The runs, fields and line breaks of one paragraph. */
function paragraphText(paragraph: Element): string {
  let text = '';
  for (const child of children(paragraph)) {
    if (child.localName === 'Fallback' && child.namespaceURI === MARKUP_COMPATIBILITY) continue;
    if (is(child, DRAWINGML, 't')) text += child.textContent ?? '';
    else if (is(child, DRAWINGML, 'br')) text += '\n';
    else text += paragraphText(child);
  }
  return text;
}
