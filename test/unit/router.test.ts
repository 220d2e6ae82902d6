import { describe, expect, it } from 'vitest';
import { Router, type Route } from '../../rest/router.ts';

const route = (method: Route['method'], path: string): Route => ({
  method,
  path,
  access: 'account',
  doc: { summary: path },
  handler: () => ({ status: 204, headers: {}, body: '' }),
});
const router = new Router([
  route('POST', '/chat/completions'),
  route('POST', '/crypto/rpc/:network'),
  route('GET', '/crypto/rpc/networks'),
]);
const match = (method: string, path: string) => {
  const found = router.match(method, path);
  return found && ('allowed' in found ? found : { path: found.route.path, params: found.params });
};

describe('Router (the REST table the pipeline serves)', () => {
  it('should match the exact path, with or without a trailing slash', () => {
    for (const path of ['/chat/completions', '/chat/completions/']) {
      expect(match('POST', path)).toEqual({ path: '/chat/completions', params: {} });
    }
  });

  it('should take a parameter segment, decoded, and prefer a literal segment', () => {
    expect(match('POST', '/crypto/rpc/base%2Dsepolia')).toEqual({
      path: '/crypto/rpc/:network',
      params: { network: 'base-sepolia' },
    });
    expect(match('POST', '/crypto/rpc/%E0%A4%A')).toMatchObject({ params: { network: '%E0%A4%A' } });
    expect(match('GET', '/crypto/rpc/networks')).toEqual({ path: '/crypto/rpc/networks', params: {} });
  });

  it('should list the allowed methods for a known path, and match nothing else', () => {
    expect(match('GET', '/chat/completions')).toEqual({ allowed: ['POST'] });
    for (const path of ['/chat/completionsX', '/chat', '/crypto/rpc', '/crypto/rpc/a/b']) {
      expect(match('POST', path)).toBeUndefined();
    }
  });
});
