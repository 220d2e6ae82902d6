import type {
  UpstreamChatCompletion,
  UpstreamChoice,
  UpstreamChunkChoice,
  UpstreamToolCallDelta,
} from '../providers/chat/chat-engine.ts';
import { countTextTokens, takeTokens } from '../tokenizer.ts';

/*
 * max_completion_tokens / max_tokens held against an upstream that ignores them: what goes past the limit (in
 * o200k_base tokens of reasoning, content and tool calls, per choice) is cut off with finish_reason "length",
 * and the call is billed for at most the limit, so a usage line's units × price is its amount (the hold covers
 * exactly the limit). A token is at least one UTF-8 byte, so text is only tokenized once a choice has more
 * bytes than the limit: most answers are never counted here.
 */

interface ChoiceState {
  /** UTF-8 bytes so far, while they are few enough that the tokens cannot pass the limit. */
  bytes: number;
  /** The texts so far, until they are counted. */
  texts: string[];
  /** Tokens so far, once counted. */
  tokens: number | undefined;
  ended: boolean;
}

/** Hands out a budget of tokens, cutting each text in turn; once one is cut, the rest are dropped. */
class Budget {
  cut = false;
  used = 0;
  constructor(private left: number) {}

  take(text: string | undefined): string | undefined {
    if (text === undefined || this.cut) return undefined;
    const taken = takeTokens(text, this.left);
    this.left -= taken.tokens;
    this.used += taken.tokens;
    this.cut = taken.cut;
    return taken.text;
  }
}

const deltaTexts = (delta: UpstreamChunkChoice['delta']): string[] => {
  const texts: string[] = [];
  if (delta.reasoning_content) texts.push(delta.reasoning_content);
  if (delta.content) texts.push(delta.content);
  for (const call of delta.tool_calls ?? []) texts.push((call.function?.name ?? '') + (call.function?.arguments ?? ''));
  return texts;
};

const byteLength = (texts: readonly string[]): number => texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);

/** The limit on a stream: applied to each choice of each chunk as it arrives. */
export class StreamOutputLimit {
  private readonly states = new Map<number, ChoiceState>();
  private endedChoices = 0;

  constructor(
    private readonly maxTokens: number,
    private readonly choices: number,
  ) {}

  /** Every choice reached the limit: nothing more will be forwarded. */
  get reached(): boolean {
    return this.endedChoices >= this.choices;
  }

  /** The choice as it may be forwarded: whole, cut with finish_reason "length", or undefined once it was cut. */
  apply(choice: UpstreamChunkChoice): UpstreamChunkChoice | undefined {
    const state = this.stateOf(choice.index);
    if (state.ended) return undefined;
    const texts = deltaTexts(choice.delta);
    if (texts.length === 0) return choice;
    if (state.tokens === undefined) {
      state.bytes += byteLength(texts);
      state.texts.push(...texts);
      if (state.bytes <= this.maxTokens) return choice;
      // Counted from here on: what came before this delta at once, then delta by delta.
      state.texts.length -= texts.length;
      state.tokens = countTextTokens(state.texts.join(''));
      state.texts = [];
    }
    const budget = new Budget(this.maxTokens - state.tokens);
    const { delta } = choice;
    const reasoning = budget.take(delta.reasoning_content);
    const content = budget.take(delta.content);
    const calls: UpstreamToolCallDelta[] = [];
    for (const call of delta.tool_calls ?? []) {
      if (budget.cut) break;
      const name = budget.take(call.function?.name);
      const args = budget.take(call.function?.arguments);
      calls.push({
        ...call,
        ...(call.function && {
          function: { ...(name !== undefined && { name }), ...(args !== undefined && { arguments: args }) },
        }),
      });
    }
    state.tokens += budget.used;
    if (!budget.cut) return choice;
    state.ended = true;
    this.endedChoices += 1;
    const { stop_reason: _stop, ...rest } = choice;
    return {
      ...rest,
      delta: {
        ...(delta.role !== undefined && { role: delta.role }),
        ...(reasoning !== undefined && { reasoning_content: reasoning }),
        ...(content !== undefined && { content }),
        ...(calls.length > 0 && { tool_calls: calls }),
      },
      finish_reason: 'length',
    };
  }

  /**
   * Completion tokens to bill: when a choice was cut, what was forwarded (each choice at most the limit);
   * otherwise `reported` (the upstream's usage or a count of the text), at most the limit for every choice.
   */
  billable(reported: number): number {
    if (this.endedChoices === 0) return Math.min(reported, this.maxTokens * this.choices);
    let tokens = 0;
    for (const state of this.states.values())
      tokens += Math.min(this.maxTokens, state.tokens ?? countTextTokens(state.texts.join('')));
    return tokens;
  }

  private stateOf(index: number): ChoiceState {
    let state = this.states.get(index);
    if (!state) this.states.set(index, (state = { bytes: 0, texts: [], tokens: undefined, ended: false }));
    return state;
  }
}

/**
 * The limit on a finished completion: each choice cut to `maxTokens` (reasoning first, then content; a tool call
 * cut short is dropped, as it could not be used), and the completion tokens to bill.
 */
export function limitCompletion(
  completion: UpstreamChatCompletion,
  maxTokens: number,
  reported: number,
): { completion: UpstreamChatCompletion; completionTokens: number } {
  let anyCut = false;
  /** Per choice: its tokens as counted here, or its texts when they were too short to need counting. */
  const counted: (number | string)[] = [];
  const limited = completion.choices.map((choice): UpstreamChoice => {
    const { message } = choice;
    const calls = message.tool_calls.map((call) => call.function.name + call.function.arguments);
    const texts = [message.reasoning_content ?? '', message.content ?? '', ...calls];
    if (byteLength(texts) <= maxTokens) {
      counted.push(texts.join(''));
      return choice;
    }
    const budget = new Budget(maxTokens);
    const reasoning = budget.take(message.reasoning_content ?? undefined);
    const content = budget.take(message.content ?? undefined);
    for (const call of calls) budget.take(call);
    counted.push(budget.used);
    if (!budget.cut) return choice;
    anyCut = true;
    return {
      ...choice,
      message: {
        ...message,
        reasoning_content: message.reasoning_content === null ? null : (reasoning ?? ''),
        content: message.content === null ? null : (content ?? ''),
        tool_calls: [],
      },
      finish_reason: 'length',
      stop_reason: null,
    };
  });
  if (!anyCut) return { completion, completionTokens: Math.min(reported, maxTokens * completion.choices.length) };
  const completionTokens = counted.reduce<number>(
    (sum, entry) => sum + (typeof entry === 'number' ? entry : countTextTokens(entry)),
    0,
  );
  return { completion: { ...completion, choices: limited }, completionTokens };
}
