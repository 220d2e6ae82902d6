import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { KNOWN_NETWORKS, familyOfSlug } from '../../src/crypto-rpc/chains.ts';
import { BUCKET_MS, MemoryCreditWindow } from '../../src/crypto-rpc/credit-window.ts';
import {
  chargedCredits,
  costHeaderValue,
  costOfCredits,
  maxCredits,
  parsePricePerCredit,
} from '../../src/crypto-rpc/credits.ts';
import { classifyMethod } from '../../src/crypto-rpc/methods.ts';
import { buildRpcSetup } from '../../src/crypto-rpc/networks.ts';
import { analyzeResponse } from '../../src/crypto-rpc/rpc-response.ts';
import { parseRpcRequest } from '../../src/crypto-rpc/rpc.inputs.ts';
import { UpstreamError, ValidationError } from '../../src/errors.ts';
import { OperatorConfigError, parseOperatorConfig } from '../../src/operator-config/load.ts';
import { UpstreamFailure, type JsonRpcEngine } from '../../src/providers/json-rpc/json-rpc-engine.ts';
import { JsonRpcUpstreamSet } from '../../src/providers/json-rpc/upstream-set.ts';

const PRICE = parsePricePerCredit('0.000000625');
const bytes = (text: string) => new TextEncoder().encode(text);
const text = (body: Uint8Array) => new TextDecoder().decode(body);

describe('crypto RPC allowlist and tiers', () => {
  it.each([
    ['ethereum', 'eth_call', 'standard'],
    ['ethereum', 'eth_sendRawTransaction', 'standard'],
    ['ethereum', 'eth_sendUserOperation', 'standard'],
    ['ethereum', 'web3_clientVersion', 'standard'],
    ['ethereum', 'debug_traceTransaction', 'advanced'],
    ['ethereum', 'trace_block', 'advanced'],
    ['ethereum', 'txpool_status', 'advanced'],
    ['ethereum', 'trace_replayBlockTransactions', 'large'],
    ['ethereum', 'txpool_content', 'large'],
    ['polygon', 'bor_getAuthor', 'standard'],
    ['arbitrum', 'arbtrace_call', 'advanced'],
    ['arbitrum', 'arbtrace_replayTransaction', 'large'],
    ['base', 'optimism_syncStatus', 'standard'],
    ['linea', 'linea_estimateGas', 'standard'],
    ['zksync', 'zks_getBlockDetails', 'standard'],
    ['zksync', 'eth_call', 'standard'],
    ['starknet', 'starknet_call', 'standard'],
    ['starknet', 'starknet_traceTransaction', 'advanced'],
    ['starknet', 'starknet_traceBlockTransactions', 'large'],
  ] as const)('%s %s → %s', (family, method, tier) => {
    expect(classifyMethod(family, method)).toEqual({ allowed: true, tier });
  });

  it.each([
    ['ethereum', 'eth_subscribe', /HTTP-only/],
    ['ethereum', 'eth_newPendingTransactionFilter', /use eth_getLogs/],
    ['ethereum', 'eth_sign', /hold no keys/],
    ['ethereum', 'eth_hashrate', /do not mine/],
    ['ethereum', 'zks_getBlockDetails', /zksync networks only/],
    ['polygon', 'arbtrace_block', /arbitrum networks only/],
    ['starknet', 'eth_call', /starknet_/],
    ['starknet', 'starknet_subscribeNewHeads', /HTTP-only/],
    ['ethereum', 'miner_start', /not allowlisted/],
    ['ethereum', 'eth call', /not a method name/],
  ] as const)('%s %s is refused', (family, method, reason) => {
    const verdict = classifyMethod(family, method);
    expect(verdict.allowed).toBe(false);
    if (!verdict.allowed) expect(verdict.reason).toMatch(reason);
  });

  it('should know the 23 contract networks and their families', () => {
    expect(KNOWN_NETWORKS).toHaveLength(23);
    expect(new Set(KNOWN_NETWORKS.map(familyOfSlug)).size).toBe(11);
  });
});

describe('crypto RPC credits and cost', () => {
  it.each([
    [20, '0.00001250', 12_500n],
    [40, '0.00002500', 25_000n],
    [80, '0.00005000', 50_000n],
    [30, '0.00001875', 18_750n],
    [25, '0.00001563', 15_625n],
  ])('%i credits cost %s USD (exactly %i nano-USD)', (credits, header, nano) => {
    expect(costOfCredits(credits, PRICE)).toBe(nano);
    expect(costHeaderValue(costOfCredits(credits, PRICE))).toBe(header);
  });

  it('should bill errors at 5 and hold the most a batch can cost', () => {
    const items = [{ tier: 'standard' }, { tier: 'advanced' }, { tier: 'large' }] as const;
    expect(maxCredits(30, items)).toBe(30 + 60 + 120);
    expect(chargedCredits(30, items, [false, true, false])).toBe(30 + 5 + 120);
    expect(
      chargedCredits(
        20,
        [1, 2, 3, 4, 5].map(() => ({ tier: 'standard' as const })),
        [true, true, true, true, true],
      ),
    ).toBe(25);
  });

  it('should round a price finer than a nano up, never down', () => {
    expect(costOfCredits(1, parsePricePerCredit('0.0000000001'))).toBe(1n);
    expect(costOfCredits(3, parsePricePerCredit('0.0000007'))).toBe(2_100n);
  });
});

describe('crypto RPC request validation', () => {
  it('should rebuild items from their four fields for forwarding', () => {
    const parsed = parseRpcRequest('ethereum', [
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId', extra: 'dropped' },
      { jsonrpc: '2.0', id: 'b', method: 'eth_getBalance', params: ['0x0', 'latest'] },
    ]);
    expect(parsed.batch).toBe(true);
    expect(parsed.items.map((item) => [item.id, item.tier])).toEqual([
      [1, 'standard'],
      ['b', 'standard'],
    ]);
    expect(parsed.forwardBody).toBe(
      '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":"b","method":"eth_getBalance","params":["0x0","latest"]}]',
    );
  });

  it('should refuse a duplicated key smuggling a second method (the last one is what is checked and sent)', () => {
    expect(() =>
      parseRpcRequest('ethereum', JSON.parse('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","method":"eth_sign"}')),
    ).toThrow(/eth_sign/);
    const parsed = parseRpcRequest(
      'ethereum',
      JSON.parse('{"jsonrpc":"2.0","id":1,"method":"eth_sign","method":"eth_chainId"}'),
    );
    expect(parsed.forwardBody).toBe('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
  });

  it('should report every bad item with its path', () => {
    try {
      parseRpcRequest('ethereum', [
        null,
        { jsonrpc: '1.0', id: 1, method: 'eth_chainId' },
        { jsonrpc: '2.0', id: {}, method: 'eth_chainId' },
      ]);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([[0], [1, 'jsonrpc'], [2, 'id']]);
      expect((error as ValidationError).message).toBe(
        'Invalid JSON-RPC request: [0]: Each request must be a JSON object',
      );
    }
  });
});

describe('crypto RPC response analysis', () => {
  const items = parseRpcRequest('ethereum', [
    { jsonrpc: '2.0', id: 1, method: 'eth_chainId' },
    { jsonrpc: '2.0', id: '1', method: 'eth_chainId' },
  ]).items;

  it('should keep an in-order batch as it is and tell numeric from string ids', () => {
    const body = bytes(
      '[{"jsonrpc":"2.0","id":1,"result":"0x1"},{"jsonrpc":"2.0","id":"1","error":{"code":-1,"message":"x"}}]',
    );
    const analysis = analyzeResponse(items, true, body);
    expect(analysis).toMatchObject({ ok: true, errored: [false, true], answered: [true, true] });
    if (analysis.ok) expect(analysis.body).toBe(body);
  });

  it('should bill every item as an error when the node refuses a whole batch with one error object', () => {
    expect(
      analyzeResponse(
        items,
        true,
        bytes('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch too large"}}'),
      ),
    ).toMatchObject({ ok: true, errored: [true, true], answered: [false, false] });
  });

  it('should reject what is not JSON-RPC', () => {
    expect(analyzeResponse(items, true, bytes('<html>'))).toMatchObject({ ok: false });
    expect(analyzeResponse(items, true, bytes('[1, 2]'))).toMatchObject({ ok: false });
    expect(analyzeResponse(items.slice(0, 1), false, bytes('{"jsonrpc":"2.0"}'))).toMatchObject({ ok: false });
    expect(analyzeResponse(items.slice(0, 1), false, bytes('{"jsonrpc":"2.0","id":1,"result":null}'))).toMatchObject({
      ok: true,
      errored: [false],
    });
  });

  it('should reorder and fill in', () => {
    const analysis = analyzeResponse(items, true, bytes('[{"jsonrpc":"2.0","id":"1","result":"0xb"}]'));
    expect(analysis.ok && JSON.parse(text(analysis.body))).toEqual([
      { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'The node returned no response for this request' } },
      { jsonrpc: '2.0', id: '1', result: '0xb' },
    ]);
  });
});

describe('crypto RPC credits window (rolling 24 h, in memory)', () => {
  it('should admit up to the limit, refuse past it without counting, give back, and let old buckets slide out', async () => {
    const window = new MemoryCreditWindow();
    const start = 1_000 * BUCKET_MS; // the start of an hour
    expect(await window.tryAdd('a', 60, 100, start)).toMatchObject({ admitted: true, used: 0 });
    const refused = await window.tryAdd('a', 50, 100, start + 1);
    expect(refused).toMatchObject({ admitted: false, used: 60, nextShiftMs: start + BUCKET_MS });
    expect(await window.tryAdd('a', 40, 100, start + 2)).toMatchObject({ admitted: true, used: 60 });
    await window.remove('a', 1_000, 30);
    expect(await window.tryAdd('a', 30, 100, start + 3)).toMatchObject({ admitted: true, used: 70 });
    expect(await window.tryAdd('b', 100, 100, start)).toMatchObject({ admitted: true });
    // 24 h later the first bucket counts by the share still inside the window (half of it, half an hour in).
    expect(await window.tryAdd('a', 0, 100, start + 24 * BUCKET_MS + BUCKET_MS / 2)).toMatchObject({ used: 50 });
    expect(await window.tryAdd('a', 0, 100, start + 25 * BUCKET_MS)).toMatchObject({ used: 0 });
  });
});

describe('crypto RPC configuration', () => {
  it('should read RPC_UPSTREAM_<SLUG> shortcuts and refuse bad ones, naming the variable', () => {
    const config = loadConfig({
      RPC_UPSTREAM_ETHEREUM_SEPOLIA: 'http://127.0.0.1:8545, https://backup.example/rpc',
      RPC_UPSTREAM_ZKSYNC_MAINNET: '',
    });
    expect(config.rpc.upstreams).toEqual({
      'ethereum-sepolia': ['http://127.0.0.1:8545', 'https://backup.example/rpc'],
    });
    expect(() => loadConfig({ RPC_UPSTREAM_SOLANA_MAINNET: 'http://x' })).toThrow(
      /RPC_UPSTREAM_SOLANA_MAINNET.*chain family/,
    );
    expect(() => loadConfig({ RPC_UPSTREAM_BASE_SEPOLIA: 'ws://x' })).toThrow(ConfigError);
    expect(() => loadConfig({ LAGOON_RPC_PRICE_PER_CREDIT_USD: '1e-6' })).toThrow(/LAGOON_RPC_PRICE_PER_CREDIT_USD/);
  });

  it('should validate the operator file rpc section and cross-check its providers', () => {
    const issues = (raw: unknown) => {
      try {
        parseOperatorConfig(raw, 'op.yaml');
        return [];
      } catch (error) {
        if (error instanceof OperatorConfigError) return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
        throw error;
      }
    };
    const providers = [{ id: 'node-a', type: 'json-rpc', baseUrl: 'http://127.0.0.1:8545' }];
    expect(
      issues({
        providers,
        rpc: {
          pricePerCreditUsd: 0.0000007,
          networks: {
            'ethereum-sepolia': { upstreams: ['node-a', 'http://x:1'] },
            'my-devnet': { upstreams: 'node-a', family: 'base' },
          },
        },
      }),
    ).toEqual([]);
    expect(
      issues({
        providers,
        rpc: {
          networks: { 'devnet-local': { upstreams: 'node-a' }, 'base-sepolia': { upstreams: ['nope', 'simulator'] } },
        },
      }),
    ).toEqual([
      expect.stringMatching(/^rpc\.networks\["devnet-local"\]\.family: .*set family/),
      'rpc.networks["base-sepolia"].upstreams[0]: unknown provider "nope" (json-rpc providers: node-a)',
      'rpc.networks["base-sepolia"].upstreams[1]: provider "simulator" has type simulator; a network needs a json-rpc provider or a URL',
    ]);
    expect(issues({ rpc: { networks: { Bad_Slug: { upstreams: 'http://x' } } } })[0]).toMatch(/network slug/);
    expect(issues({ rpc: { networks: { 'base-sepolia': { upstreams: 'ftp://x' } } } })[0]).toMatch(
      /http\(s\) node URL/,
    );
  });

  it('should build networks: the file wins over env for a slug, price from the file, then env, then the default', async () => {
    const setup = buildRpcSetup({
      providers: [{ id: 'node-a', type: 'json-rpc', baseUrl: 'http://127.0.0.1:1', apiKey: 'k' }],
      rpc: {
        networks: {
          'zksync-sepolia': { upstreams: ['node-a'] },
          'ethereum-sepolia': { upstreams: ['http://127.0.0.1:2'], baseCredits: 25 },
        },
        caps: { staff: { creditsPer24h: 5 } },
      },
      env: {
        upstreams: { 'ethereum-sepolia': ['http://127.0.0.1:3'], 'starknet-mainnet': ['http://127.0.0.1:4'] },
        pricePerCreditUsd: '0.000001',
      },
    });
    expect(
      [...setup.networks.values()].map((n) => [
        n.slug,
        n.family,
        n.baseCredits,
        n.upstreams.upstreams.map((u) => u.id),
      ]),
    ).toEqual([
      ['zksync-sepolia', 'zksync', 30, ['node-a']],
      ['ethereum-sepolia', 'ethereum', 25, ['ethereum-sepolia#1']],
      ['starknet-mainnet', 'starknet', 20, ['env:starknet-mainnet#1']],
    ]);
    expect(setup.pricePerCreditUsd).toBe('0.000001');
    expect(setup.caps).toEqual({
      standard: { requestsPerMinute: 100, creditsPer24h: 10_000_000 },
      staff: { requestsPerMinute: 1000, creditsPer24h: 5 },
    });
    expect(buildRpcSetup({ providers: [], rpc: undefined, env: undefined }).pricePerCreditUsd).toBe('0.000000625');
    await Promise.all([...setup.networks.values()].map((n) => n.upstreams.close()));
  });
});

describe('JSON-RPC upstream set: failover and cooldown', () => {
  const fake = (id: string, answers: (() => Promise<{ status: number; body: Uint8Array<ArrayBuffer> }>)[]) => {
    const calls: string[] = [];
    const upstream: JsonRpcEngine = {
      id,
      post: () => {
        calls.push(id);
        const next = answers.shift() ?? (() => Promise.resolve({ status: 200, body: bytes('ok') }));
        return next();
      },
      close: () => Promise.resolve(),
    };
    return { upstream, calls };
  };
  const accept = ({ body }: { body: Uint8Array }) =>
    text(body) === 'ok' ? { ok: true as const, value: 'ok' } : { ok: false as const, reason: 'not ok' };

  it('should retry a dropped kept-alive connection once on the same node, then cool a failing node down', async () => {
    let now = 0;
    const a = fake('a', [
      () => Promise.reject(new UpstreamFailure('reset', 'closed')),
      () => Promise.reject(new UpstreamFailure('connection', 'refused')),
    ]);
    const b = fake('b', []);
    const set = new JsonRpcUpstreamSet('net', [a.upstream, b.upstream], 1000, () => now);
    const failures: string[] = [];
    expect(await set.send('{}', { accept, onFailure: (id, reason) => failures.push(`${id}: ${reason}`) })).toEqual({
      value: 'ok',
      upstreamId: 'b',
    });
    expect([...a.calls, ...b.calls]).toEqual(['a', 'a', 'b']);
    expect(failures).toEqual(['a: refused']);
    await set.send('{}', { accept });
    expect(a.calls).toHaveLength(2); // cooling: b first
    now = 1001;
    await set.send('{}', { accept });
    expect(a.calls).toHaveLength(3);
  });

  it('should answer 504 when every node timed out and 502 otherwise', async () => {
    const timeout = () => Promise.reject(new UpstreamFailure('timeout', 'slow'));
    const slow = new JsonRpcUpstreamSet('slow-net', [fake('a', [timeout]).upstream, fake('b', [timeout]).upstream], 0);
    await expect(slow.send('{}', { accept })).rejects.toMatchObject({ code: 'REQUEST_TIMEOUT' });
    const mixed = new JsonRpcUpstreamSet(
      'mixed-net',
      [fake('a', [timeout]).upstream, fake('b', [() => Promise.resolve({ status: 429, body: bytes('') })]).upstream],
      0,
    );
    const error = await mixed.send('{}', { accept }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: 'The mixed-net nodes failed to answer (last: the node answered HTTP 429)',
    });
  });
});
