import { describe, expect, it } from 'vitest';
import { matchNodeRoute, type NodeRoute } from '../../rest/node-route.ts';

const route = (path: string): NodeRoute => ({
  method: 'POST',
  path,
  label: `POST ${path}`,
  serve: async () => undefined,
});
const routes = [route('/api/v1/chat/completions'), route('/api/v1/crypto/rpc/:network')];
const match = (method: string, target: string) => {
  const found = matchNodeRoute(routes, method, target);
  return found && { path: found.route.path, params: found.params };
};

describe('matchNodeRoute (the hot routes served on Node objects)', () => {
  it('should match the exact path, with a trailing slash or a query string', () => {
    for (const target of [
      '/api/v1/chat/completions',
      '/api/v1/chat/completions/',
      '/api/v1/chat/completions?x=1',
      '/api/v1/chat/completions/?x=1',
    ]) {
      expect(match('POST', target)).toEqual({ path: '/api/v1/chat/completions', params: {} });
    }
  });

  it('should take the last segment as the parameter, decoded', () => {
    expect(match('POST', '/api/v1/crypto/rpc/ethereum-sepolia')).toEqual({
      path: '/api/v1/crypto/rpc/:network',
      params: { network: 'ethereum-sepolia' },
    });
    expect(match('POST', '/api/v1/crypto/rpc/base%2Dsepolia?trace=1')).toEqual({
      path: '/api/v1/crypto/rpc/:network',
      params: { network: 'base-sepolia' },
    });
    expect(match('POST', '/api/v1/crypto/rpc/%E0%A4%A')?.params).toEqual({ network: '%E0%A4%A' });
  });

  it('should leave every other request to the fetch handler', () => {
    for (const [method, target] of [
      ['GET', '/api/v1/chat/completions'],
      ['OPTIONS', '/api/v1/chat/completions'],
      ['POST', '/api/v1/chat/completionsX'],
      ['POST', '/api/v1/chat'],
      ['POST', '/api/v1/crypto/rpc/'],
      ['POST', '/api/v1/crypto/rpc'],
      ['POST', '/api/v1/crypto/rpc/a/b'],
      ['GET', '/api/v1/crypto/rpc/networks'],
      ['POST', '/graphql'],
    ] as const) {
      expect(matchNodeRoute(routes, method, target)).toBeUndefined();
    }
    expect(matchNodeRoute(routes, 'POST', undefined)).toBeUndefined();
  });
});
