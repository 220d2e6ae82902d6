import { clip, ValidationError } from '../errors.ts';
import type { ChatFilePart, ChatMessageInput, ChatTextPart } from './chat.inputs.ts';

/*
 * File parts of user messages (`{"type": "file", "file": {"filename", "file_data"}}`, OpenAI's shape): upstreams
 * here take no files, so each file's text is extracted by the text parser (PDF, DOCX, PPTX, XLSX, plain text; its
 * size limit) and sent on in its place as a text part headed by the file name. The text then counts as prompt
 * tokens like any other; each file is also priced as one text parser request (src/chat/chat-pricing.ts).
 */

/** At most this many file parts per request (each one is a document to parse). */
export const MAX_CHAT_FILES = 10;

/** The text parser as chat uses it: extraction without its own charge. */
export interface FileTextExtractor {
  extract(accountId: string, bytes: Uint8Array): Promise<{ readonly text: string }>;
}

/** Where no text parser is wired (services built alone in tests): file parts are refused. */
export const NO_FILES: FileTextExtractor = {
  extract: () => Promise.reject(new ValidationError('File parts are not supported by this server')),
};

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

interface Found {
  readonly message: number;
  readonly part: number;
  readonly file: ChatFilePart['file'];
}

/** The messages with every file part replaced by its text, and how many files were read. */
export async function inlineFiles(
  messages: readonly ChatMessageInput[],
  extractor: FileTextExtractor,
  accountId: string,
): Promise<{ messages: ChatMessageInput[]; files: number }> {
  const found: Found[] = [];
  messages.forEach((message, index) => {
    if (message.role !== 'user' || typeof message.content === 'string') return;
    message.content.forEach((part, at) => {
      if (part.type === 'file') found.push({ message: index, part: at, file: part.file });
    });
  });
  const out = [...messages];
  if (found.length === 0) return { messages: out, files: 0 };
  if (found.length > MAX_CHAT_FILES) {
    const extra = found[MAX_CHAT_FILES]!;
    throw partError(extra, [], `At most ${MAX_CHAT_FILES} files per request`);
  }
  // One at a time: a request holds at most one document in a worker at once.
  const texts: string[] = [];
  for (const item of found) texts.push(await fileText(item, extractor, accountId));
  found.forEach((item, at) => {
    const message = out[item.message] as Extract<ChatMessageInput, { role: 'user' }>;
    const content = [...(message.content as Exclude<typeof message.content, string>)];
    content[item.part] = { type: 'text', text: texts[at]! } satisfies ChatTextPart;
    out[item.message] = { ...message, content };
  });
  return { messages: out, files: found.length };
}

async function fileText(item: Found, extractor: FileTextExtractor, accountId: string): Promise<string> {
  const { bytes, mimeType } = decodeFileData(item);
  const name = item.file.filename?.trim() || 'attachment';
  let text: string;
  try {
    ({ text } = await extractor.extract(accountId, bytes));
  } catch (error) {
    // The text parser's refusals (unsupported type, damaged, encrypted) name this part and the type it was sent as.
    if (error instanceof ValidationError) {
      const sentAs = mimeType ? ` (sent as ${clip(mimeType, 100)})` : '';
      throw partError(item, ['file_data'], `${clip(name, 255)}${sentAs}: ${error.message}`);
    }
    throw error;
  }
  return `--- ${name} ---\n${text}\n--- end of ${name} ---`;
}

function decodeFileData(item: Found): { bytes: Uint8Array; mimeType: string } {
  const data = item.file.file_data ?? '';
  const header = DATA_URL.exec(data);
  if (!header || !/;base64$/i.test(header[2] ?? ''))
    throw partError(item, ['file_data'], 'Must be a base64 data URL: data:<mime type>;base64,<data>');
  const body = data.slice(header[0].length).replace(/\s+/g, '');
  if (body.length === 0 || body.length % 4 === 1 || !BASE64.test(body))
    throw partError(item, ['file_data'], 'The data URL is not valid base64');
  return { bytes: Buffer.from(body, 'base64'), mimeType: header[1] ?? '' };
}

function partError(item: Found, field: readonly string[], message: string): ValidationError {
  const path = ['messages', item.message, 'content', item.part, 'file', ...field];
  return new ValidationError(`Invalid request: ${path.join('.')}: ${message}`, [{ path, message }]);
}
