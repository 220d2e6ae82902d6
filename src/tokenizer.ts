import { createRequire } from 'node:module';
import type * as O200kModule from 'gpt-tokenizer/encoding/o200k_base';

/*
 * The one tokenizer Lagoon counts with: OpenAI's o200k_base (GPT-4o and later), from gpt-tokenizer. Text from
 * users and documents may contain special-token lookalikes ("<|endoftext|>"); they are ordinary text here (the
 * library throws on them by default).
 *
 * Its vocabulary takes ~40 MB of memory and a few hundred milliseconds to load, so it is loaded on the first count
 * rather than at start: a process that never counts (a server without chat traffic yet, an operator CLI command)
 * does without it.
 */

type O200k = typeof O200kModule;

const require = createRequire(import.meta.url);
let o200k: O200k | undefined;
const tokenizer = (): O200k => (o200k ??= require('gpt-tokenizer/encoding/o200k_base') as O200k);

const ORDINARY = { disallowedSpecial: new Set<string>() };

export const countTextTokens = (text: string): number => (text === '' ? 0 : tokenizer().countTokens(text, ORDINARY));
export const encodeText = (text: string): number[] => tokenizer().encode(text, ORDINARY);
export const decodeTokens = (tokens: readonly number[]): string => tokenizer().decode(tokens);
