import { ValidationError } from '../../errors.ts';
import { readZipText, type ZipEntry } from './zip.ts';

const DRAWINGML = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const PRESENTATIONML = 'http://schemas.openxmlformats.org/presentationml/2006/main';
const REL_TYPE = /\/(officeDocument|slide|notesSlide|diagramData)$/;

interface Relationship {
  readonly id: string;
  readonly type: string;
  readonly target: string;
}

/**
 * Every slide's text (SmartArt included) and then its speaker notes, slide by slide in presentation order. Order and notes come from
 * the package's relationships (presentation → slides → notes), never from part file names, which tools do not
 * keep in step with the slide order. Slide-number, date and thumbnail placeholders of notes pages are skipped.
 */
export function extractPptx(bytes: Uint8Array, entries: readonly ZipEntry[]): string {
  const read = (path: string) => readZipText(bytes, entries, path);
  const root = relationships(read('_rels/.rels'), '');
  const presentationPath = root.find((rel) => rel.type === 'officeDocument')?.target ?? 'ppt/presentation.xml';
  const presentation = read(presentationPath);
  if (presentation === undefined) throw new ValidationError('The PPTX could not be read: it has no presentation part.');
  const presentationRels = relationships(read(relsPathOf(presentationPath)), dirOf(presentationPath));
  const slideIds = sldIdList(presentation);
  const slides = slideIds
    .map((id) => presentationRels.find((rel) => rel.id === id && rel.type === 'slide')?.target)
    .filter((path): path is string => path !== undefined);

  const blocks: string[] = [];
  for (const slidePath of slides) {
    const slide = read(slidePath);
    if (slide === undefined) continue;
    const lines = drawingText(slide);
    const slideRels = relationships(read(relsPathOf(slidePath)), dirOf(slidePath));
    // SmartArt keeps its text in a diagram data part of its own.
    for (const rel of slideRels.filter((r) => r.type === 'diagramData'))
      lines.push(...drawingText(read(rel.target) ?? ''));
    const notesPath = slideRels.find((rel) => rel.type === 'notesSlide')?.target;
    const notes = notesPath ? read(notesPath) : undefined;
    if (notes !== undefined) lines.push(...notesText(notes));
    if (lines.length > 0) blocks.push(lines.join('\n'));
  }
  return blocks.join('\n\n');
}

/** r:ids of `<p:sldIdLst>` in order. */
function sldIdList(xml: string): string[] {
  const list = /<(?:\w+:)?sldIdLst\b[^>]*>([\s\S]*?)<\/(?:\w+:)?sldIdLst>/.exec(xml)?.[1] ?? '';
  return [...list.matchAll(/<(?:\w+:)?sldId\b([^>]*)>/g)]
    .map((m) => attributes(m[1] ?? ''))
    .map((attrs) => Object.entries(attrs).find(([name]) => name.endsWith(':id'))?.[1] ?? '');
}

function relationships(xml: string | undefined, baseDir: string): Relationship[] {
  if (!xml) return [];
  return [...xml.matchAll(/<(?:\w+:)?Relationship\b([^>]*)>/g)].flatMap((m) => {
    const attrs = attributes(m[1] ?? '');
    const kind = REL_TYPE.exec(attrs.Type ?? '')?.[1];
    if (!kind || !attrs.Id || !attrs.Target || attrs.TargetMode === 'External') return [];
    return [{ id: attrs.Id, type: kind, target: resolvePart(baseDir, attrs.Target) }];
  });
}

function attributes(source: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of source.matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g))
    out[m[1] ?? ''] = decodeXml(m[2] ?? m[3] ?? '');
  return out;
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

function prefixOf(xml: string, namespace: string, fallback: string): string {
  const escaped = namespace.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(`xmlns:([\\w.-]+)="${escaped}"`).exec(xml)?.[1] ?? fallback;
}

/** Speaker notes: the body placeholder(s) of the notes page, not its slide image, number, date or footer. */
function notesText(xml: string): string[] {
  const p = prefixOf(xml, PRESENTATIONML, 'p');
  const shapes = xml.match(new RegExp(`<${p}:sp\\b[\\s\\S]*?</${p}:sp>`, 'g')) ?? [];
  return shapes
    .filter((shape) => {
      const type = new RegExp(`<${p}:ph\\b[^>]*\\btype="([^"]*)"`).exec(shape)?.[1];
      return type === undefined || type === 'body' || type === 'obj';
    })
    .flatMap((shape) => drawingText(shape, prefixOf(xml, DRAWINGML, 'a')));
}

/** DrawingML paragraphs in document order; a table row becomes one line of tab-separated cells. */
function drawingText(xml: string, prefix = prefixOf(xml, DRAWINGML, 'a')): string[] {
  // Alternate content repeats the same shapes for older readers; read only the preferred choice.
  const source = xml.replace(/<mc:Fallback\b[\s\S]*?<\/mc:Fallback>/g, '');
  const lines: string[] = [];
  let paragraph = '';
  let cell: string | undefined;
  let cells: string[] | undefined;
  const tags = new RegExp(`<(/?)${prefix}:(p|t|br|tc|tr)\\b[^>]*?(/?)>`, 'g');
  for (let m = tags.exec(source); m; m = tags.exec(source)) {
    const [, closing, tag, selfClosing] = m;
    if (tag === 't' && !closing && !selfClosing) {
      const end = source.indexOf(`</${prefix}:t>`, tags.lastIndex);
      if (end < 0) break;
      paragraph += decodeXml(source.slice(tags.lastIndex, end));
      tags.lastIndex = end;
    } else if (tag === 'br') paragraph += cell === undefined ? '\n' : ' ';
    else if (tag === 'p' && (closing || selfClosing)) {
      const text = paragraph.trim();
      paragraph = '';
      if (cell !== undefined) cell = cell ? `${cell} ${text}`.trim() : text;
      else if (text) lines.push(text);
    } else if (tag === 'tc') {
      if (!closing) cell = '';
      else if (cell !== undefined) {
        cells?.push(cell);
        cell = undefined;
      }
    } else if (tag === 'tr') {
      if (!closing) cells = [];
      else {
        const row = (cells ?? []).join('\t').replace(/\t+$/, '');
        if (row) lines.push(row);
        cells = undefined;
      }
    }
  }
  return lines;
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_m, name: string) => {
    if (name[0] !== '#') return XML_ENTITIES[name.toLowerCase()] ?? '';
    const code =
      name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
  });
}
