/**
 * Splits inline `<think>…</think>` blocks (DeepSeek-R1, Qwen3 and others served without a reasoning parser) out
 * of the content into reasoning. Streaming-safe: a tag may arrive split across chunks (`<thi` + `nk>`), so a
 * trailing piece that could still become a tag is held back until the next chunk or `flush()`.
 * Whitespace right after a tag (the model's "\n\n") is dropped from the part that follows it.
 */
const OPEN = '<think>';
const CLOSE = '</think>';

export interface SplitText {
  content: string;
  reasoning: string;
}

export class ThinkTagSplitter {
  private inside = false;
  private held = '';
  /** After a tag: drop whitespace until the next visible character. */
  private trimLeading = false;

  push(text: string): SplitText {
    const out: SplitText = { content: '', reasoning: '' };
    let input = this.held + text;
    this.held = '';
    while (input.length > 0) {
      const tag = this.inside ? CLOSE : OPEN;
      const at = input.indexOf(tag);
      if (at >= 0) {
        this.emit(out, input.slice(0, at));
        this.inside = !this.inside;
        this.trimLeading = true;
        input = input.slice(at + tag.length);
        continue;
      }
      const keep = partialTagSuffix(input, tag);
      this.emit(out, input.slice(0, input.length - keep));
      this.held = input.slice(input.length - keep);
      break;
    }
    return out;
  }

  /** The end of the text: whatever was held back was not a tag after all. */
  flush(): SplitText {
    const out: SplitText = { content: '', reasoning: '' };
    this.emit(out, this.held);
    this.held = '';
    return out;
  }

  private emit(out: SplitText, text: string): void {
    let piece = text;
    if (this.trimLeading) {
      piece = piece.replace(/^\s+/, '');
      if (piece.length === 0) return;
      this.trimLeading = false;
    }
    if (this.inside) out.reasoning += piece;
    else out.content += piece;
  }
}

/** The length of the longest end of `text` that is the start of `tag` (it may be completed by the next chunk). */
function partialTagSuffix(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length -= 1) {
    if (tag.startsWith(text.slice(text.length - length))) return length;
  }
  return 0;
}

/** A whole message: `{ content, reasoning }` with surrounding whitespace trimmed; reasoning null when there was none. */
export function splitThinkTags(text: string): { content: string; reasoning: string | null } {
  const splitter = new ThinkTagSplitter();
  const first = splitter.push(text);
  const rest = splitter.flush();
  const reasoning = (first.reasoning + rest.reasoning).trim();
  return { content: (first.content + rest.content).trim(), reasoning: reasoning.length > 0 ? reasoning : null };
}
