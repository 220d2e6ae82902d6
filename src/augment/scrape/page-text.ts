import { convert, type HtmlToTextOptions } from 'html-to-text';
import { NodeHtmlMarkdown } from 'node-html-markdown';
import { decodeTokens, encodeText } from '../../tokenizer.ts';

/*
 * A fetched page as text for a model's context. Runs in the extraction worker threads (extract/worker.ts): turning
 * megabytes of HTML into text takes long enough to stall the API's event loop.
 */

export interface PageRequest {
  /** The body is HTML (from its media type); otherwise it is read as a document or plain text. */
  readonly html: boolean;
  /** From Content-Type; HTML may also name it in a meta tag. */
  readonly charset?: string | undefined;
  /** The text is cut to this many tokens. */
  readonly maxTokens: number;
  /** HTML as Markdown (headings, links and lists kept) rather than plain text. */
  readonly markdown?: boolean | undefined;
}

/** The parts of a page that are not its content, left out of both its text and its Markdown. */
const NOT_CONTENT = [
  'head',
  'nav',
  'footer',
  'aside',
  'button',
  'select',
  'svg',
  'iframe',
  'noscript',
  'script',
  'style',
  'template',
];

/** The page's readable text: navigation, footers, scripts, controls and images left out, link targets dropped. (Not `header` nor `form`: articles keep their title in one, and some sites wrap the whole page in the other.) */
const HTML_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  baseElements: { selectors: ['body'] },
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'table', format: 'dataTable' },
    { selector: 'h1', options: { uppercase: false } },
    { selector: 'h2', options: { uppercase: false } },
    { selector: 'h3', options: { uppercase: false } },
    { selector: 'h4', options: { uppercase: false } },
    { selector: 'h5', options: { uppercase: false } },
    { selector: 'h6', options: { uppercase: false } },
    ...[...NOT_CONTENT, 'title'].map((selector) => ({ selector, format: 'skip' })),
  ],
};

/** Title and text of an HTML page. */
export function htmlPageText(bytes: Uint8Array, charset: string | undefined): { title: string; text: string } {
  const html = decodeHtml(bytes, charset);
  return {
    title: pageTitle(html),
    text: convert(html, HTML_OPTIONS)
      .replace(/[^\S\n]+$/gm, '')
      .replace(/\n{3,}/g, '\n\n')
      .trim(),
  };
}

const markdown = new NodeHtmlMarkdown({
  ignore: [...NOT_CONTENT, 'form'],
  keepDataImages: false,
  maxConsecutiveNewlines: 2,
});

/** Title and content of an HTML page as Markdown (GET /augment/scrape). */
export function htmlPageMarkdown(bytes: Uint8Array, charset: string | undefined): { title: string; text: string } {
  const html = decodeHtml(bytes, charset);
  return { title: pageTitle(html), text: markdown.translate(html).trim() };
}

/** The page's <title> as one line of plain text ('' when it has none). */
function pageTitle(html: string): string {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  return title === undefined ? '' : convert(title, { wordwrap: false }).replace(/\s+/g, ' ').trim();
}

/** The header's charset, else a meta tag's in the first 1024 bytes, else UTF-8; unknown labels read as UTF-8. */
function decodeHtml(bytes: Uint8Array, charset: string | undefined): string {
  const declared =
    charset ??
    /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(new TextDecoder('latin1').decode(bytes.subarray(0, 1024)))?.[1];
  try {
    return new TextDecoder(declared ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** The text cut to at most `maxTokens` tokens, and its token count. */
export function limitTokens(text: string, maxTokens: number): { text: string; tokens: number; truncated: boolean } {
  // A token is at least one character, and rarely more than a dozen: cut far text off before encoding it all.
  const candidate = text.length > maxTokens * 12 ? text.slice(0, maxTokens * 12) : text;
  const tokens = encodeText(candidate);
  if (tokens.length <= maxTokens && candidate.length === text.length)
    return { text, tokens: tokens.length, truncated: false };
  const kept = tokens.slice(0, maxTokens);
  return { text: decodeTokens(kept), tokens: kept.length, truncated: true };
}
