import type { ScrapedPage } from '../augment/scrape/web-scraper.ts';
import type { ModelCapabilities } from '../operator-config/schema.ts';
import { ValidationError, type ValidationIssue } from '../errors.ts';
import type { JsonObject } from '../providers/chat/chat-engine.ts';
import type { ChatMessageInput, ChatUserPart } from './chat.inputs.ts';
import type { WebCitation } from './chat.types.ts';

/*
 * The prompt as the upstream gets it: image content rules, the system preamble (operator prompt, character
 * prompt, web search context) and the OpenAI message shape.
 */

type Part = ChatUserPart;

const isImage = (part: { type: string }) => part.type === 'image_url';
const partCount =
  (type: Part['type']) =>
  (message: ChatMessageInput): number =>
    message.role === 'user' && Array.isArray(message.content)
      ? (message.content as Part[]).filter((part) => part.type === type).length
      : 0;
const imageCount = partCount('image_url');

/** A 400 naming every message that has the refused content. */
function refuseParts(counts: readonly number[], message: string): ValidationError {
  const issues: ValidationIssue[] = counts.flatMap((n, index) =>
    n > 0 ? [{ path: ['messages', index, 'content'], message }] : [],
  );
  return new ValidationError(`Invalid request: messages.${String(issues[0]?.path[1])}.content: ${message}`, issues);
}

/**
 * Audio and video parts: only models whose record says supportsAudioInput / supportsVideoInput take them (400
 * naming each message otherwise), and at most `maxVideos` videos in the whole conversation when the model sets it.
 */
export function checkAudioVideoParts(
  messages: readonly ChatMessageInput[],
  capabilities: ModelCapabilities | undefined,
  modelId: string,
): void {
  const audio = messages.map(partCount('input_audio'));
  if (!capabilities?.supportsAudioInput && audio.some((n) => n > 0))
    throw refuseParts(audio, `Model ${modelId} does not accept audio`);
  const videos = messages.map(partCount('video_url'));
  const total = videos.reduce((sum, n) => sum + n, 0);
  if (total === 0) return;
  if (!capabilities?.supportsVideoInput) throw refuseParts(videos, `Model ${modelId} does not accept video`);
  const max = capabilities.maxVideos;
  if (max !== undefined && total > max)
    throw refuseParts(videos, `Model ${modelId} takes at most ${max} video${max === 1 ? '' : 's'} per request`);
}

/**
 * Images (docs/configuration.md, Chat settings): models with supportsMultipleImages keep images across the
 * history (the newest `maxImages`, when the model sets a maximum); single-image vision models keep only the
 * last message that has images; models without vision reject image content (400 naming each message).
 */
export function applyImageRules(
  messages: readonly ChatMessageInput[],
  capabilities: ModelCapabilities | undefined,
  modelId: string,
): ChatMessageInput[] {
  const counts = messages.map(imageCount);
  const total = counts.reduce((sum, n) => sum + n, 0);
  if (total === 0) return [...messages];
  if (!capabilities?.supportsVision) throw refuseParts(counts, `Model ${modelId} does not accept images`);
  let keep: (index: number, imageFromEnd: number) => boolean;
  if (capabilities.supportsMultipleImages) {
    const max = capabilities.maxImages;
    if (max === undefined || total <= max) return [...messages];
    keep = (_index, imageFromEnd) => imageFromEnd < max;
  } else {
    const last = counts.findLastIndex((n) => n > 0);
    keep = (index) => index === last;
  }
  // Walk from the newest message so `imageFromEnd` counts images newest first.
  let seen = 0;
  const out = [...messages];
  for (let index = out.length - 1; index >= 0; index -= 1) {
    const message = out[index];
    if (!message || message.role !== 'user' || !Array.isArray(message.content)) continue;
    const parts: Part[] = [];
    for (let p = message.content.length - 1; p >= 0; p -= 1) {
      const part = message.content[p] as Part;
      if (!isImage(part)) parts.unshift(part);
      else if (keep(index, seen++)) parts.unshift(part);
    }
    if (parts.length !== message.content.length) out[index] = { ...message, content: parts.length > 0 ? parts : '' };
  }
  return out;
}

/** Prepends the preamble to the first system message, or as a new system message (one system message keeps
 * strict chat templates happy). */
export function withSystemPreamble(
  messages: readonly ChatMessageInput[],
  preamble: readonly string[],
): ChatMessageInput[] {
  if (preamble.length === 0) return [...messages];
  const text = preamble.join('\n\n');
  const [first, ...rest] = messages;
  if (first && (first.role === 'system' || first.role === 'developer')) {
    const content =
      typeof first.content === 'string'
        ? `${text}\n\n${first.content}`
        : [{ type: 'text' as const, text }, ...first.content];
    return [{ ...first, content }, ...rest];
  }
  return [{ role: 'system', content: text }, ...messages];
}

/** The text of the last user message, for a web search query. */
export function lastUserText(messages: readonly ChatMessageInput[]): string {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    return message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(' ');
  }
  return '';
}

/** Scraped pages as citations, numbered after the `offset` search results; `content` is the page's opening. */
export function pageCitations(pages: readonly ScrapedPage[], offset: number): WebCitation[] {
  return pages.map((page, at) => ({
    index: offset + at + 1,
    title: page.title || page.url,
    url: page.url,
    content: excerpt(page.text, CITATION_EXCERPT_CHARS),
    date: page.lastModified ?? '',
  }));
}

const CITATION_EXCERPT_CHARS = 500;

function excerpt(text: string, chars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= chars ? flat : `${flat.slice(0, chars - 1).trimEnd()}…`;
}

/**
 * Search results and scraped pages as context for the model, numbered as in the citations (results first), with
 * `[n]` citation instructions when citations are on.
 */
export function sourcesContext(sources: {
  query: string | undefined;
  results: readonly WebCitation[];
  pages: readonly ScrapedPage[];
  cite: boolean;
}): string {
  const lines: string[] = [];
  if (sources.results.length > 0) {
    lines.push(`Web search results for "${sources.query ?? ''}":`);
    for (const hit of sources.results) {
      lines.push(
        `[${hit.index}] ${hit.title} (${hit.url})${hit.date ? `, ${hit.date.slice(0, 10)}` : ''}`,
        hit.content,
      );
    }
  }
  if (sources.pages.length > 0) {
    if (lines.length > 0) lines.push('');
    lines.push('Content of the web pages linked in the conversation, fetched just now:');
    sources.pages.forEach((page, at) => {
      const index = sources.results.length + at + 1;
      lines.push(
        `[${index}] ${page.title || page.url} (${page.url})${page.truncated ? ' (shortened)' : ''}`,
        page.text,
        `[end of ${index}]`,
      );
    });
  }
  const use =
    sources.pages.length > 0 && sources.results.length === 0
      ? 'Use these pages where they help.'
      : 'Use these results where they help.';
  lines.push(
    sources.cite
      ? `${use} Cite each source you use with its number in square brackets, e.g. [1], right after the statement it supports.`
      : use,
  );
  return lines.join('\n');
}

/** The OpenAI message shape for the upstream; an assistant's earlier reasoning is not sent back. */
export function toUpstreamMessages(messages: readonly ChatMessageInput[]): JsonObject[] {
  return messages.map((message) => {
    if (message.role === 'assistant') {
      const { reasoning_content: _reasoning, ...rest } = message;
      return { ...rest, content: rest.content ?? null } as JsonObject;
    }
    return { ...message } as JsonObject;
  });
}
