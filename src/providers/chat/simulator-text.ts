import { createHash } from 'node:crypto';

/*
 * The simulator's words: short, plausible English built from templates and the topic of the conversation, so
 * a development reply reads like an answer (not lorem ipsum) and is the same for the same input and seed.
 */

/** A small seeded PRNG (mulberry32): the same seed gives the same sequence on every machine. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** From a string (a hash of the request) and a salt (the choice index). */
  static from(text: string, salt = 0): Rng {
    const digest = createHash('sha256').update(text).update(`#${salt}`).digest();
    return new Rng(digest.readUInt32LE(0));
  }

  /** [0, 1) */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }
}

const STOP_WORDS = new Set(
  'about above after again against also because been before being below between both could does doing down during each from further have having here hers herself himself into itself just more most much myself once only other ought ours over same should some such than that their theirs them themselves then there these they this those through under until very want were what when where which while will with would your yours yourself please tell explain describe write give show help know like make need thanks thank hello could really think better best good great using get getting make making train work works working learn learning start find keep improve understand difference different ways thing things something anything quick quickly simple easy many every today going doing done kind sort'.split(
    ' ',
  ),
);

/** Up to three topic words of the text (longer, non-trivial words, in order of appearance). */
export function topicWords(text: string): string[] {
  const words = text.toLowerCase().match(/[a-z][a-z'-]{3,}/g) ?? [];
  const seen: string[] = [];
  for (const word of words) {
    const clean = word.replace(/'s$/, '').replace(/^-+|-+$/g, '');
    if (clean.length < 4 || STOP_WORDS.has(clean) || seen.includes(clean)) continue;
    seen.push(clean);
    if (seen.length === 3) break;
  }
  return seen;
}

const OPENERS = [
  'Here is a short answer about {topic}.',
  'Good question about {topic}.',
  'Sure, I can help with {topic}.',
  'Let me walk through {topic} step by step.',
  'Happy to explain {topic}.',
];
const BODY = [
  'The key idea with {a} is that the basics should be clear before the details.',
  'A common approach is to start small, check the results, and adjust as you go.',
  'In practice, {a} and {b} are closely related, so it helps to look at them together.',
  'Most people find that a simple, consistent routine beats a complicated plan.',
  'If you need more detail on {b}, it is worth comparing a few reliable sources.',
  'One thing to watch out for is assuming that what worked once will always work.',
  'It also helps to write down what you expect before you try something new.',
  'The trade-off is usually between speed and accuracy, and the right balance depends on your goal.',
  'A good first step is to define what success with {a} looks like for you.',
  'Small, measurable changes make it much easier to see what is actually helping.',
  'When it comes to {a}, breaking the problem into smaller parts usually makes it manageable.',
  'Experience matters here: the second attempt is almost always easier than the first.',
];
const CLOSERS = [
  'I hope this helps; let me know if you want more detail on {a}.',
  'Feel free to ask a follow-up question.',
  'In short: keep it simple, test your assumptions, and iterate.',
  'Let me know if you would like an example.',
];
const GREETINGS = [
  'Hello! How can I help you today?',
  'Hi there! What would you like to talk about?',
  'Hello! Ask me anything and I will do my best to help.',
];

function fill(template: string, words: readonly string[]): string {
  const topic =
    words.length === 0
      ? 'your question'
      : words.length === 1
        ? words[0]
        : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
  return template
    .replaceAll('{topic}', topic as string)
    .replaceAll('{a}', words[0] ?? 'this')
    .replaceAll('{b}', words[1] ?? words[0] ?? 'the details');
}

/** A reply of about `targetWords` words to the last user text. */
export function replyText(rng: Rng, userText: string, targetWords: number): string {
  const words = topicWords(userText);
  if (words.length === 0 && userText.trim().length < 20) return rng.pick(GREETINGS);
  const sentences = [fill(rng.pick(OPENERS), words)];
  // Sentences naming two topics only when there are two.
  const body = BODY.filter((sentence) => words.length >= 2 || !sentence.includes('{b}'));
  let count = sentences[0]?.split(' ').length ?? 0;
  while (count < targetWords && body.length > 0) {
    const [sentence] = body.splice(rng.int(0, body.length - 1), 1);
    const filled = fill(sentence as string, words);
    sentences.push(filled);
    count += filled.split(' ').length;
  }
  sentences.push(fill(rng.pick(CLOSERS), words));
  // Two paragraphs when it is long enough to need them.
  if (sentences.length > 5) {
    const middle = Math.ceil(sentences.length / 2);
    return `${sentences.slice(0, middle).join(' ')}\n\n${sentences.slice(middle).join(' ')}`;
  }
  return sentences.join(' ');
}

/** A synthetic reasoning trace for reasoning models. */
export function reasoningText(rng: Rng, userText: string): string {
  const words = topicWords(userText);
  const parts = [
    fill('The user is asking about {topic}.', words),
    rng.pick([
      'I should explain the main idea first, then give a practical tip.',
      'A short, clear answer with one example should be enough.',
      'Let me think about what matters most here.',
    ]),
    fill(
      rng.pick([
        'The important part is {a}, and how it relates to {b}.',
        'I need to keep {a} in focus and avoid unnecessary detail.',
        'It is worth mentioning a common mistake with {a}.',
      ]),
      words,
    ),
    'I will keep the answer friendly and concise.',
  ];
  return parts.join(' ');
}

/** The reply after a tool result: a sentence that reports it. */
export function toolResultText(toolName: string | undefined, result: string): string {
  const flat = result.replace(/\s+/g, ' ').trim();
  const excerpt = flat.length > 160 ? `${flat.slice(0, 157)}...` : flat;
  const source = toolName ? `the ${toolName} tool` : 'the tool';
  return excerpt
    ? `According to ${source}, the result is: ${excerpt}. Let me know if you need anything else.`
    : `The call to ${source} returned nothing. Would you like me to try something else?`;
}

/** Words for generated JSON strings, picked by property name when it says what it holds. */
const NAMED_VALUES: Record<string, readonly string[]> = {
  name: ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Katherine Johnson'],
  city: ['Lisbon', 'Montreal', 'Kyoto', 'Nairobi'],
  country: ['Portugal', 'Canada', 'Japan', 'Kenya'],
  color: ['blue', 'green', 'amber', 'violet'],
  title: ['A practical guide', 'Notes on simple systems', 'Getting started'],
  language: ['English', 'French', 'Spanish'],
  email: ['ada@example.com', 'grace@example.org'],
  url: ['https://example.com/articles/1', 'https://example.org/guide'],
};
const GENERIC_WORDS = [
  'clear',
  'simple',
  'steady',
  'bright',
  'useful',
  'careful',
  'quick',
  'balanced',
  'practical',
  'quiet',
];
const NOUNS = ['plan', 'example', 'summary', 'answer', 'result', 'approach', 'idea', 'note', 'step', 'option'];

export function stringFor(rng: Rng, propertyName: string | undefined, topic: readonly string[]): string {
  const key = (propertyName ?? '').toLowerCase();
  for (const [name, values] of Object.entries(NAMED_VALUES)) if (key.includes(name)) return rng.pick(values);
  if (key.includes('description') || key.includes('summary') || key.includes('reason') || key.includes('explanation')) {
    return fill(
      rng.pick(['A short note about {a}.', 'This covers the basics of {a}.', 'A simple explanation of {topic}.']),
      topic,
    );
  }
  return `${rng.pick(GENERIC_WORDS)} ${topic.length > 0 && rng.chance(0.5) ? rng.pick(topic) : rng.pick(NOUNS)}`;
}
