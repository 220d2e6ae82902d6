import { countTokens, decode, encode } from 'gpt-tokenizer/encoding/o200k_base';

/*
 * The one tokenizer Lagoon counts with: OpenAI's o200k_base (GPT-4o and later), from gpt-tokenizer. Text from
 * users and documents may contain special-token lookalikes ("<|endoftext|>"); they are ordinary text here (the
 * library throws on them by default).
 */

const ORDINARY = { disallowedSpecial: new Set<string>() };

export const countTextTokens = (text: string): number => (text === '' ? 0 : countTokens(text, ORDINARY));
export const encodeText = (text: string): number[] => encode(text, ORDINARY);
export const decodeTokens = (tokens: readonly number[]): string => decode(tokens);
