import { describe, expect, it } from 'vitest';
import { OperatorConfigError, parseOperatorConfig } from '../../src/operator-config/load.ts';

const providers = [
  { id: 'searx', type: 'searxng', baseUrl: 'http://127.0.0.1:8888' },
  { id: 'brave-api', type: 'brave', apiKey: 'BSA-key' },
];

function issues(raw: unknown): string[] {
  try {
    parseOperatorConfig(raw, 'op.yaml');
  } catch (error) {
    if (error instanceof OperatorConfigError) return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
    throw error;
  }
  throw new Error('expected an OperatorConfigError');
}

describe('operator config: search', () => {
  it('should default to no mapping', () => {
    expect(parseOperatorConfig({}, 'defaults').search).toEqual({});
  });

  it('should read a mapping of one id or of ids in fallback order', () => {
    const config = parseOperatorConfig(
      { providers, search: { brave: 'brave-api', google: ['searx', 'brave-api'] } },
      'op.yaml',
    );
    expect(config.search).toEqual({ brave: ['brave-api'], google: ['searx', 'brave-api'] });
    expect(config.providers.map((p) => p.id)).toEqual(['simulator', 'searx', 'brave-api']);
  });

  it('should name unknown, non-search and repeated providers', () => {
    expect(issues({ providers, search: { brave: 'nope', google: ['searx', 'simulator', 'searx'] } })).toEqual([
      'search.brave: unknown provider "nope" (search providers: searx, brave-api)',
      'search.google[1]: provider "simulator" has type simulator; web search needs a searxng or brave provider',
      'search.google[2]: provider "searx" is listed twice',
    ]);
  });

  it('should refuse unknown identifiers, a brave provider without apiKey and bad searxng options', () => {
    expect(issues({ search: { bing: 'searx' } })).toEqual([expect.stringMatching(/^search: Unrecognized key: "bing"/)]);
    expect(
      issues({
        providers: [
          { id: 'b', type: 'brave' },
          { id: 's', type: 'searxng', baseUrl: 'http://s', options: { engines: { google: 3 }, extra: true } },
        ],
      }),
    ).toEqual([
      'providers[0].apiKey: a brave provider needs apiKey (the Brave Search API subscription token)',
      'providers[1].options.engines.google: Invalid input: expected string, received number',
      'providers[1].options: Unrecognized key: "extra"',
    ]);
  });
});
