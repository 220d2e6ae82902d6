import { httpUrl } from '../../http-url.ts';

/** http(s) URLs as people paste them in prose; what ends a URL there (space, quotes, angle brackets) stops it. */
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`{}|\\^]+/gi;
/** Sentence punctuation after a URL belongs to the sentence. */
const TRAILING_PUNCTUATION = /[.,;:!?*_~]+$/;

/** The distinct http(s) URLs in a text, in order of appearance, at most `max`. */
export function linkedUrls(text: string, max: number): string[] {
  const found: string[] = [];
  for (const [match] of text.matchAll(URL_IN_TEXT)) {
    const url = httpUrl(trimUrl(match));
    if (url === undefined) continue;
    const normalised = new URL(url);
    normalised.hash = '';
    if (!found.includes(normalised.href)) found.push(normalised.href);
    if (found.length === max) break;
  }
  return found;
}

/** Drops trailing punctuation, and closing brackets that close nothing opened inside the URL ("(see https://x.org/a)"). */
function trimUrl(candidate: string): string {
  let url = candidate.replace(TRAILING_PUNCTUATION, '');
  for (const [open, close] of [
    ['(', ')'],
    ['[', ']'],
  ] as const) {
    while (url.endsWith(close) && count(url, close) > count(url, open))
      url = url.slice(0, -1).replace(TRAILING_PUNCTUATION, '');
  }
  return url;
}

const count = (text: string, char: string) => text.split(char).length - 1;
