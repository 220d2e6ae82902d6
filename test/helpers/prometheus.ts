/** One scrape of `/metrics`, read as a client would: the sum of the samples of a family whose labels match. */
export interface Scrape {
  readonly text: string;
  /** The sum of `name`'s samples carrying every label given (none: all of them). */
  value(name: string, labels?: Record<string, string>): number;
}

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

export function parseScrape(text: string): Scrape {
  const samples = text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .flatMap((line) => {
      const match = SAMPLE.exec(line);
      if (!match) return [];
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(LABEL)].map((m) => [m[1]!, m[2]!]));
      return [{ name: match[1]!, labels, value: Number(match[3]) }];
    });
  return {
    text,
    value: (name, labels = {}) =>
      samples
        .filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
        .reduce((sum, s) => sum + s.value, 0),
  };
}

/** GET /metrics through `fetch` (the app's in-process fetch, or a real one), parsed. */
export async function scrape(get: () => Promise<Response>): Promise<Scrape> {
  const response = await get();
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return parseScrape(await response.text());
}
